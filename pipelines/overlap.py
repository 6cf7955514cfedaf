"""8-gram overlap audit (LOT section 5.6, Table 14) as a Beam job. Wiring only.

    python -m pipelines.overlap --lot DIR --output OUT          # val/test vs each task's train
    python -m pipelines.overlap --test TABLE --reference GLOB --output OUT

The test side's 8-grams (small) become a side input of the reference stage, so the reference
(text lines, JSON lines or parquet, any size) streams through reading, tokenising and matching
in one fused step, in blocks of about 1 MB of records (one Beam element each, and one pool
task in a local run with several processes; a text or JSON-lines block is read by the worker
that works on it, pipelines.engine.textlines.RangeBlock), and only its 8-grams that occur in the test set
leave the worker, one value per block: memory and shuffle are bounded by the test side, never
by the reference. The definitions are in annotators/ngram_overlap.py and in CARD.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import operator
import os
from collections.abc import Sequence

import apache_beam as beam

from annotators.audits import overlap as ng
from annotators.audits import overlap_report as rep
from annotators.audits import records as ar
from annotators.audits import steps
from annotators.audits.card import OVERLAP_FIGURES, overlap_card
from annotators.audits.overlap_report import table14_markdown
from pipelines.engine import (
    Gather,
    JobArgumentParser,
    JobReport,
    TableSpec,
    WriteTables,
    add_config_flags,
    config_from_args,
    expand_input,
    is_local_path,
    join,
    make_pipeline,
    parse_job_args,
    run_pipeline,
    staging_path,
    write_text,
)
from pipelines.engine.folds import CombineFold, KeyedFoldPerBundle
from pipelines.engine.paths import write_text_to
from pipelines.engine.records import ReadRecords, count_check, lot_sources, table_sources
from pipelines.engine.repeated_ids import RepeatedIds
from pipelines.engine.usage import fail, main
from schemas.audit import OVER_THRESHOLD_SCHEMA, OVERLAP_EXAMPLES_SCHEMA, OVERLAP_SUMMARY_SCHEMA
from schemas.lot import SPLITS, TASKS, TEXT_FIELDS


class TestSets(beam.PTransform):
    """Rows -> one {task: frozenset of test n-grams} value (small; none when there is no test
    example: read it with a default), the reference side's side input."""

    def expand(self, rows):
        return (
            rows
            | "Tests" >> beam.Filter(ng.is_example)
            | "TestGrams" >> beam.Map(lambda e: (e.task, e.grams))
            | "UnionPerTask" >> beam.CombinePerKey(CombineFold(ng.UnionSets()))
            | "TestSets" >> Gather()
            | "TestDict" >> beam.Map(dict)
        )


class ScoreOverlap(beam.PTransform):
    """(rows, MatchedGrams of every reference document) -> one examples-table row per test
    example (n, o, ratio)."""

    def expand(self, inputs):
        rows, matched_docs = inputs
        tests = rows | "Tests" >> beam.Filter(ng.is_example)
        # a reference that holds the test stories matches in every document: its matches are
        # made distinct per bundle where they are found, so what leaves a worker is bounded by
        # the test set's n-grams, not by the reference
        matched = (
            matched_docs
            | "UnionPerBundle" >> beam.ParDo(KeyedFoldPerBundle(ng.UnionSets(), ng.matched_entries))
            | "UnionPerTask" >> beam.CombinePerKey(CombineFold(ng.UnionSets()))
            | "Matched" >> Gather()
            | "MatchedDict" >> beam.Map(dict)
        )
        # no reference document matched: an empty dict (Gather yields nothing for nothing)
        return tests | "Score" >> beam.Map(ng.score_against, beam.pvalue.AsSingleton(matched, default_value={}))


def _table_row(name: str, row: dict):
    return ((name, row),)


def _write_table14(summaries: list[dict], path: str, n: int, empty: list[str]) -> None:
    write_text(path, table14_markdown(summaries, n, empty_references=empty))


def _empty_reference(label_count: tuple[str, int], names: dict[str, str]) -> list[str]:
    """The reference a (label, count) pair names when it holds no rows."""
    label, count = label_count
    return [names[label]] if count == 0 and label in names else []


