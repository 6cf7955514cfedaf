"""The Beam tier: the evaluate job's composite transforms over in-memory inputs.

Each test runs transforms on the in-process FnApiRunner and asserts the exact main output
and, through a recording report, the exact rejects rows.
"""

from __future__ import annotations

import json

import apache_beam as beam
from apache_beam.runners.portability.fn_api_runner import FnApiRunner
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from annotators.evaluate.config import EvalConfig
from pipelines.evaluate import Align, Metrics, ParseGold, ParsePredictions, Score
from tests.beam_report import RecordingReport


def line(record) -> bytes:
    return json.dumps(record, ensure_ascii=False).encode("utf-8")


def reasons(pcoll, label):
    return pcoll | label >> beam.Map(lambda r: (r["stage"], r["input_id"], r["reason"]))


def test_clozet_by_line_never_shifts_after_a_bad_line():
    cfg = EvalConfig(task="clozet", align="line")
    gold = [
        (f"gold.jsonl:{i}", line({"story": "s", "plot0": "a", "plot1": "b", "label": lab}))
        for i, lab in enumerate(["0", "1", "1", "0"], start=1)
    ]
    preds = [
        ("p.jsonl:1", line({"label": "0"})),  # right
        ("p.jsonl:2", b""),  # blank: line 2 missing, line 3 stays line 3
        ("p.jsonl:3", line({"label": 1})),  # right (int vs "1")
        ("p.jsonl:4", line({"label": [1]})),  # wrong type
        ("p.jsonl:5", line({"label": "0"})),
    ]  # past the gold's end
    report = RecordingReport()
    with TestPipeline(runner=FnApiRunner()) as p:
        keyed_preds = p | "P" >> beam.Create(preds) | ParsePredictions(report, cfg)
        golds = p | "G" >> beam.Create(gold) | ParseGold(report, cfg, lines=True)
        pairs = {"gold": golds, "pred": keyed_preds} | Align(report)
        scores = pairs | Score(report, cfg)
        rows = scores | Metrics(cfg) | beam.Map(lambda r: (r["group"], r["metric"], r["value"], r["n"]))
        assert_that(rows, equal_to([("all", "accuracy", 1.0, 2), ("all", "correct", 2.0, 2)]), label="metrics")
        assert_that(
            scores | beam.Map(lambda s: (s.key, s.values["accuracy"])),
            equal_to([("1", 1.0), ("3", 1.0)]),
            label="scores",
        )
        assert_that(
            reasons(report.by_stage["parse_predictions"], "RP"),
            equal_to(
                [("parse_predictions", "p.jsonl:2", "blank_line"), ("parse_predictions", "p.jsonl:4", "bad_field_type")]
            ),
            label="parse_rejects",
        )
        assert_that(
            reasons(report.by_stage["align"], "RA"),
            equal_to(
                [
                    ("align", "gold.jsonl:2", "missing_prediction"),
                    ("align", "gold.jsonl:4", "missing_prediction"),
                    ("align", "p.jsonl:5", "unexpected_prediction"),
                ]
            ),
            label="align_rejects",
        )


def test_table_gold_by_id_with_duplicates_and_unknown_ids():
    cfg = EvalConfig(task="senpos", align="id", split="test")
    rows = [
        ("senpos:0", {"example_id": "b", "split": "test", "story": "", "sentence": "", "label": 2}),
        ("senpos:1", {"example_id": "a", "split": "test", "story": "", "sentence": "", "label": 1}),
        ("senpos:2", {"example_id": "c", "split": "train", "story": "", "sentence": "", "label": 1}),
        ("senpos:3", {"__read_error__": "OSError: broken"}),
    ]
    preds = [
        ("p:1", line({"example_id": "a", "label": 1})),
        ("p:2", line({"example_id": "b", "label": 3})),
        ("p:3", line({"example_id": "b", "label": 2})),
        ("p:4", line({"example_id": "zz", "label": 2})),
        ("p:5", line({"label": 2})),
    ]
    report = RecordingReport()
    with TestPipeline(runner=FnApiRunner()) as p:
        keyed_preds = p | "P" >> beam.Create(preds) | ParsePredictions(report, cfg)
        golds = p | "G" >> beam.Create(rows) | ParseGold(report, cfg, lines=False)
        scores = {"gold": golds, "pred": keyed_preds} | Align(report) | Score(report, cfg)
        assert_that(
            scores | beam.Map(lambda s: (s.example_id, s.prediction_input_id, s.values["accuracy"])),
            equal_to([("a", "p:1", 1.0), ("b", "p:2", 0.0)]),
            label="scores",
        )
        assert_that(
            reasons(report.by_stage["parse_gold"], "RG"),
            equal_to([("parse_gold", "senpos:3", "unreadable_file")]),
            label="gold_rejects",
        )
        assert_that(
            reasons(report.by_stage["parse_predictions"], "RP"),
            equal_to([("parse_predictions", "p:5", "missing_field")]),
            label="pred_rejects",
        )
        assert_that(
            reasons(report.by_stage["align"], "RA"),
            equal_to([("align", "p:3", "duplicate_id"), ("align", "p:4", "unexpected_prediction")]),
            label="align_rejects",
        )


def test_table_gold_by_line_is_numbered_in_example_id_order():
    cfg = EvalConfig(task="plotcom", align="line", split="val")
    rows = [
        (f"t:{i}", {"example_id": eid, "split": "val", "story": "", "plot": plot})
        for i, (eid, plot) in enumerate([("z", "小狗跑了"), ("m", "小猫睡了")])
    ]
    preds = [("p:1", line({"plot": "小猫睡了"})), ("p:2", line({"plot": "小狗跑了"}))]
    report = RecordingReport()
    with TestPipeline(runner=FnApiRunner()) as p:
        keyed_preds = p | "P" >> beam.Create(preds) | ParsePredictions(report, cfg)
        golds = p | "G" >> beam.Create(rows) | ParseGold(report, cfg, lines=False)
        scores = {"gold": golds, "pred": keyed_preds} | Align(report) | Score(report, cfg)
        assert_that(
            scores | beam.Map(lambda s: (s.key, s.example_id, s.values["bleu-1"])),
            equal_to([("1", "m", 1.0), ("2", "z", 1.0)]),
        )


def test_split_validation_takes_the_rows_a_table_calls_val():
    """The LOT tables' files say `validation-*` and their rows `val`: --split validation matched
    no row, and every prediction became unexpected_prediction."""
    from annotators.evaluate.config import EvalConfig
    from annotators.evaluate.steps import parse_gold_row

    row = {"example_id": "e1", "split": "val", "label": "1", "story": "s", "plot0": "a", "plot1": "b"}
    for split in ("val", "validation", "valid", "dev"):
        got = parse_gold_row(("t:1", row), EvalConfig(task="clozet", split=split))
        assert [g.key for g in got] == ["e1"], split
    assert parse_gold_row(("t:1", row), EvalConfig(task="clozet", split="test")) == []
