"""Beam tier: the storium job's composite transforms over in-memory games (main and rejects).

Each test builds a TestPipeline on the in-process FnApiRunner, feeds `beam.Create` inputs to
one transform of `pipelines.storium` and asserts its exact outputs with `assert_that`.
"""

from __future__ import annotations

import json

import apache_beam as beam
from apache_beam.testing.util import assert_that, equal_to

from annotators.storium.context import ContextConfig
from annotators.storium.pack import PackConfig
from annotators.storium.split import SplitConfig
from pipelines.storium import AssignSplits, GameTables, PackExamples, ParseGames
from tests.beam_report import RecordingReport, pipeline


def entry(seq, text, role="narrator", fmt="move", char=None):
    return {"seq_id": seq, "format": fmt, "role": role, "character_seq_id": char, "description": text}


def game(pid, characters=None, entries=None) -> bytes:
    """A minimal STORIUM export: one scene with an establishment and a character move."""
    characters = (
        characters if characters is not None else [{"character_seq_id": "1", "name": "Anna", "description": "A twin."}]
    )
    entries = (
        entries
        if entries is not None
        else [
            entry("1", "The harbour at dusk.", fmt="establishment"),
            entry("2", "Anna rows out.", role="character:1", char="1"),
        ]
    )
    return json.dumps({"game_pid": pid, "characters": characters, "scenes": [{"entries": entries}]}).encode()


def parsed(files, report, p):
    return p | beam.Create(files) | ParseGames(report)


def test_parse_games_keeps_good_games():
    report = RecordingReport()
    with pipeline() as p:
        games = parsed([("a.json", game("g-a")), ("b.json", game("g-b"))], report, p)
        assert_that(
            games | beam.Map(lambda g: (g.story_id, g.input_id, g.n_words)),
            equal_to([("g-a", "a.json", 7), ("g-b", "b.json", 7)]),
            label="main",
        )
        assert_that(report.rejects(p), equal_to([]), label="rejects")
    assert report.stages == ["games", "dedupe"]


def test_parse_games_rejects_unusable_files_with_shared_codes():
    report = RecordingReport()
    files = [
        ("empty.json", b""),
        ("array.json", b"[1]"),
        ("cut.json", b'{"game_pid": "x"'),
        ("nopid.json", game("")),
        ("nochars.json", game("g-n", characters=[])),
        ("noseq.json", game("g-s", characters=[{"name": "Nobody"}])),
        ("ok.json", game("g-ok")),
    ]
    with pipeline() as p:
        games = parsed(files, report, p)
        assert_that(games | beam.Map(lambda g: g.story_id), equal_to(["g-ok"]), label="main")
        assert_that(
            report.rejects(p),
            equal_to(
                [
                    ("games", "empty.json", "empty_file", "Expecting value: line 1 column 1 (char 0)"),
                    ("games", "array.json", "not_an_object", "top-level JSON is list, not an object"),
                    ("games", "cut.json", "malformed_json", "Expecting ',' delimiter: line 1 column 17 (char 16)"),
                    ("games", "nopid.json", "missing_field", "no game_pid"),
                    ("games", "nochars.json", "no_characters", "game g-n"),
                    ("games", "noseq.json", "no_usable_character", "game g-s: no character has a character_seq_id"),
                ]
            ),
            label="rejects",
        )


def test_parse_games_keeps_the_smallest_path_of_a_duplicate_game_pid():
    report = RecordingReport()
    with pipeline() as p:
        games = parsed([("z_copy.json", game("g-a")), ("a.json", game("g-a"))], report, p)
        assert_that(games | beam.Map(lambda g: g.input_id), equal_to(["a.json"]), label="main")
        assert_that(
            report.rejects(p),
            equal_to([("dedupe", "z_copy.json", "duplicate_id", "g-a also in a.json")]),
            label="rejects",
        )


