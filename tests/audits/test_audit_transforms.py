"""Beam tier of the audit jobs: their stages and composite transforms on in-memory inputs."""

from __future__ import annotations

import json

import apache_beam as beam
import pytest
from apache_beam.runners.portability.fn_api_runner import FnApiRunner
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from annotators.audits import overlap as ng
from annotators.audits import steps
from annotators.audits.bias import BiasConfig, BiasItem
from annotators.audits.records import RawRecord
from pipelines.bias import BiasPredictions
from pipelines.engine import REJECTS, Stage
from pipelines.overlap import ScoreOverlap

WS = ng.OverlapConfig(n=3, tokenizer="whitespace")
ROLES = steps.Roles({"t": ("story",)}, {"t": ("text",)}, lot=False)


def _line(record) -> bytes:
    return json.dumps(record, ensure_ascii=False).encode("utf-8")


def _rejects(result):
    return result[REJECTS] | beam.Map(lambda r: (r["stage"], r["input_id"], r["reason"]))


def test_test_rows_become_example_ngrams_and_bad_rows_rejects():
    records = [
        RawRecord("t.jsonl:1", "t", "jsonl", _line({"example_id": "e1", "story": "a b c d"})),
        RawRecord("t.jsonl:2", "t", "jsonl", b"{broken"),
        RawRecord("t.jsonl:3", "t", "jsonl", b"[1]"),
        RawRecord("t.jsonl:4", "t", "jsonl", _line({"example_id": "e4", "story": 7})),
        RawRecord("t.jsonl:5", "t", "jsonl", _line({"story": "x y z"})),
    ]
    with TestPipeline(runner=FnApiRunner()) as p:
        result = p | beam.Create(records) | Stage("test_rows", steps.overlap_row_fn(WS, ROLES, "test"))
        assert_that(
            result["main"],
            equal_to(
                [
                    ng.ExampleGrams("t", "test", "e1", ("a\x1fb\x1fc", "b\x1fc\x1fd"), "t.jsonl:1"),
                    ng.ExampleGrams("t", "test", "t.jsonl:5", ("x\x1fy\x1fz",), "t.jsonl:5"),
                ]
            ),
            label="main",
        )
        assert_that(
            _rejects(result),
            equal_to(
                [
                    ("test_rows", "t.jsonl:2", "malformed_json"),
                    ("test_rows", "t.jsonl:3", "not_an_object"),
                    ("test_rows", "t.jsonl:4", "bad_field_type"),
                ]
            ),
            label="rejects",
        )


def test_reference_rows_keep_only_matched_ngrams_and_records_without_text_are_rejected():
    records = [
        RawRecord("r.txt:1", "t", "text", b"a b c <mask> d q"),
        RawRecord("r.txt:2", "t", "text", b"x y z"),
        RawRecord("r.jsonl:1", "t", "jsonl", _line({"title": "no text field"})),
    ]
    wanted = {"t": frozenset({"b\x1fc\x1fd", "c\x1fd\x1fe"})}
    with TestPipeline(runner=FnApiRunner()) as p:
        sets = beam.pvalue.AsSingleton(p | "Sets" >> beam.Create([wanted]))
        result = (
            p
            | beam.Create(records)
            | Stage("reference_rows", steps.reference_match_fn(WS, ROLES), side_inputs={"test_sets": sets})
        )
        assert_that(
            result["main"],
            equal_to([steps.MatchedGrams("t", ("b\x1fc\x1fd",)), steps.MatchedGrams("t", ())]),
            label="main",
        )
        assert_that(_rejects(result), equal_to([("reference_rows", "r.jsonl:1", "no_text_fields")]), label="rejects")


