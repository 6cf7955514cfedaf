"""GLGE difficulty levels for any source/target task (GLGE paper section 2.4): wiring only.

    python -m pipelines.glge --input DIR --output OUT [--lot LOT_DIR] [--seed N] [--tasks ...]

Input: `DIR/{task}_data/org_data/{train,dev,test}.{src,tgt}` and/or LOT's `plotcom` and
`outgen` tables under LOT_DIR (tasks `lot_plotcom`, `lot_outgen`). Output: the same layout
under `OUT/{easy,medium,medium+,hard}/`, the `OUT/levels` table, `stats.json`, `CARD.md`.
One element per task: scoring needs all of a task's test targets, and a broken task is
rejected whole (load stage), so no partial output is ever written for it.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
from typing import Sequence

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems

from annotators.glge.card import glge_section
from annotators.glge.layout import glge_task, lot_task, read_parquet_rows
from annotators.glge.levels import GlgeConfig, build_levels, level_files, level_rows
from annotators.glge.score import STOP_WORD_LISTS, TOKENIZERS, TokenConfig, preload
from annotators.core.outcome import Drop
from pipelines.engine import (JobReport, Stage, WriteTable, default_card, delete_matching,
                              expand_input, is_local_path, join, make_pipeline, parse_job_args,
                              read_bytes, run_pipeline, write_bytes)
from schemas.glge import FILES, LEVELS, LEVELS_SCHEMA

LOT_KINDS = ("plotcom", "outgen")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--input", help="folder in the GLGE layout DIR/{task}_data/org_data/")
    ap.add_argument("--lot", help="LOT output folder holding plotcom/ and outgen/ tables")
    ap.add_argument("--output", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tasks", nargs="+", help="only these tasks (default: all found)")
    ap.add_argument("--tokenizer", choices=TOKENIZERS, default="whitespace")
    ap.add_argument("--stop_words", choices=STOP_WORD_LISTS, default="spacy_en")
    ap.add_argument("--lot_tokenizer", choices=TOKENIZERS, default="jieba")
    ap.add_argument("--lot_stop_words", choices=STOP_WORD_LISTS, default="spacy_zh")
    ap.add_argument("--shards", type=int, default=1, help="parquet files of the levels table")
    return ap


def discover_glge(root: str) -> list[str]:
    """Task names: every `{task}_data` folder (locally) or any file under its org_data."""
    if is_local_path(root):
        return sorted(d[:-len("_data")] for d in os.listdir(root)
                      if d.endswith("_data") and len(d) > 5 and os.path.isdir(os.path.join(root, d)))
    found = FileSystems.match([join(root, "*_data/org_data/*")])[0].metadata_list
    return sorted({m.path[len(root.rstrip("/")) + 1:].split("/", 1)[0][:-len("_data")] for m in found})


def task_specs(args) -> list[tuple]:
    """(task, kind, location, parquet paths) for every task to build, sorted by name."""
    specs = {}
    if args.input:
        for task in discover_glge(args.input):
            specs[task] = (task, "glge", args.input, ())
    if args.lot:
        for kind in LOT_KINDS:
            try:
                paths = tuple(expand_input(join(args.lot, kind), [".parquet"]))
            except FileNotFoundError:
                paths = ()
            specs[f"lot_{kind}"] = (f"lot_{kind}", kind, join(args.lot, kind), paths)
    if args.tasks:
        specs = {t: specs.get(t, (t, "glge", args.input or "", ())) for t in args.tasks}
    return [specs[t] for t in sorted(specs)]


def _read_optional(path: str) -> bytes | None:
    return read_bytes(path) if FileSystems.exists(path) else None


def load_task(spec: tuple):
    """Read one task's files and check them; a Drop names the broken file and line."""
    task, kind, location, paths = spec
    if kind == "glge":
        prefix = location.rstrip("/") + "/" if location else ""
        files = {key: _read_optional(join(location, f"{task}_data", "org_data", key)) if location
                 else None for key in FILES}
        result = glge_task(task, files, prefix=prefix)
    else:
        if not paths:
            return Drop("missing_split", f"{location}: no parquet files for LOT {kind}")
        tables = []
        for path in paths:
            rows = read_parquet_rows(path, read_bytes(path))
            if isinstance(rows, Drop):
                return rows
            tables.append((path, rows))
        result = lot_task(task, kind, tables)
    return result if isinstance(result, Drop) else [result]


def write_task_files(levels, output: str) -> tuple[str, dict]:
    """Write every level's six files of one task; returns (task, per-level summary)."""
    for level, key, data in level_files(levels):
        write_bytes(join(output, level, f"{levels.task}_data", "org_data", key), data)
    return levels.task, levels.summary


def glge_card(stats: dict) -> str:
    return default_card(stats) + glge_section(stats)


def run(argv: Sequence[str] | None = None) -> None:
    parser = build_parser()
    args, options = parse_job_args(parser, argv)
    if not args.input and not args.lot:
        parser.error("give --input (GLGE layout) and/or --lot (LOT tables)")
    if args.input and is_local_path(args.input) and not os.path.isdir(args.input):
        parser.error(f"--input {args.input}: not a folder")
    config = GlgeConfig(en=TokenConfig(args.tokenizer, args.stop_words),
                        zh=TokenConfig(args.lot_tokenizer, args.lot_stop_words))
    specs = task_specs(args)
    for task, *_ in specs:  # a re-run never leaves stale files of a task that now fails
        for level in LEVELS:
            delete_matching(join(args.output, level, f"{task}_data", "org_data", "*"))
    seed, output = args.seed, args.output
    report = JobReport(output, "glge", config={**dataclasses.asdict(config), "tasks": [s[0] for s in specs]},
                       seed=seed, inputs=[x for x in (args.input, args.lot) if x], options=options,
                       card=glge_card)
    p = make_pipeline(options)
    tasks = p | "Tasks" >> beam.Create(specs)
    loaded = report.add("load", tasks | "Load" >> Stage("load", load_task, input_id=lambda s: s[0]))
    langs = sorted({"zh" if kind in LOT_KINDS else "en" for _, kind, *_ in specs})
    levels = report.add("levels", loaded | "Levels" >> Stage(
        "levels", lambda t: [build_levels(t, config, seed)], input_id=lambda t: t.task,
        setup=lambda: [preload(config.tokens_for(lang)) for lang in langs]))
    summaries = levels | "WriteFiles" >> beam.Map(write_task_files, output)
    report.extra("glge", summaries | "Summaries" >> beam.combiners.ToList()
                 | "SummaryDict" >> beam.Map(lambda pairs: dict(sorted(pairs))))
    rows = levels | "Rows" >> beam.FlatMap(level_rows)
    report.tally(rows | WriteTable(join(output, "levels"), LEVELS_SCHEMA,
                                   lambda r: (r["task"], r["level"], r["line_index"]),
                                   name="levels", shards=args.shards))
    report.finish(p)
    run_pipeline(p)


if __name__ == "__main__":
    run()