def audit(
    rows,
    matched,
    report: JobReport,
    config: ng.OverlapConfig,
    references: dict[str, str],
    output: str,
    empty_references=None,
):
    """Score the test examples among `rows` against the reference's matched n-grams (`references`:
    task -> the reference it is audited against); write tables. `empty_references`: a
    PCollection of the references that hold no rows (summary.md says their 0% means nothing)."""
    scored = (rows, matched) | "ScoreOverlap" >> ScoreOverlap()
    over = scored | "Over" >> beam.Filter(lambda r, t: r["ratio"] > t, config.over_threshold)
    over_rows = over | "OverRow" >> beam.Map(rep.over_row)
    summaries = (
        scored
        | "BySplit" >> beam.Map(rep.split_keyed)
        | "GroupSplit" >> beam.GroupByKey()
        | "Summarize" >> beam.Map(rep.summarize_split, references, config.over_threshold)
    )
    tables = {  # written together: one set of steps for the three tables
        "examples": TableSpec(join(output, "examples"), OVERLAP_EXAMPLES_SCHEMA, rep.example_key),
        "over_10pct": TableSpec(join(output, "over_10pct"), OVER_THRESHOLD_SCHEMA, rep.example_key),
        "summary": TableSpec(join(output, "summary"), OVERLAP_SUMMARY_SCHEMA, rep.summary_key),
    }
    rows_of = [functools.partial(_table_row, name) for name in tables]
    written = (scored, over_rows, summaries) | WriteTables(tables, rows_of, spill=join(output, "_spill-tables"))
    report.tally(written)
    listed = summaries | "SummaryList" >> beam.combiners.ToList() | "SortSummary" >> beam.Map(rep.sorted_summaries)
    empty = beam.pvalue.AsSingleton(
        (empty_references or (rows.pipeline | "NoEmptyReferences" >> beam.Create([])))
        | "EmptyList" >> beam.combiners.ToList()
        | "SortEmpty" >> beam.Map(sorted),
        default_value=[],
    )
    listed | "Markdown" >> beam.Map(_write_table14, join(output, "summary.md"), config.n, empty)
    ids = over | "Ids" >> beam.combiners.ToList() | "IdList" >> beam.Map(rep.over_ids_tsv)
    ids | "WriteIds" >> beam.Map(write_text_to, join(output, "over_10pct.tsv"))
    report.extra("overlap", listed)


def build_parser() -> argparse.ArgumentParser:
    parser = JobArgumentParser(
        prog="python -m pipelines.overlap",
        description="8-gram overlap of test examples with a reference (LOT section 5.6, Table 14).",
    )
    parser.add_argument("--lot", help="LOT output folder with clozet/senpos/plotcom/outgen tables")
    parser.add_argument("--test", help="a test table (parquet folder/glob or JSON lines)")
    parser.add_argument(
        "--reference", help="reference files: text (a document per line), JSON lines or parquet; globs and .gz allowed"
    )
    parser.add_argument("--output", required=True)
    add_config_flags(parser, ng.OverlapConfig, exclude=("over_threshold", "placeholders"))
    parser.add_argument(
        "--test-fields", default="", help="comma-separated, for a --test table that is not a LOT task (default: text)"
    )
    parser.add_argument(
        "--reference-fields",
        default="",
        help="comma-separated text fields "
        f"of a JSON-lines/parquet reference (default: {','.join(ar.REFERENCE_FIELDS)})",
    )
    return parser


def table_task(pattern: str) -> str:
    """The task a --test table belongs to: its folder's name (`.../outgen` -> outgen)."""
    if is_local_path(pattern):
        folder = (
            pattern if os.path.isdir(pattern) else os.path.dirname(expand_input(pattern, (".parquet", ".jsonl"))[0])
        )
    else:
        last = pattern.rstrip("/").rsplit("/", 1)[-1]
        folder = pattern.rstrip("/") if not any(c in last for c in "*?[.") else pattern.rsplit("/", 1)[0]
    return os.path.basename(folder.rstrip("/")) or "test"


