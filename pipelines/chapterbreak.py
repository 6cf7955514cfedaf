"""ChapterBreak job: books and AO3 works -> chapters, books, examples, released JSON (paper §2).

`python -m pipelines.chapterbreak --gutenberg GLOB --ao3 GLOB --output DIR [--seed N]`
Wiring only; the rules live in annotators/{gutenberg,chapters,headings,ao3,chapterbreak_*}.
One Beam element is one book (or one AO3 page/JSON line before works are grouped).
"""
from __future__ import annotations

import argparse
import dataclasses
import functools

import apache_beam as beam

from annotators.chapterbreak.ao3 import Ao3Config, parse_ao3_html, parse_json_line
from annotators.chapterbreak.books import (
    AO3, PG, ao3_book, book_chapters, book_id_for, book_summary, chapter_rows, gutenberg_book)
from annotators.chapterbreak.examples import ExampleConfig, chapter_examples, suffix, BookText
from annotators.chapterbreak.card import card, dataset_stats, released_json, released_name
from annotators.chapterbreak.subsets import subset_examples
from annotators.chapterbreak.chapters import ChapterConfig
from annotators.core.outcome import Drop
from pipelines.engine import (
    JobReport, ReadFiles, ReadLines, Stage, WriteTable, default_card, expand_input, input_names,
    join, make_pipeline, parse_job_args, run_pipeline, write_text)
from schemas.chapterbreak import BOOKS_SCHEMA, CHAPTERS_SCHEMA, EXAMPLES_SCHEMA, BookRow

