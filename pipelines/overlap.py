"""8-gram overlap audit (LOT section 5.6, Table 14) as a Beam job. Wiring only.

    python -m pipelines.overlap --lot DIR --output OUT          # val/test vs each task's train
    python -m pipelines.overlap --test TABLE --reference GLOB --output OUT

The test side's 8-grams (small) become a side input; the reference (text lines, JSON lines
or parquet, any size) is streamed, tokenised, and only its 8-grams that occur in the test
set leave the worker, so memory and shuffle are bounded by the test side. The definitions
are in annotators/ngram_overlap.py and in CARD.md.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
from typing import Sequence

import apache_beam as beam

from annotators.audits import records as ar
from annotators.audits import overlap as ng
from annotators.core.outcome import Drop
from annotators.audits.overlap_report import summarize, table14_markdown
from pipelines.engine import (JobReport, Stage, WriteTable, default_card, expand_input,
                              input_names, join, make_pipeline, parse_job_args, run_pipeline,
                              write_text)
from pipelines.engine.records import ReadRecords, count_check, lot_sources
from schemas.audit import OVER_THRESHOLD_SCHEMA, OVERLAP_EXAMPLES_SCHEMA, OVERLAP_SUMMARY_SCHEMA
from schemas.lot import SPLITS, TASKS, TEXT_FIELDS

_TOKENIZERS: dict = {}


def tokenizer(name: str):
    """The tokenizer for this worker process (jieba's dictionary loads once, in setup)."""
    if name not in _TOKENIZERS:
        _TOKENIZERS[name] = ng.make_tokenizer(name)
    return _TOKENIZERS[name]


@dataclasses.dataclass(frozen=True)
class Roles:
    """Which rows are test examples and which are reference documents, per source."""

    test_fields: dict  # task -> fields every test example must have
    reference_fields: dict  # task -> fields a reference record contributes
    lot: bool  # --lot: a row's split decides (train = reference); else by source


def row_fn(config: ng.OverlapConfig, roles: Roles, source_role: str | None,
           quiet: bool = False):
    """Stage fn: a parsed row becomes ("test", ExampleGrams) or ("reference", task, tokens).

    In --lot mode the same files are read twice: the `lot_rows` Stage (source_role None)
    checks every row, scores val/test rows and marks train rows ("train", task) without
    tokenising them; the `lot_reference_rows` Stage (source_role "reference", quiet)
    tokenises train rows only and skips, without a second rejects row, whatever the first
    Stage rejected. Keeping the reference in its own PCollection lets it stream.
    """

    def fn(item):
        input_id, task, kind, payload = item
        record = payload if isinstance(payload, (dict, Drop)) else ar.parse_record(kind, payload)
        if isinstance(record, Drop):
            return [] if quiet else record
        is_train = record.get("split") == "train"
        if roles.lot and quiet and not is_train:
            return []
        if roles.lot or source_role == "test":
            fields = roles.test_fields[task]
            checked = ar.check_example(record, fields, list_fields=("outline",),
                                       default_split=None if roles.lot else "test",
                                       fallback_id=None if roles.lot else input_id)
            if isinstance(checked, Drop):
                return [] if quiet else checked
            example_id, split = checked
        else:
            fields = ar.reference_fields_of(record, roles.reference_fields[task])
            if isinstance(fields, Drop):
                return fields
        texts = ng.field_texts(record, fields)
        if source_role == "reference":
            return [("reference", task, ng.field_tokens(texts, tokenizer(config.tokenizer), config))]
        if is_train and roles.lot:
            return [("train", task)]
        grams = ng.example_ngrams(texts, tokenizer(config.tokenizer), config)
        return [("test", ng.ExampleGrams(task, split, example_id, grams))]

    return fn


class _UnionSets(beam.CombineFn):
    def create_accumulator(self):
        return set()

    def add_input(self, acc, grams):
        acc.update(grams)
        return acc

    def merge_accumulators(self, accs):
        out = set()
        for acc in accs:
            out |= acc
        return out

    def extract_output(self, acc):
        return frozenset(acc)


class MatchReference(beam.DoFn):
    """Emit (task, 8-gram) for the distinct reference 8-grams that the test side holds."""

    def __init__(self, n: int):
        self._n = n

    def process(self, item, test_sets):
        _, task, token_lists = item
        for gram in ng.matched_ngrams(token_lists, test_sets.get(task, frozenset()), self._n):
            yield task, gram


def audit(rows, refs, report: JobReport, config: ng.OverlapConfig, reference_of, output: str):
    """Score the test examples among `rows` against the reference docs `refs`; write tables."""
    tests = rows | "Tests" >> beam.Filter(lambda r: r[0] == "test") | "Ex" >> beam.Map(lambda r: r[1])
    test_sets = (tests | "TestGrams" >> beam.Map(lambda e: (e.task, e.grams))
                 | "UnionPerTask" >> beam.CombinePerKey(_UnionSets())
                 | "TestSets" >> beam.combiners.ToDict())
    matched = (refs | "Match" >> beam.ParDo(MatchReference(config.n), beam.pvalue.AsSingleton(test_sets))
               | "Distinct" >> beam.Distinct()
               | "ByTask" >> beam.GroupByKey()
               | "AsSets" >> beam.MapTuple(lambda task, grams: (task, frozenset(grams)))
               | "Matched" >> beam.combiners.ToDict())
    scored = tests | "Score" >> beam.Map(
        lambda e, m: ng.score_example(e, m.get(e.task, frozenset())), beam.pvalue.AsSingleton(matched))
    report.tally(scored | WriteTable(join(output, "examples"), OVERLAP_EXAMPLES_SCHEMA,
                                     lambda r: (r["task"], r["split"], r["example_id"])))
    over = scored | "Over" >> beam.Filter(lambda r, t: r["ratio"] > t, config.over_threshold)
    over_rows = over | "OverRow" >> beam.Map(
        lambda r: {k: r[k] for k in ("task", "split", "example_id", "ratio")})
    report.tally(over_rows | WriteTable(join(output, "over_10pct"), OVER_THRESHOLD_SCHEMA,
                                        lambda r: (r["task"], r["split"], r["example_id"])))
    summaries = (scored | "BySplit" >> beam.Map(lambda r: ((r["task"], r["split"]), r))
                 | "GroupSplit" >> beam.GroupByKey()
                 | "Summarize" >> beam.MapTuple(lambda key, rs: summarize(
                     key[0], key[1], reference_of(key[0]), rs, config.over_threshold)))
    report.tally(summaries | WriteTable(join(output, "summary"), OVERLAP_SUMMARY_SCHEMA,
                                        lambda r: (r["task"], r["split"])))
    listed = summaries | "SummaryList" >> beam.combiners.ToList() | "SortSummary" >> beam.Map(
        lambda rs: sorted(rs, key=lambda r: (r["task"], r["split"])))
    listed | "Markdown" >> beam.Map(
        lambda rs: write_text(join(output, "summary.md"), table14_markdown(rs, config.n)))
    ids = over | "Ids" >> beam.combiners.ToList() | "IdList" >> beam.Map(lambda rs: "".join(
        f"{r['task']}\t{r['split']}\t{r['example_id']}\n"
        for r in sorted(rs, key=lambda r: (r["task"], r["split"], r["example_id"]))))
    ids | "WriteIds" >> beam.Map(lambda text: write_text(join(output, "over_10pct.tsv"), text))
    report.extra("overlap", listed)


def card_fn(config: ng.OverlapConfig):
    def card(stats: dict) -> str:
        definition = (ng.__doc__ or "").split("Definition", 1)[-1]
        return "\n".join([default_card(stats), f"## {config.n}-gram overlap definition", "",
                          "Definition" + definition, table14_markdown(stats["overlap"], config.n)])
    return card


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lot", help="LOT output folder with clozet/senpos/plotcom/outgen tables")
    parser.add_argument("--test", help="a test table (parquet folder/glob or JSON lines)")
    parser.add_argument("--reference", help="reference files: text (a document per line), "
                        "JSON lines or parquet; globs and .gz allowed")
    parser.add_argument("--output", required=True)
    parser.add_argument("--tokenizer", default="jieba", choices=ng.TOKENIZERS)
    parser.add_argument("--n", type=int, default=8)
    parser.add_argument("--test-fields", default="", help="comma-separated, for a --test "
                        "table that is not a LOT task (default: text)")
    parser.add_argument("--reference-fields", default="", help="comma-separated text fields "
                        "of a JSON-lines/parquet reference (default: %s)" % ",".join(ar.REFERENCE_FIELDS))
    return parser


def table_task(pattern: str, paths: Sequence[str]) -> str:
    folder = pattern if os.path.isdir(pattern) else os.path.dirname(paths[0])
    return os.path.basename(folder.rstrip("/")) or "test"


def run(argv: Sequence[str] | None = None) -> None:
    args, options = parse_job_args(build_parser(), argv)
    if bool(args.lot) == bool(args.test and args.reference):
        raise SystemExit("give either --lot DIR, or --test TABLE and --reference GLOB")
    config = ng.OverlapConfig(n=args.n, tokenizer=args.tokenizer)
    p = make_pipeline(options)
    setup = lambda: tokenizer(config.tokenizer)  # noqa: E731
    if args.lot:
        roles = Roles(dict(TEXT_FIELDS), dict(TEXT_FIELDS), lot=True)
        sources, inputs = lot_sources(args.lot, TASKS)
        columns = sorted({f for fs in TEXT_FIELDS.values() for f in fs} | {"example_id", "split"})
        report = JobReport(args.output, "overlap", config=_config_dict(config, args), seed=None,
                           inputs=inputs, options=options, card=card_fn(config))
        records = p | "ReadLot" >> ReadRecords(sources, report, "lot", columns)
        rows = report.add("lot_rows", records | Stage("lot_rows", row_fn(config, roles, None),
                                                       setup=setup))
        again = p | "ReadLotRef" >> ReadRecords(sources, report, "lot_ref", columns, check=False)
        refs = report.add("lot_reference_rows", again | Stage(
            "lot_reference_rows", row_fn(config, roles, "reference", quiet=True), setup=setup))
        labels = rows | "Label" >> beam.Map(lambda r: f"{r[1].task}/{r[1].split}" if r[0] == "test"
                                            else f"{r[1]}/train")
        expected = [f"{t}/{s}" for t in TASKS for s in SPLITS]
        reference_of = lambda task: f"{task}/train"  # noqa: E731
    else:
        test_paths = expand_input(args.test, (".parquet", ".jsonl"))
        task = table_task(args.test, test_paths)
        ref_paths = expand_input(args.reference, ("",))
        test_fields = _split(args.test_fields) or TEXT_FIELDS.get(task, ("text",))
        ref_fields = _split(args.reference_fields) or ar.REFERENCE_FIELDS
        roles = Roles({task: test_fields}, {task: ref_fields}, lot=False)
        report = JobReport(args.output, "overlap", config=_config_dict(config, args), seed=None,
                           inputs=[args.test, args.reference], options=options,
                           card=card_fn(config))
        test_src = [(pth, task, name) for pth, name in input_names(test_paths, args.test).items()]
        ref_src = [(pth, task, name) for pth, name in input_names(ref_paths, args.reference).items()]
        test_rec = p | "ReadTest" >> ReadRecords(test_src, report, "test", list(test_fields) + ["example_id", "id", "split"])
        ref_rec = p | "ReadRef" >> ReadRecords(ref_src, report, "reference", list(ref_fields))
        rows_t = report.add("test_rows", test_rec | Stage("test_rows", row_fn(config, roles, "test"), setup=setup))
        rows_r = report.add("reference_rows", ref_rec | Stage("reference_rows", row_fn(config, roles, "reference"), setup=setup))
        rows, refs = rows_t, rows_r
        labels = ((rows_t | "LabelT" >> beam.Map(lambda r: task)),
                  (rows_r | "LabelR" >> beam.Map(lambda r: "reference"))) | "Labels" >> beam.Flatten()
        expected = [task, "reference"]
        reference_of = lambda _task: args.reference  # noqa: E731
    report.add("splits", count_check(labels, expected) | Stage("splits", ar.check_split))
    audit(rows, refs, report, config, reference_of, args.output)
    report.finish(p)
    run_pipeline(p)


def _split(text: str) -> tuple[str, ...]:
    return tuple(f.strip() for f in text.split(",") if f.strip())


def _config_dict(config: ng.OverlapConfig, args) -> dict:
    return {**dataclasses.asdict(config), "lot": args.lot, "test": args.test,
            "reference": args.reference, "test_fields": args.test_fields,
            "reference_fields": args.reference_fields}


if __name__ == "__main__":
    run()
