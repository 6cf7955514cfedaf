"""ChapterBreak job: books and AO3 works -> chapters, books, examples, released JSON (paper §2).

`python -m pipelines.chapterbreak --gutenberg GLOB --ao3 GLOB --output DIR [--seed N]`
Wiring only; the rules live in `annotators/chapterbreak/` (the stages apply `steps.py`).
One Beam element is one book (or one AO3 page/JSON line before works are grouped).
Composite transforms: `ParseGutenbergBooks`, `ParseAo3Works`, `BuildExamples`,
`ChapterBreakStats`, `WriteReleased` (from the written table); `run(argv)` wires them to readers and writers.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools

import apache_beam as beam

from annotators.chapterbreak import steps
from annotators.chapterbreak.ao3 import Ao3Config
from annotators.chapterbreak.books import AO3, PG, book_summary, chapter_rows
from annotators.chapterbreak.card import FIGURES as CB_FIGURES
from annotators.chapterbreak.card import ReleasedWriter, card, dataset_stats, released_name
from annotators.chapterbreak.chapters import ChapterConfig
from annotators.chapterbreak.dedup import DedupConfig, duplicate_books
from annotators.chapterbreak.examples import ExampleConfig
from annotators.chapterbreak.subsets import KINDS, per_book_cap
from annotators.harness import chapterbreak as harness_tasks
from annotators.text.tokenizers import get_tokenizer
from pipelines.engine import (
    REJECTS,
    ExportFromTable,
    JobArgumentParser,
    JobReport,
    MatchInputs,
    ReadFiles,
    ReadLines,
    Stage,
    WriteTable,
    add_config_flags,
    config_from_args,
    default_card,
    expand_input,
    is_local_path,
    join,
    make_pipeline,
    parse_job_args,
    run_pipeline,
    staging_path,
)
from pipelines.engine.gather import Gather
from pipelines.engine.ranges import content_name
from pipelines.engine.stage import PooledFlatMap
from pipelines.engine.usage import fail, main
from schemas.chapterbreak import BOOKS_SCHEMA, CHAPTERS_SCHEMA, EXAMPLES_SCHEMA

HTML_EXTS, JSONL_EXTS = (".html", ".htm"), (".jsonl", ".json")
_EXAMPLE_FIELDS = {f.name: f for f in dataclasses.fields(ExampleConfig)}


def build_parser() -> argparse.ArgumentParser:
    """Job flags; the Config flags are generated from the Config dataclasses (their defaults)."""
    p = JobArgumentParser(
        prog="python -m pipelines.chapterbreak",
        description="Gutenberg books and AO3 works in; their chapters and ChapterBreak examples with "
        "in-book negatives out, also in the released JSON layout (ChapterBreak paper section 2).",
    )
    p.add_argument("--gutenberg", help="PG/PG-19 plain-text books (file, glob or folder)")
    p.add_argument("--ao3", help="AO3 work pages / HTML downloads / JSON lines (file, glob or folder)")
    p.add_argument("--output", required=True)
    p.add_argument("--seed", type=int, default=0)
    add_config_flags(p, ExampleConfig, exclude=("negatives_from",))
    negatives = _EXAMPLE_FIELDS["negatives_from"]
    p.add_argument(
        "--negatives",
        dest="negatives_from",
        default=negatives.default,
        choices=negatives.metadata["choices"],
        help=negatives.metadata["help"],
    )
    add_config_flags(p, ChapterConfig)
    add_config_flags(p, Ao3Config, prefix="ao3_")
    add_config_flags(p, DedupConfig, prefix="duplicate_")
    p.add_argument(
        "--shards", type=int, default=None, help="parquet files per table (default: one per --shard-bytes of rows)"
    )
    for name in RETIRED_FLAGS:
        p.add_argument(
            f"--{name}",
            f"--{name.replace('_', '-')}",
            dest=f"retired_{name}",
            nargs="?",
            const=True,
            help=argparse.SUPPRESS,
        )
    return p


# Flags of earlier releases: a usage error that names what replaced them.
RETIRED_FLAGS = {
    "keep_headings": "--headings keep (or number, the paper's rewrite; normalize is the default)",
    "subset_per_chapter": "--subset_per_book (subset boundaries now come from every book, chapters or not)",
}


def configs(args, parser: argparse.ArgumentParser | None = None) -> tuple[ChapterConfig, ExampleConfig, Ao3Config]:
    """The three Configs the flags describe ('' disables an AO3 language/rating filter)."""

    def error(message: str):
        if parser is None:
            raise ValueError(message)
        parser.error(message)

    for name, instead in RETIRED_FLAGS.items():
        if getattr(args, f"retired_{name}", None) is not None:
            error(f"--{name} is gone; use {instead}")
    subsets = tuple(k for k in args.subsets if k and k != "none")
    unknown = sorted(set(subsets) - set(KINDS))
    if unknown:
        error(f"argument --subsets: unknown {unknown}; choose from {','.join(KINDS)} or none")
    try:
        per_book_cap(args.subset_per_book, "pg19", "cause")
    except ValueError:
        error(f"argument --subset_per_book: 'paper' or a count >= 0, not {args.subset_per_book!r}")
    try:
        get_tokenizer(args.tokenizer)
    except (ValueError, OSError) as exc:
        error(f"argument --tokenizer: {exc}")
    chapters = config_from_args(args, ChapterConfig)
    examples = config_from_args(
        args,
        ExampleConfig,
        prefix_lengths=tuple(sorted(set(args.prefix_lengths))),
        subsets=tuple(dict.fromkeys(subsets)),
    )
    ao3 = config_from_args(
        args, Ao3Config, prefix="ao3_", language=args.ao3_language or None, rating=args.ao3_rating or None
    )
    return chapters, examples, ao3


def apply_stage(pcoll, report, name: str, fn, **kwargs):
    """(main, rejects) of Stage `name`: rejects also become books-table rows. With a report
    (the job), `report.stage` registers it; without one (transform tests), it stands alone."""
    if report is not None:
        return pcoll | report.stage(name, fn, with_rejects=True, **kwargs)
    result = pcoll | Stage(name, fn, **kwargs)
    return result["main"], result[REJECTS]


class ParseGutenbergBooks(beam.PTransform):
    """(input_id, bytes) of PG files -> {"books", "rejects", "rejected_books"} (books-table rows).
    With `keep_unchaptered` (subsets wanted), a book without chapter headings is kept as one text."""

    def __init__(self, config: ChapterConfig, report: JobReport | None = None, keep_unchaptered: bool = False):
        super().__init__()
        self._config, self._report, self._keep = config, report, keep_unchaptered

    def expand(self, files):
        fn = functools.partial(steps.read_gutenberg_book, config=self._config, keep_unchaptered=self._keep)
        books, rejects = apply_stage(files, self._report, "gutenberg_books", fn)
        rejected = rejects | "PgRejectBooks" >> beam.Map(steps.reject_to_book, PG)
        return {"books": books, "rejects": rejects, "rejected_books": rejected}


class ParseAo3Works(beam.PTransform):
    """{"pages": (input_id, html bytes), "lines": (input_id, JSON line)} (either may be absent)
    -> {"books", "rejects", "rejected_books"}: parts are grouped by work id, then filtered."""

    def __init__(self, config: Ao3Config, report: JobReport | None = None):
        super().__init__()
        self._config, self._report = config, report

    def expand(self, inputs):
        parts, rejects = [], []
        for kind, stage, fn in (
            ("pages", "ao3_pages", steps.read_ao3_page),
            ("lines", "ao3_lines", steps.read_ao3_line),
        ):
            if kind in inputs:
                main, bad = apply_stage(inputs[kind], self._report, stage, fn)
                parts.append(main)
                rejects.append(bad)
        works = (
            parts
            | "AllParts" >> beam.Flatten()
            | "ByWork" >> beam.Map(lambda part: (part.work_id, part))
            | "GroupWorks" >> beam.GroupByKey()
        )
        fn = functools.partial(steps.ao3_work_parts, config=self._config)
        books, bad = apply_stage(works, self._report, "ao3_works", fn, grouped=True)
        rejects = rejects + [bad]
        rejected = [r | f"RejectBooks{i}" >> beam.Map(steps.reject_to_book, AO3) for i, r in enumerate(rejects)]
        return {
            "books": books,
            "rejects": rejects | "AllRejects" >> beam.Flatten(),
            "rejected_books": rejected | "AllRejectedBooks" >> beam.Flatten(),
        }


class BookKeys(beam.PTransform):
    """A second read of the inputs -> BookKey per accepted book (no text; Drops are left out:
    the first read's stages count and reject them). The books are parsed again on the pool's
    workers: run here, this pass was the job's first 35 s on one core (87 MB of PG books)."""

    def __init__(self, ch_cfg: ChapterConfig, ao3_cfg: Ao3Config, keep_unchaptered: bool):
        super().__init__()
        self._ch, self._ao3, self._keep = ch_cfg, ao3_cfg, keep_unchaptered

    def expand(self, inputs):
        keys = []
        if "gutenberg" in inputs:
            fn = functools.partial(steps.gutenberg_key, config=self._ch, keep_unchaptered=self._keep)
            keys.append(inputs["gutenberg"] | "KeyPgBooks" >> beam.ParDo(PooledFlatMap("book_keys", fn)))
        ao3 = inputs.get("ao3", {})
        parts = [
            ao3[k]
            | f"KeyAo3Parts[{k}]"
            >> beam.ParDo(PooledFlatMap(f"ao3_{k}_again", functools.partial(steps.accepted, step=fn)))
            for k, fn in (("pages", steps.read_ao3_page), ("lines", steps.read_ao3_line))
            if k in ao3
        ]
        if parts:
            keys.append(
                parts
                | "KeyAo3AllParts" >> beam.Flatten()
                | "KeyAo3ByWork" >> beam.Map(lambda part: (part.work_id, part))
                | "KeyAo3Works" >> beam.GroupByKey()
                | "KeyAo3Books" >> beam.FlatMap(steps.accepted, steps.build_ao3_work, self._ao3)
                | "KeyAo3Book" >> beam.Map(steps.book_key)
            )
        return keys | "KeyAllBooks" >> beam.Flatten()


class CollapseDuplicates(beam.PTransform):
    """Accepted books -> the books left once exact and near-duplicate copies collapse (stage
    `duplicates`: a dropped copy is a `duplicate_book` reject naming the copy kept, and the
    kept book lists its duplicates). `keys`: every book's BookKey, from a second read, so the
    books themselves are never held while the one global step decides."""

    def __init__(self, keys, config: DedupConfig, report: JobReport | None = None):
        super().__init__()
        self._keys, self._config, self._report = keys, config, report

    def expand(self, books):
        threshold = self._config.threshold
        verdicts = beam.pvalue.AsSingleton(
            self._keys | "AllBookKeys" >> Gather() | "DuplicateGroups" >> beam.Map(duplicate_books, threshold)
        )
        return apply_stage(
            books,
            self._report,
            "duplicates",
            steps.collapse_duplicate,
            input_id=lambda b: b["input_id"],
            pooled=False,  # a look-up: cheaper than sending each whole book to a worker and back
            side_inputs={"verdicts": verdicts},
        )


class BuildExamples(beam.PTransform):
    """Accepted books -> {"examples", "rejects"}; out-of-book negatives see every book's openings."""

    def __init__(self, config: ExampleConfig, seed: int, report: JobReport | None = None):
        super().__init__()
        self._config, self._seed, self._report = config, seed, report

    def expand(self, books):
        fn = functools.partial(steps.book_examples, seed=self._seed, config=self._config)
        side = {}
        if self._config.negatives_from == "out_of_book":
            side["pool"] = beam.pvalue.AsList(books | "Openings" >> beam.FlatMap(steps.openings, self._config))
        examples, rejects = apply_stage(
            books, self._report, "examples", fn, input_id=lambda b: b["input_id"], side_inputs=side
        )
        return {"examples": examples, "rejects": rejects}


class ChapterBreakStats(beam.PTransform):
    """{"books", "examples"} -> one value: the paper's Tables 3-4 (`card.dataset_stats`) and,
    with `config`'s subsets, each book's uncapped subset counts."""

    def __init__(self, config: ExampleConfig | None = None):
        super().__init__()
        self._config = config

    def expand(self, inputs):
        config = self._config
        summaries = (
            inputs["books"]
            | "BookStats" >> beam.Map(steps.book_stat, config)
            | "BookStatsList" >> beam.combiners.ToList()
        )
        bounds = (
            inputs["examples"]
            | "BoundaryStats" >> beam.Map(steps.keyed_boundary_stat)
            | "OnePerBoundary" >> beam.CombinePerKey(min)
            | "BoundaryFacts" >> beam.Values()
            | "BoundaryList" >> beam.combiners.ToList()
        )
        per_book = config.subset_per_book if config is not None and config.subsets else None
        return summaries | "Tables34" >> beam.Map(dataset_stats, beam.pvalue.AsSingleton(bounds), per_book)


def example_order(row: dict) -> tuple:
    """The `examples` table's row order (and the released files' order within a kind and length)."""
    return (row["source"], row["book_id"], row["boundary"], row["cut_offset"], row["prefix_length"])


def _released_writer(files: dict, name: str) -> ReleasedWriter:
    kind, length = files[name]
    return ReleasedWriter(kind, length)


class WriteReleased(beam.PTransform):
    """The `examples` table's write tallies -> one JSON file per (boundary kind, prefix length)
    in the released layout, streamed from the written table (no file is ever held whole:
    with the subsets on, one file holds thousands of 8K-token prefixes)."""

    def __init__(self, output: str, kinds, lengths):
        super().__init__()
        self._output = output
        self._files = {released_name(k, n): (k, n) for k in kinds for n in lengths}

    def expand(self, written):
        output, files = self._output, self._files
        return written | ExportFromTable(
            join(output, "examples"),
            list(files),
            example_order,
            functools.partial(_released_writer, files),
            lambda name: join(output, "released", name),
            "released",
        )


def _is_html(source) -> bool:
    return content_name(source.path).lower().endswith(HTML_EXTS)


def _is_jsonl(source) -> bool:
    return content_name(source.path).lower().endswith(JSONL_EXTS)


def _read_ao3(p, pattern: str, label: str = "") -> dict:
    """The AO3 inputs a file, glob or folder names (a folder may hold pages and JSON lines),
    matched when the job runs and routed by extension. A local pattern is listed now only to
    leave out a kind it has no file of; a remote one gets both branches."""
    exts = HTML_EXTS + JSONL_EXTS
    kinds = (
        {
            "pages" if content_name(x).lower().endswith(HTML_EXTS) else "lines"
            for x in expand_input(pattern, exts, mixed=True)
        }
        if is_local_path(pattern)
        else {"pages", "lines"}
    )
    sources = p | f"MatchAo3{label}" >> MatchInputs(pattern, exts, mixed=True)
    inputs = {}
    if "pages" in kinds:
        inputs["pages"] = (
            sources | f"Ao3HtmlFiles{label}" >> beam.Filter(_is_html) | f"ReadAo3Html{label}" >> ReadFiles()
        )
    if "lines" in kinds:
        inputs["lines"] = (
            sources | f"Ao3LineFiles{label}" >> beam.Filter(_is_jsonl) | f"ReadAo3Lines{label}" >> ReadLines()
        )
    return inputs


def _read_inputs(p, args, label: str = "") -> dict:
    """{"gutenberg": (input_id, bytes) of PG files, "ao3": {"pages", "lines"}}, as given."""
    inputs = {}
    if args.gutenberg:
        inputs["gutenberg"] = (
            p | f"MatchBooks{label}" >> MatchInputs(args.gutenberg, [".txt"]) | f"ReadBooks{label}" >> ReadFiles()
        )
    if args.ao3:
        inputs["ao3"] = _read_ao3(p, args.ao3, label)
    return inputs


def run(argv=None):
    parser = build_parser()
    args, options = parse_job_args(parser, argv)
    if not args.gutenberg and not args.ao3:
        fail("chapterbreak", "give --gutenberg and/or --ao3")
    ch_cfg, ex_cfg, ao3_cfg = configs(args, parser)
    dup_cfg = config_from_args(args, DedupConfig, prefix="duplicate_")
    name = get_tokenizer(ex_cfg.tokenizer).name  # a tokenizer.json by its hash, never its path
    config = {
        "chapters": dataclasses.asdict(ch_cfg),
        "examples": {**dataclasses.asdict(ex_cfg), "tokenizer": name},
        "ao3": dataclasses.asdict(ao3_cfg),
        "duplicates": dataclasses.asdict(dup_cfg),
        "tokenizer": name,
    }
    out = staging_path(args.output)
    report = JobReport(
        out,
        "chapterbreak",
        config=config,
        seed=args.seed,
        inputs=[x for x in (args.gutenberg, args.ao3) if x],
        options=options,
        card=functools.partial(card, base_card=default_card),
        figures=CB_FIGURES,
        attachments=harness_tasks.attachments,
    )
    p = make_pipeline(options)  # every core on the pool (Beam's own processes held 2.5x one's memory)
    keep_unchaptered = bool(ex_cfg.subsets)
    inputs = _read_inputs(p, args)
    parsed = []
    if "gutenberg" in inputs:
        parsed.append(inputs["gutenberg"] | "Gutenberg" >> ParseGutenbergBooks(ch_cfg, report, keep_unchaptered))
    if "ao3" in inputs:
        parsed.append(inputs["ao3"] | "Ao3" >> ParseAo3Works(ao3_cfg, report))
    keys = _read_inputs(p, args, "Again") | BookKeys(ch_cfg, ao3_cfg, keep_unchaptered)
    found = [x["books"] for x in parsed] | "AllBooks" >> beam.Flatten()
    books, duplicates = found | CollapseDuplicates(keys, dup_cfg, report)
    rejected = [x["rejected_books"] for x in parsed] + [
        duplicates | "DuplicateBooks" >> beam.Map(steps.duplicate_to_book)
    ]
    _write_books(books, rejected, out, args.shards, report)
    examples = (books | BuildExamples(ex_cfg, args.seed, report))["examples"]
    written = examples | WriteTable(join(out, "examples"), EXAMPLES_SCHEMA, example_order, shards=args.shards)
    report.tally(written)
    report.tally(written | WriteReleased(out, ("chapter",) + ex_cfg.subsets, ex_cfg.prefix_lengths))
    report.extra("chapterbreak", {"books": books, "examples": examples} | ChapterBreakStats(ex_cfg))
    report.finish(p)
    return run_pipeline(p, commit_to=args.output)


def _write_books(books, rejected_books, out: str, shards, report) -> None:
    """The `chapters` table and the `books` table (accepted and rejected books)."""
    report.tally(
        books
        | "ChapterRows" >> beam.FlatMap(chapter_rows)
        | WriteTable(
            join(out, "chapters"),
            CHAPTERS_SCHEMA,
            lambda r: (r["source"], r["book_id"], r["chapter_index"]),
            shards=shards,
        )
    )
    rows = [books | "BookRows" >> beam.Map(book_summary)] + rejected_books
    report.tally(
        rows
        | "AllBookRows" >> beam.Flatten()
        | WriteTable(join(out, "books"), BOOKS_SCHEMA, lambda r: (r["source"], r["input_id"], r["book_id"], r["stage"]))
    )


if __name__ == "__main__":
    main(run, "chapterbreak")
