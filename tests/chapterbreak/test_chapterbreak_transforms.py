"""Beam tier: the chapterbreak job's composite transforms on in-memory inputs (main and rejects).

Each test builds a small pipeline on the in-process FnApiRunner (no Prism download) over
`beam.Create`, and asserts the exact outputs of one behaviour with `assert_that`.
"""

from __future__ import annotations

import json
import pathlib

import apache_beam as beam
import pyarrow as pa
from apache_beam.runners.portability.fn_api_runner import FnApiRunner
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from annotators.chapterbreak.ao3 import Ao3Config
from annotators.chapterbreak.books import book_id_for
from annotators.chapterbreak.chapters import ChapterConfig
from annotators.chapterbreak.examples import ExampleConfig
from pipelines.chapterbreak import (
    BuildExamples,
    ChapterBreakStats,
    ParseAo3Works,
    ParseGutenbergBooks,
    WriteReleased,
    example_order,
)
from pipelines.engine import WriteTable
from schemas.chapterbreak import EXAMPLES_SCHEMA

FIX = pathlib.Path(__file__).parents[1] / "fixtures" / "chapterbreak"


def pipeline() -> TestPipeline:
    return TestPipeline(runner=FnApiRunner())


def book_file(name: str) -> tuple[str, bytes]:
    return name, (FIX / "books" / name).read_bytes()


def why(rows):
    """(stage, input_id, reason) of rejects rows."""
    return rows | beam.Map(lambda r: (r["stage"], r["input_id"], r["reason"]))


def make_book(book_id: str, n: int, words: int = 60) -> dict:
    """A synthetic accepted book of `n` chapters "CHAPTER i" with distinct prose."""
    chapters = [
        {
            "index": i,
            "heading": f"CHAPTER {i + 1}",
            "title": "",
            "number": i + 1,
            "numeral": str(i + 1),
            "body": " ".join(f"{book_id}w{i}x{j}" for j in range(words)) + ".",
        }
        for i in range(n)
    ]
    return {
        "book_id": book_id,
        "source": "pg19",
        "input_id": f"{book_id}.txt",
        "title": "",
        "info": {},
        "chapters": chapters,
    }


def test_gutenberg_books_accepted_with_their_chapters():
    with pipeline() as p:
        out = (
            p
            | beam.Create([book_file("hallow_fen_1990s.txt"), book_file("short_chapters.txt")])
            | ParseGutenbergBooks(ChapterConfig())
        )
        assert_that(
            out["books"] | beam.Map(lambda b: (b["input_id"], b["source"], len(b["chapters"]))),
            equal_to([("hallow_fen_1990s.txt", "pg19", 8), ("short_chapters.txt", "pg19", 8)]),
            label="books",
        )
        assert_that(out["rejects"], equal_to([]), label="rejects")


def test_gutenberg_rejects_and_their_books_rows():
    files = [book_file(n) for n in ("empty.txt", "binary.txt", "one_chapter.txt", "no_headings.txt")]
    with pipeline() as p:
        out = p | beam.Create(files) | ParseGutenbergBooks(ChapterConfig())
        assert_that(out["books"], equal_to([]), label="books")
        assert_that(
            why(out["rejects"]),
            equal_to(
                [
                    ("gutenberg_books", "empty.txt", "empty_file"),
                    ("gutenberg_books", "binary.txt", "binary_file"),
                    ("gutenberg_books", "one_chapter.txt", "fewer_than_two_chapters"),
                    ("gutenberg_books", "no_headings.txt", "no_chapter_headings"),
                ]
            ),
            label="rejects",
        )
        assert_that(
            out["rejected_books"] | beam.Map(lambda r: (r["book_id"], r["status"], r["reason"])),
            equal_to(
                [
                    (book_id_for("pg19", "empty.txt"), "rejected", "empty_file"),
                    (book_id_for("pg19", "binary.txt"), "rejected", "binary_file"),
                    (book_id_for("pg19", "one_chapter.txt"), "rejected", "fewer_than_two_chapters"),
                    (book_id_for("pg19", "no_headings.txt"), "rejected", "no_chapter_headings"),
                ]
            ),
            label="rejected_books",
        )


def test_ao3_lines_grouped_into_works_and_filtered():
    lines = (FIX / "ao3" / "works.jsonl").read_bytes().split(b"\n")
    inputs = [(f"works.jsonl:{i}", line) for i, line in enumerate(lines, start=1)] + [("x.jsonl:1", b"[1, 2]")]
    with pipeline() as p:
        out = {"lines": p | beam.Create(inputs)} | ParseAo3Works(Ao3Config())
        assert_that(
            out["books"] | beam.Map(lambda b: (b["input_id"], len(b["chapters"]))),
            equal_to([("ao3:4401", 12)]),
            label="books",
        )
        assert_that(
            why(out["rejects"]),
            equal_to(
                [
                    ("ao3_lines", "works.jsonl:3", "malformed_json"),
                    ("ao3_lines", "x.jsonl:1", "not_an_object"),
                    ("ao3_works", "ao3:4402", "not_general_audiences"),
                ]
            ),
            label="rejects",
        )
        assert_that(
            out["rejected_books"] | beam.Map(lambda r: (r["book_id"], r["input_id"])),
            equal_to(
                [
                    (book_id_for("ao3", "works.jsonl:3"), "works.jsonl:3"),
                    (book_id_for("ao3", "x.jsonl:1"), "x.jsonl:1"),
                    (book_id_for("ao3", "4402"), "ao3:4402"),
                ]
            ),
            label="rejected_books",
        )