HTML_EXTS, JSONL_EXTS = (".html", ".htm"), (".jsonl", ".json")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--gutenberg", help="PG/PG-19 plain-text books (file, glob or folder)")
    p.add_argument("--ao3", help="AO3 work pages / HTML downloads / JSON lines (file, glob or folder)")
    p.add_argument("--output", required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--prefix_lengths", default="8192", help="comma list, e.g. 256,512,1024,2048,4096,8192")
    p.add_argument("--suffix_tokens", type=int, default=128)
    p.add_argument("--negatives", choices=["future", "out_of_book"], default="future")
    p.add_argument("--subsets", default="", help="comma list of cause,dialogue")
    p.add_argument("--keep_headings", action="store_true", help="do not rewrite negatives' numbers")
    p.add_argument("--heading_styles", default="chapter", help="chapter[,numeral]")
    p.add_argument("--strict_numbering", action="store_true")
    p.add_argument("--tokenizer", default=ExampleConfig().tokenizer)
    p.add_argument("--ao3_language", default="English", help="'' disables the filter")
    p.add_argument("--ao3_rating", default="General Audiences", help="'' disables the filter")
    p.add_argument("--ao3_min_words", type=int, default=10_000)
    p.add_argument("--ao3_more_than_chapters", type=int, default=10)
    p.add_argument("--shards", type=int, default=1)
    return p


def configs(args):
    chapters = ChapterConfig(heading_styles=tuple(s for s in args.heading_styles.split(",") if s),
                             strict_numbering=args.strict_numbering)
    examples = ExampleConfig(
        prefix_lengths=tuple(sorted({int(x) for x in args.prefix_lengths.split(",") if x})),
        suffix_tokens=args.suffix_tokens, negatives_from=args.negatives,
        rewrite_headings=not args.keep_headings, tokenizer=args.tokenizer,
        subsets=tuple(s for s in args.subsets.split(",") if s))
    ao3 = Ao3Config(language=args.ao3_language or None, rating=args.ao3_rating or None,
                    min_words=args.ao3_min_words, more_than_chapters=args.ao3_more_than_chapters)
    return chapters, examples, ao3


def book_examples(book: dict, pool=None, *, seed: int, config: ExampleConfig):
    """All example rows of one book (chapter boundaries + requested subsets), or Drop."""
    chapters = book_chapters(book)
    rows = chapter_examples(book["book_id"], book["source"], chapters, seed=seed, config=config, pool=pool)
    rows = [] if isinstance(rows, Drop) else rows
    for kind in config.subsets:
        rows += subset_examples(book["book_id"], book["source"], chapters, kind, seed=seed, config=config)
    if not rows:
        return Drop("no_usable_boundary", f"{len(chapters)} chapters; no boundary with "
                    f"{config.min_later_chapters} later chapters and no subset position")
    return rows


def openings(book: dict, config: ExampleConfig):
    """Out-of-book pool entries: (book_id, index, heading, numeral, opening head) per chapter."""
    text = BookText(book_chapters(book), config.tokenizer)
    return [(book["book_id"], c.index, c.heading, c.numeral,
             suffix(text, c.index, c.numeral, dataclasses.replace(config, rewrite_headings=False)))
            for c in text.chapters]


def reject_to_book(source: str, row: dict) -> dict:
    key = row["input_id"].removeprefix("ao3:")
    return BookRow(book_id_for(source, key), source, row["input_id"], "rejected", row["stage"],
                   reason=row["reason"], detail=row["detail"][:2000]).to_row()


class WriteReleased(beam.PTransform):
    """One JSON file per (boundary kind, prefix length) in the released layout."""

    def __init__(self, output: str, kinds, lengths):
        super().__init__()
        self._output, self._groups = output, [(k, n) for k in kinds for n in lengths]

    def expand(self, rows):
        output = self._output

        def write(item):
            (kind, length), rows = item
            rows = [r for r in rows if r is not None]
            write_text(join(output, "released", released_name(kind, length)), released_json(rows))
            return (f"jsonl|released/{released_name(kind, length)}", len(rows))

        seeds = rows.pipeline | "Seeds" >> beam.Create([(g, None) for g in self._groups])
        slim = rows | "Slim" >> beam.Map(lambda r: ((r["boundary"], r["prefix_length"]), {
            k: r[k] for k in ("source", "book_id", "cut_offset", "prefix", "gold", "negatives")}))
        return (slim, seeds) | beam.Flatten() | beam.GroupByKey() | beam.Map(write)


def run(argv=None):
    args, options = parse_job_args(build_parser(), argv)
    if not args.gutenberg and not args.ao3:
        raise SystemExit("give --gutenberg and/or --ao3")
    ch_cfg, ex_cfg, ao3_cfg = configs(args)
    inputs = [x for x in (args.gutenberg, args.ao3) if x]
    config = {"chapters": dataclasses.asdict(ch_cfg), "examples": dataclasses.asdict(ex_cfg),
              "ao3": dataclasses.asdict(ao3_cfg)}
    report = JobReport(args.output, "chapterbreak", config=config, seed=args.seed, inputs=inputs,
                       options=options, card=functools.partial(card, base_card=default_card))
    p = make_pipeline(options)
    books, book_rejects = [], []
    if args.gutenberg:
        paths = expand_input(args.gutenberg, [".txt"])
        res = (p | "ReadBooks" >> ReadFiles(paths, input_names(paths, args.gutenberg))
               | Stage("gutenberg_books", lambda e: _one(gutenberg_book(e[0], e[1], ch_cfg))))
        book_rejects.append(res["rejects"] | "PgRejectBooks" >> beam.Map(lambda r: reject_to_book(PG, r)))
        books.append(report.add("gutenberg_books", res))
    if args.ao3:
        books_ao3, rejects_ao3 = _ao3(p, args, ao3_cfg, report)
        books.append(books_ao3)
        book_rejects.extend(rejects_ao3)
    books = books | "AllBooks" >> beam.Flatten()
    report.tally(books | "ChapterRows" >> beam.FlatMap(chapter_rows)
                 | WriteTable(join(args.output, "chapters"), CHAPTERS_SCHEMA,
                              lambda r: (r["source"], r["book_id"], r["chapter_index"]), shards=args.shards))
    book_rows = ([books | "BookRows" >> beam.Map(book_summary)] + book_rejects) | "AllBookRows" >> beam.Flatten()
    report.tally(book_rows | WriteTable(join(args.output, "books"), BOOKS_SCHEMA,
                                        lambda r: (r["source"], r["input_id"], r["book_id"], r["stage"])))
    pool = None
    if ex_cfg.negatives_from == "out_of_book":
        pool = beam.pvalue.AsList(books | "Openings" >> beam.FlatMap(openings, ex_cfg))
    fn = functools.partial(book_examples, seed=args.seed, config=ex_cfg)
    if pool is None:
        res = books | Stage("examples", fn, input_id=lambda b: b["input_id"])
    else:
        res = books | "Examples" >> _StageWithPool(fn, pool)
    examples = report.add("examples", res)
    report.tally(examples | WriteTable(join(args.output, "examples"), EXAMPLES_SCHEMA,
                                       lambda r: (r["source"], r["book_id"], r["boundary"], r["cut_offset"],
                                                  r["prefix_length"]), shards=args.shards))
    report.tally(examples | WriteReleased(args.output, ("chapter",) + ex_cfg.subsets, ex_cfg.prefix_lengths))
    _stats(books, examples, report)
    report.finish(p)
    return run_pipeline(p)


def _one(result):
    return result if isinstance(result, Drop) else [result]


class _StageWithPool(beam.PTransform):
    """The examples Stage when out-of-book negatives need every book's openings (side input)."""

    def __init__(self, fn, pool):
        super().__init__()
        self._fn, self._pool = fn, pool

    def expand(self, books):
        keyed = books | "PoolPair" >> beam.Map(lambda b, pl: (b, sorted(pl)), self._pool)
        return keyed | Stage("examples", lambda e: self._fn(e[0], e[1]), input_id=lambda e: e[0]["input_id"])


def _ao3_paths(pattern: str) -> list[str]:
    """Every AO3 input a file, glob or folder names: a folder may hold pages and JSON lines."""
    return expand_input(pattern, HTML_EXTS + JSONL_EXTS, mixed=True)


def _ao3(p, args, cfg, report):
    paths = _ao3_paths(args.ao3)
    names = input_names(paths, args.ao3)
    html = [x for x in paths if x.lower().endswith(HTML_EXTS)]
    lines = [x for x in paths if x.lower().endswith(JSONL_EXTS)]
    parts, rejects = [], []
    if html:
        res = p | "ReadAo3Html" >> ReadFiles(html, names) | Stage("ao3_pages", lambda e: parse_ao3_html(e[0], e[1]))
        rejects.append(res["rejects"] | "PageRejectBooks" >> beam.Map(lambda r: reject_to_book(AO3, r)))
        parts.append(report.add("ao3_pages", res))
    if lines:
        res = p | "ReadAo3Lines" >> ReadLines(lines, names) | Stage("ao3_lines", lambda e: parse_json_line(e[0], e[1]))
        rejects.append(res["rejects"] | "LineRejectBooks" >> beam.Map(lambda r: reject_to_book(AO3, r)))
        parts.append(report.add("ao3_lines", res))
    works = (parts | "AllParts" >> beam.Flatten() | "ByWork" >> beam.Map(lambda part: (part.work_id, part))
             | "GroupWorks" >> beam.GroupByKey())
    res = works | Stage("ao3_works", lambda e: _one(ao3_book(e[0], list(e[1]), cfg)),
                        input_id=lambda e: f"ao3:{e[0]}")
    rejects.append(res["rejects"] | "WorkRejectBooks" >> beam.Map(lambda r: reject_to_book(AO3, r)))
    return report.add("ao3_works", res), rejects


def _stats(books, examples, report):
    summaries = (books | "BookStats" >> beam.Map(lambda b: (b["source"], b["book_id"], len(b["chapters"]),
                                                            sum(len(c["body"].split()) for c in b["chapters"])))
                 | "BookStatsList" >> beam.combiners.ToList())
    bounds = (examples | "BoundaryStats" >> beam.Map(lambda r: (r["source"], r["boundary"], r["book_id"], r["boundary_id"]))
              | "BoundaryDistinct" >> beam.Distinct() | "BoundaryList" >> beam.combiners.ToList())
    report.extra("chapterbreak", summaries | "Tables34" >> beam.Map(
        lambda b, e: dataset_stats(b, e), beam.pvalue.AsSingleton(bounds)))


if __name__ == "__main__":
    run()
