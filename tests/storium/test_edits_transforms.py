"""Beam tier: the edits job's composite transforms over in-memory JSON lines (main and rejects).

Each test builds a TestPipeline on the in-process FnApiRunner, feeds `beam.Create` inputs to
one transform of `pipelines.edits` and asserts its exact outputs with `assert_that`.
"""

from __future__ import annotations

import json

import apache_beam as beam
import spacy
from apache_beam.testing.util import assert_that, equal_to

from annotators.storium.edits import Edit
from annotators.storium.user_metric import UserConfig
from pipelines.edits import ParseEdits, PreservedCounts, ScoreEdits, Summarize
from tests.beam_report import RecordingReport, pipeline


def line(edit_id, generated="Mara ties the rope.", published="Mara ties the rope.", **extra) -> bytes:
    return json.dumps({"id": edit_id, "generated": generated, "published": published, **extra}).encode()


def test_parse_edits_reads_good_lines():
    report = RecordingReport()
    with pipeline() as p:
        edits = p | beam.Create([("a.jsonl:1", line("e1", model="top-k")), ("a.jsonl:2", line(7))]) | ParseEdits(report)
        assert_that(
            edits,
            equal_to(
                [
                    Edit("e1", "Mara ties the rope.", "Mara ties the rope.", "top-k"),
                    Edit("7", "Mara ties the rope.", "Mara ties the rope."),
                ]
            ),
            label="main",
        )
        assert_that(report.rejects(p), equal_to([]), label="rejects")
    assert report.stages == ["edits", "dedupe"]


def test_parse_edits_rejects_bad_lines_with_shared_codes():
    report = RecordingReport()
    lines = [
        ("a.jsonl:1", b"  "),
        ("a.jsonl:2", b'{"id": "x"'),
        ("a.jsonl:3", b"[1]"),
        ("a.jsonl:4", json.dumps({"generated": "g", "published": "p"}).encode()),
        ("a.jsonl:5", line("e5", generated=42)),
        ("a.jsonl:6", line("e6", published=None)),
        ("a.jsonl:7", line("e7")),
    ]
    with pipeline() as p:
        edits = p | beam.Create(lines) | ParseEdits(report)
        assert_that(edits | beam.Map(lambda e: e.id), equal_to(["e7"]), label="main")
        assert_that(
            report.rejects(p),
            equal_to(
                [
                    ("edits", "a.jsonl:1", "blank_line", ""),
                    ("edits", "a.jsonl:2", "malformed_json", "Expecting ',' delimiter: line 1 column 11 (char 10)"),
                    ("edits", "a.jsonl:3", "not_an_object", "list"),
                    ("edits", "a.jsonl:4", "missing_field", "id must be a non-empty string or integer"),
                    ("edits", "a.jsonl:5", "bad_field_type", "edit e5: generated must be a string"),
                    ("edits", "a.jsonl:6", "missing_field", "edit e6: published must be a string"),
                ]
            ),
            label="rejects",
        )


def test_parse_edits_keeps_the_first_line_of_an_id_by_line_number():
    report = RecordingReport()
    lines = [
        ("a.jsonl:10", line("e1", generated="later")),
        ("a.jsonl:9", line("e1", generated="first")),
        ("b.jsonl:1", line("e1", generated="other file")),
    ]
    with pipeline() as p:
        edits = p | beam.Create(lines) | ParseEdits(report)
        assert_that(edits | beam.Map(lambda e: e.generated), equal_to(["first"]), label="main")
        assert_that(
            report.rejects(p),
            equal_to(
                [
                    ("dedupe", "a.jsonl:10", "duplicate_id", "e1 first at a.jsonl:9"),
                    ("dedupe", "b.jsonl:1", "duplicate_id", "e1 first at a.jsonl:9"),
                ]
            ),
            label="rejects",
        )


def test_score_edits_gives_user_and_rouge_rows():
    report = RecordingReport()
    with pipeline() as p:
        rows = (
            p
            | beam.Create([Edit("e1", "Mara ties the rope.", "Mara ties a rope.", "top-k")])
            | ScoreEdits(report, UserConfig())
        )
        assert_that(
            rows,
            equal_to(
                [
                    {
                        "id": "e1",
                        "model": "top-k",
                        "story_id": None,
                        "n_generated_tokens": 4,
                        "n_published_tokens": 4,
                        "matched_tokens": 3,
                        "user_precision": 0.75,
                        "user_recall": 0.75,
                        "user_f1": 0.75,
                        "rouge_l_precision": 0.75,
                        "rouge_l_recall": 0.75,
                        "rouge_l_f1": 0.75,
                    }
                ]
            ),
            label="main",
        )
        assert_that(report.rejects(p), equal_to([]), label="rejects")


def test_summarize_means_per_model_and_overall():
    zeros = dict.fromkeys(("user_recall", "user_f1", "rouge_l_precision", "rouge_l_recall", "rouge_l_f1"), 0.0)

    def row(edit_id, model, precision, matched, generated):
        return {
            "id": edit_id,
            "model": model,
            "user_precision": precision,
            "matched_tokens": matched,
            "n_generated_tokens": generated,
            **zeros,
        }

    with pipeline() as p:
        summary = p | beam.Create([row("a", "top-k", 1.0, 4, 4), row("b", "", 0.5, 1, 2)]) | Summarize()
        assert_that(
            summary,
            equal_to(
                [
                    {"model": "*", "n_edits": 2, "kept_token_share": 5 / 6, "user_precision": 0.75, **zeros},
                    {"model": "top-k", "n_edits": 1, "kept_token_share": 1.0, "user_precision": 1.0, **zeros},
                ]
            ),
        )


def test_preserved_counts_merge_kept_tokens_by_part_of_speech(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("attribute_ruler").add([[{"IS_ALPHA": True}]], {"POS": "NOUN"})
    nlp.to_disk(tmp_path / "model")
    report = RecordingReport()
    with pipeline() as p:
        total = (
            p
            | beam.Create([Edit("e1", "Mara ties the rope.", "Mara ties a rope.")])
            | PreservedCounts(report, str(tmp_path / "model"), UserConfig())
        )
        assert_that(
            total,
            equal_to(
                [
                    {
                        "pos": {"NOUN": [4, 3]},
                        "entities_generated": 0,
                        "entities_kept": 0,
                        "entities_kept_in_characters": 0,
                        "edits": 1,
                    }
                ]
            ),
            label="main",
        )
        assert_that(report.rejects(p), equal_to([]), label="rejects")