def test_assign_splits_balances_words_and_reports_the_split():
    report = RecordingReport()
    files = [("a.json", game("g-a")), ("b.json", game("g-b")), ("c.json", game("g-c"))]
    with pipeline() as p:
        splits = parsed(files, report, p) | AssignSplits(report, SplitConfig((1, 1, 1)))
        # equal sizes: the original takes the larger input path first (c.json, then b.json, a.json)
        assert_that(splits, equal_to([{"g-c": "train", "g-b": "validation", "g-a": "test"}]), label="main")
        assert_that(
            report.extras["split"] | beam.Map(lambda r: {k: v["stories"] for k, v in r.items()}),
            equal_to([{"train": 1, "validation": 1, "test": 1}]),
            label="report",
        )


def test_game_tables_carry_the_split_and_reject_bad_parts():
    report = RecordingReport()
    characters = [{"character_seq_id": "1", "name": "Anna"}, "not a character"]
    entries = [entry("1", "Dusk.", fmt="establishment"), entry("1", "Again."), 7, entry("", "No id.")]
    with pipeline() as p:
        games = parsed([("a.json", game("g-a", characters, entries))], report, p)
        splits = beam.pvalue.AsSingleton(p | "Splits" >> beam.Create([{"g-a": "test"}]))
        tables = games | GameTables(report, splits)
        assert_that(
            tables["characters"] | "C" >> beam.Map(lambda r: (r["character_id"], r["split"])),
            equal_to([("g-a:1", "test")]),
            label="characters",
        )
        assert_that(
            tables["entries"] | "E" >> beam.Map(lambda r: (r["entry_id"], r["text"], r["split"])),
            equal_to([("g-a:1", "Dusk.", "test")]),
            label="entries",
        )
        assert_that(
            tables["stories"] | "S" >> beam.Map(lambda r: (r["story_id"], r["split"], r["n_entries"])),
            equal_to([("g-a", "test", 1)]),
            label="stories",
        )
        assert_that(
            report.rejects(p),
            equal_to(
                [
                    ("characters", "g-a:character1", "not_an_object", "str"),
                    ("entries", "g-a:scene0:entry1", "duplicate_id", "1"),
                    ("entries", "g-a:scene0:entry2", "not_an_object", "int"),
                    ("entries", "g-a:scene0:entry3", "missing_field", "scene 0, position 3"),
                ]
            ),
            label="rejects",
        )


def packed(budget, report):
    with pipeline() as p:
        games = parsed([("a.json", game("g-a"))], report, p)
        splits = beam.pvalue.AsSingleton(p | "Splits" >> beam.Create([{"g-a": "validation"}]))
        rows = games | PackExamples(report, splits, ContextConfig(), PackConfig(budget=budget), "regex")
        yield p, rows


def test_pack_examples_packs_each_character_entry_with_its_split():
    report = RecordingReport()
    for p, rows in packed(1024, report):
        assert_that(
            rows
            | beam.Map(
                lambda r: (
                    r["example_id"],
                    r["split"],
                    r["total_tokens"],
                    [(s["kind"], s["text"]) for s in r["segments"]],
                )
            ),
            equal_to(
                [
                    (
                        "storium:g-a:2",
                        "validation",
                        18,  # 13 text tokens + 4 separators + 1 end token
                        [
                            ("character", "Anna"),
                            ("character", "A twin."),
                            ("establishment", "The harbour at dusk."),  # no place card: its text
                            ("entry", "Anna rows out."),
                        ],
                    )
                ]
            ),
            label="main",
        )
        assert_that(report.rejects(p), equal_to([]), label="rejects")


def test_pack_examples_rejects_more_segments_than_budget_tokens():
    report = RecordingReport()
    for p, rows in packed(2, report):
        assert_that(rows, equal_to([]), label="main")
        assert_that(
            report.rejects(p),
            equal_to(
                [
                    (
                        "pack",
                        "g-a:2",
                        "budget_below_segments",
                        "4 segments need 5 tokens (5 special tokens, 0 text token(s) each), budget 2",
                    )
                ]
            ),
            label="rejects",
        )