def test_score_overlap_counts_test_ngrams_found_in_the_reference():
    tests = [
        ng.ExampleGrams("t", "test", "e1", ("a\x1fb\x1fc", "b\x1fc\x1fd", "c\x1fd\x1fe")),
        ng.ExampleGrams("t", "test", "e2", ("x\x1fy\x1fz",)),
        ng.ExampleGrams("u", "test", "e3", ("a\x1fb\x1fc",)),
    ]
    refs = [
        steps.MatchedGrams("t", ("a\x1fb\x1fc", "b\x1fc\x1fd")),
        steps.MatchedGrams("t", ("a\x1fb\x1fc",)),
        steps.MatchedGrams("t", ()),
    ]
    with TestPipeline(runner=FnApiRunner()) as p:
        scored = (p | "Rows" >> beam.Create(tests), p | "Refs" >> beam.Create(refs)) | ScoreOverlap()
        assert_that(
            scored,
            equal_to(
                [
                    {"task": "t", "split": "test", "example_id": "e1", "n": 3, "o": 2, "ratio": 2 / 3},
                    {"task": "t", "split": "test", "example_id": "e2", "n": 1, "o": 0, "ratio": 0.0},
                    {"task": "u", "split": "test", "example_id": "e3", "n": 1, "o": 0, "ratio": 0.0},
                ]
            ),
        )


def test_bias_rows_reject_bad_labels_and_placeholders():
    good = {
        "example_id": "c1",
        "split": "train",
        "story": "他走了。<mask>天黑了。",
        "plot0": "他回家了。",
        "plot1": "他飞走了。",
        "label": "0",
    }
    records = [
        RawRecord("clozet/p:0", "clozet", "parquet", good),
        RawRecord("clozet/p:1", "clozet", "parquet", {**good, "example_id": "c2", "label": "2"}),
        RawRecord("clozet/p:2", "clozet", "parquet", {**good, "example_id": "c3", "story": "无"}),
        RawRecord(
            "senpos/p:0",
            "senpos",
            "parquet",
            {"example_id": "s1", "split": "val", "story": "甲。乙。", "sentence": "丙。", "label": 1},
        ),
    ]
    with TestPipeline(runner=FnApiRunner()) as p:
        result = (
            p | beam.Create(records) | Stage("lot_rows", steps.bias_row_fn(BiasConfig()), setup=steps.bias_resources)
        )
        assert_that(
            result["main"] | beam.Map(lambda i: (i.task, i.example_id, i.gold, i.n_candidates)),
            equal_to([("clozet", "c1", 0, 2)]),
            label="main",
        )
        assert_that(
            _rejects(result),
            equal_to(
                [
                    ("lot_rows", "clozet/p:1", "bad_label"),
                    ("lot_rows", "clozet/p:2", "bad_placeholder"),
                    ("lot_rows", "senpos/p:0", "no_candidates"),
                ]
            ),
            label="rejects",
        )


def test_bias_predictions_score_val_items_with_train_majority():
    train = [BiasItem("clozet", "train", f"t{i}", gold=1, n_candidates=2, seen=(("a",), ("b",))) for i in range(3)]
    val = BiasItem("clozet", "val", "v1", gold=1, n_candidates=2, seen=(("a",), ("b",)), preds=(("length", 0),))
    with TestPipeline(runner=FnApiRunner()) as p:
        rows = p | beam.Create(train + [val]) | BiasPredictions()
        picks = rows | beam.Map(lambda r: (r["example_id"], r["baseline"], r["prediction"], r["credit"]))
        assert_that(
            picks | beam.Filter(lambda t: t[1] != "candidate_only"),
            equal_to([("v1", "random", -1, 0.5), ("v1", "majority", 1, 1.0), ("v1", "length", 0, 0.0)]),
        )


@pytest.mark.parametrize(
    "name,text,expected", [("whitespace", "a  b\tc", ["a", "b", "c"]), ("regex", "It's.", ["It", "'", "s", "."])]
)
def test_audit_tokenizer_names_keep_their_meaning(name, text, expected):
    assert ng.make_tokenizer(name)(text) == expected