def test_ao3_page_becomes_a_work_and_short_works_are_rejected():
    page = ("fen.html", (FIX / "ao3" / "fen_road_download.html").read_bytes())
    with pipeline() as p:
        out = {"pages": p | beam.Create([page, ("list.html", b"<ul><li class='blurb'>x</li></ul>")])} | ParseAo3Works(
            Ao3Config(min_words=0, more_than_chapters=12)
        )
        assert_that(out["books"], equal_to([]), label="books")
        assert_that(
            why(out["rejects"]),
            equal_to([("ao3_pages", "list.html", "no_work_text"), ("ao3_works", "ao3:5501", "ten_or_fewer_chapters")]),
            label="rejects",
        )


def test_examples_one_boundary_per_usable_chapter_and_a_reject():
    config = ExampleConfig(prefix_lengths=(16, 64))
    with pipeline() as p:
        out = p | beam.Create([make_book("long", 7), make_book("short", 3)]) | BuildExamples(config, seed=0)
        assert_that(
            out["examples"]
            | beam.Map(
                lambda r: (
                    r["book_id"],
                    r["chapter_index"],
                    r["prefix_length"],
                    r["prefix_tokens"],
                    r["negative_chapter_indices"],
                )
            ),
            equal_to([("long", 1, 16, 16, [2, 3, 6, 4, 5]), ("long", 1, 64, 63, [2, 3, 6, 4, 5])]),
            label="examples",
        )
        assert_that(why(out["rejects"]), equal_to([("examples", "short.txt", "no_usable_boundary")]), label="rejects")


def test_out_of_book_examples_draw_from_other_books():
    config = ExampleConfig(prefix_lengths=(16,), negatives_from="out_of_book")
    books = [make_book("a", 3), make_book("b", 3), make_book("c", 3)]  # 6 openings outside each book
    with pipeline() as p:
        out = p | beam.Create(books) | BuildExamples(config, seed=0)
        assert_that(
            out["examples"]
            | beam.Map(lambda r: (r["book_id"], r["chapter_index"], sorted(set(r["negative_book_ids"])))),
            equal_to(
                [
                    ("a", 1, ["b", "c"]),
                    ("a", 2, ["b", "c"]),
                    ("b", 1, ["a", "c"]),
                    ("b", 2, ["a", "c"]),
                    ("c", 1, ["a", "b"]),
                    ("c", 2, ["a", "b"]),
                ]
            ),
            label="examples",
        )
        assert_that(out["rejects"], equal_to([]), label="rejects")


def test_stats_tables_3_and_4():
    rows = [
        {"source": "pg19", "boundary": "chapter", "book_id": "long", "boundary_id": "x"},
        {"source": "pg19", "boundary": "chapter", "book_id": "long", "boundary_id": "x"},
        {"source": "pg19", "boundary": "cause", "book_id": "long", "boundary_id": "y"},
    ]
    with pipeline() as p:
        stats = {
            "books": p | "Books" >> beam.Create([make_book("long", 7, words=10)]),
            "examples": p | "Examples" >> beam.Create(rows),
        } | ChapterBreakStats()
        spread = {"mean": None, "min": None, "max": None}
        assert_that(
            stats,
            equal_to(
                [
                    {
                        "table3_works": {
                            "ao3": {
                                "works": 0,
                                "works_without_chapters": 0,
                                "chapters_per_work": spread,
                                "words_per_work": spread,
                            },
                            "pg19": {
                                "works": 1,
                                "works_without_chapters": 0,
                                "chapters_per_work": {"mean": 7.0, "min": 7, "max": 7},
                                "words_per_work": {"mean": 70.0, "min": 70, "max": 70},
                            },
                        },
                        "table4_examples": {
                            "pg19": {"cause": {"works": 1, "examples": 1}, "chapter": {"works": 1, "examples": 1}}
                        },
                    }
                ]
            ),
        )


def test_released_files_one_per_kind_and_length(tmp_path):
    row = {
        "source": "pg19",
        "book_id": "b",
        "cut_offset": 5,
        "prefix": "p",
        "gold": "g",
        "negatives": ["n"],
        "boundary": "chapter",
        "prefix_length": 16,
    }
    full = {
        **{f.name: 0 for f in EXAMPLES_SCHEMA if f.type == pa.int64()},
        "example_id": "e",
        "boundary_id": "x",
        "negative_chapter_indices": [3],
        "negative_book_ids": ["b"],
        "tokenizer": "t",
        "heading_normalization": "normalize",
        **row,
    }
    with pipeline() as p:
        written = p | beam.Create([full]) | WriteTable(str(tmp_path / "examples"), EXAMPLES_SCHEMA, example_order)
        tally = written | WriteReleased(str(tmp_path), ("chapter", "cause"), (16,))
        assert_that(
            tally,
            equal_to(
                [("jsonl|released/chapterbreak_ctx_16.json", 1), ("jsonl|released/chapterbreak_cause_ctx_16.json", 0)]
            ),
        )
    assert json.loads((tmp_path / "released" / "chapterbreak_ctx_16.json").read_text()) == {
        "pg19": {"b": [{"ctx": "p", "pos": "g", "negs": ["n"]}]},
        "ao3": {},
    }