def run(argv: Sequence[str] | None = None) -> None:
    args, options = parse_job_args(build_parser(), argv)
    if bool(args.lot) == bool(args.test and args.reference):
        fail("overlap", "give either --lot DIR, or --test TABLE and --reference GLOB")
    given = [
        f"--{f.replace('_', '-')}" for f in ("test", "reference", "test_fields", "reference_fields") if getattr(args, f)
    ]
    if args.lot and given:  # once silently ignored: the build was audited against its own train splits only
        fail(
            "overlap",
            f"--lot audits a LOT build against its own train splits and takes no {', '.join(given)}; "
            "for another reference give --test DIR/outgen --reference GLOB instead of --lot",
        )
    config, out = config_from_args(args, ng.OverlapConfig), staging_path(args.output)
    p = make_pipeline(options)
    setup = functools.partial(steps.tokenizer, config.tokenizer)
    if args.lot:
        roles = steps.Roles(dict(TEXT_FIELDS), dict(TEXT_FIELDS), lot=True)
        sources, inputs = lot_sources(args.lot, TASKS)
        columns = sorted({f for fs in TEXT_FIELDS.values() for f in fs} | {"example_id", "split"})
        report = JobReport(
            out,
            "overlap",
            config=_config_dict(config, args),
            seed=None,
            inputs=inputs,
            options=options,
            card=overlap_card(config),
            figures=OVERLAP_FIGURES,
        )
        records = p | "ReadLot" >> ReadRecords(sources, report, "lot", columns)
        rows = records | report.stage("lot_rows", steps.overlap_row_fn(config, roles, None), setup=setup)
        rows = unique_ids(rows, report)
        test_sets = _test_sets(rows)
        again = p | "ReadLotRef" >> ReadRecords(sources, report, "lot_ref", columns, check=False, blocks=True)
        refs = again | report.stage(
            "lot_reference_rows",
            steps.reference_match_fn(config, roles, quiet=True),
            setup=setup,
            side_inputs={"test_sets": test_sets},
            blocks=True,
            merge=steps.merge_matched,
        )
        labels = rows | "Label" >> beam.Map(lambda r: (steps.split_label(r), 1))
        expected = [f"{t}/{s}" for t in TASKS for s in SPLITS]
        references = {task: f"{task}/train" for task in TASKS}
    else:
        task = table_task(args.test)
        test_fields = _split(args.test_fields) or TEXT_FIELDS.get(task, ("text",))
        ref_fields = _split(args.reference_fields) or ar.REFERENCE_FIELDS
        roles = steps.Roles({task: test_fields}, {task: ref_fields}, lot=False)
        report = JobReport(
            out,
            "overlap",
            config=_config_dict(config, args),
            seed=None,
            inputs=[args.test, args.reference],
            options=options,
            card=overlap_card(config),
            figures=OVERLAP_FIGURES,
        )
        test_src = table_sources(args.test, (".parquet", ".jsonl"), task)
        ref_src = table_sources(args.reference, ("",), task)
        test_rec = p | "ReadTest" >> ReadRecords(
            test_src, report, "test", list(test_fields) + ["example_id", "id", "split"]
        )
        ref_rec = p | "ReadRef" >> ReadRecords(ref_src, report, "reference", list(ref_fields), blocks=True)
        rows_t = test_rec | report.stage("test_rows", steps.overlap_row_fn(config, roles, "test"), setup=setup)
        rows_t = unique_ids(rows_t, report)
        test_sets = _test_sets(rows_t)
        rows_r = ref_rec | report.stage(
            "reference_rows",
            steps.reference_match_fn(config, roles),
            setup=setup,
            side_inputs={"test_sets": test_sets},
            blocks=True,
            merge=steps.merge_matched,
        )
        rows, refs = rows_t, rows_r
        labels = (  # (label, records): a merged MatchedGrams counts its block's documents
            (rows_t | "LabelT" >> beam.Map(lambda r: (task, 1))),
            (rows_r | "LabelR" >> beam.Map(lambda r: ("reference", r.docs))),
        ) | "Labels" >> beam.Flatten()
        expected = [task, "reference"]
        references = {task: args.reference}
    counts = count_check(labels, expected)
    counts | report.stage("splits", ar.check_split)
    names = {"reference": args.reference} if not args.lot else {f"{t}/train": f"{t}/train" for t in TASKS}
    empty = counts | "EmptyReferences" >> beam.FlatMap(_empty_reference, names)
    audit(rows, refs, report, config, references, out, empty)
    if config.tokenizer == "jieba":
        report.record_jieba_backend(p, after=test_sets)  # resolved by the workers that tokenized the test side
    report.finish(p)
    run_pipeline(p, commit_to=args.output)


def unique_ids(rows, report: JobReport):
    """The rows with one test example per task and example_id: a later row (in input order)
    with an earlier one's id is a `duplicate_id` reject naming the row that keeps it, so each
    id has one figure (the stories job's repeated-id check, pipelines.engine.repeated_ids)."""
    repeated = rows | RepeatedIds(steps.example_id_entries)
    return rows | report.stage(
        "dedup_id",
        steps.unique_example_id,
        input_id=operator.attrgetter("input_id"),
        pooled=False,
        side_inputs={"repeated": repeated},
    )


def _test_sets(rows):
    return beam.pvalue.AsSingleton(rows | "TestSets" >> TestSets(), default_value={})


def _split(text: str) -> tuple[str, ...]:
    return tuple(f.strip() for f in text.split(",") if f.strip())


def _config_dict(config: ng.OverlapConfig, args) -> dict:
    return {
        **dataclasses.asdict(config),
        "lot": args.lot,
        "test": args.test,
        "reference": args.reference,
        "test_fields": args.test_fields,
        "reference_fields": args.reference_fields,
    }


if __name__ == "__main__":
    main(run, "overlap")
