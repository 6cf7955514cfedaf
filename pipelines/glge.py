"""GLGE difficulty levels for any source/target task (GLGE paper section 2.4): wiring only.

    python -m pipelines.glge --input DIR --output OUT [--lot LOT_DIR] [--seed N] [--tasks ...]

Input: `DIR/{task}_data/org_data/{train,dev,test}.{src,tgt}` and/or LOT's `plotcom` and
`outgen` tables under LOT_DIR (tasks `lot_plotcom`, `lot_outgen`). Output: the same layout
under `OUT/{easy,medium,medium+,hard}/`, the `OUT/levels` table, `stats.json`, `CARD.md`.
One element per task: scoring needs all of a task's test targets, and a broken task is
rejected whole (load stage), so no partial output is ever written for it. The tasks are found
when the job runs (a worker lists the folders); every file is written under the staging folder
and replaces the output's contents only after a finished run.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
from collections.abc import Callable, Sequence

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import StandardOptions

from annotators.glge.card import FIGURES as GLGE_FIGURES
from annotators.glge.card import glge_card
from annotators.glge.levels import GlgeConfig, level_files, level_rows
from annotators.glge.score import LotTokenConfig, TokenConfig, tokenizer_name, tokenizer_spec
from annotators.glge.steps import LOT_KINDS, load_task, preload_langs, score_task, summaries_by_task
from annotators.harness import glge as harness_tasks
from annotators.text.tokenizers import get_tokenizer
from pipelines.engine import (
    LOCAL_RUNNERS,
    JobArgumentParser,
    JobReport,
    WriteTable,
    add_config_flags,
    config_from_args,
    expand_input,
    is_local_path,
    join,
    make_pipeline,
    parse_job_args,
    read_bytes,
    run_pipeline,
    staging_path,
    write_bytes,
)
from pipelines.engine.usage import main, warn
from schemas.glge import LEVELS_SCHEMA, TaskLevels, TaskSpec, TaskSummary


def build_parser() -> argparse.ArgumentParser:
    """The job's flags; tokenizer flags come from `TokenConfig` (GLGE) and `LotTokenConfig` (LOT)."""
    ap = JobArgumentParser(
        prog="python -m pipelines.glge",
        description="GLGE difficulty levels for any source/target task: Medium, Hard and "
        "Medium+low-frequency training subsets (GLGE paper section 2.4).",
    )
    ap.add_argument("--input", help="folder in the GLGE layout DIR/{task}_data/org_data/")
    ap.add_argument("--lot", help="LOT output folder holding plotcom/ and outgen/ tables")
    ap.add_argument("--output", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tasks", nargs="+", help="only these tasks (default: all found)")
    add_config_flags(ap, TokenConfig, exclude=("lowercase", "tokenizer"))
    add_config_flags(ap, LotTokenConfig, prefix="lot_", exclude=("lowercase", "tokenizer"))
    for prefix, cls in (("", TokenConfig), ("lot_", LotTokenConfig)):
        field = {f.name: f for f in dataclasses.fields(cls)}["tokenizer"]
        ap.add_argument(
            f"--{prefix}tokenizer".replace("_", "-"),
            dest=f"{prefix}tokenizer",
            type=_tokenizer_flag,
            default=field.default,
            help=f"{field.metadata['help']} (default: {field.default})",
        )
    ap.add_argument(
        "--shards", type=int, default=None, help="parquet files per table (default: one per --shard-bytes of rows)"
    )
    return ap


def _tokenizer_flag(value: str) -> str:
    """A tokenizer flag's value, checked now: a known name, or a readable tokenizer.json."""
    try:
        get_tokenizer(tokenizer_spec(value))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def glge_config(args: argparse.Namespace) -> GlgeConfig:
    return GlgeConfig(en=config_from_args(args, TokenConfig), zh=config_from_args(args, LotTokenConfig, prefix="lot_"))


# ----------------------------------------------------------------------------- finding tasks
def discover_glge(root: str) -> list[str]:
    """Task names: every `{task}_data` folder (locally) or any file under its org_data."""
    if is_local_path(root):
        return sorted(
            d[: -len("_data")]
            for d in os.listdir(root)
            if d.endswith("_data") and len(d) > 5 and os.path.isdir(os.path.join(root, d))
        )
    found = FileSystems.match([join(root, "*_data/org_data/*")])[0].metadata_list
    return sorted({m.path[len(root.rstrip("/")) + 1 :].split("/", 1)[0][: -len("_data")] for m in found})


def _lot_parquet_paths(folder: str) -> tuple[str, ...]:
    try:
        return tuple(expand_input(folder, [".parquet"]))
    except FileNotFoundError:
        return ()


def task_specs(args: argparse.Namespace) -> list[TaskSpec]:
    """Every task to build, sorted by name; `--tasks` names not found still get a spec (rejected).

    Lists the input folders, so the job calls it when it runs (`TaskSpecs`), never while the
    graph is built.
    """
    specs = {}
    if args.input:
        for task in discover_glge(args.input):
            specs[task] = TaskSpec(task, "glge", args.input)
    if args.lot:
        for kind in LOT_KINDS:
            folder = join(args.lot, kind)
            specs[f"lot_{kind}"] = TaskSpec(f"lot_{kind}", kind, folder, _lot_parquet_paths(folder))
    if args.tasks:
        specs = {t: specs.get(t, TaskSpec(t, "glge", args.input or "")) for t in args.tasks}
    return [specs[t] for t in sorted(specs)]


def find_tasks(_, input: str | None, lot: str | None, tasks: Sequence[str] | None) -> list[TaskSpec]:
    """`task_specs` of the job's input flags, run when the job runs (a worker lists the folders)."""
    return task_specs(argparse.Namespace(input=input, lot=lot, tasks=list(tasks) if tasks else None))


def job_langs(args: argparse.Namespace) -> list[str]:
    """Tokenizer profiles the workers preload, from the flags alone (the tasks are found later):
    "zh" when LOT tables may be built, "en" when GLGE-layout tasks may be."""
    lot_tasks = {f"lot_{kind}" for kind in LOT_KINDS}
    wanted = set(args.tasks) if args.tasks else None
    langs = set()
    if args.lot and (wanted is None or wanted & lot_tasks):
        langs.add("zh")
    if args.input and (wanted is None or wanted - lot_tasks):
        langs.add("en")
    return sorted(langs)


def _is_remote_runner(pipeline: beam.Pipeline) -> bool:
    return pipeline.options.view_as(StandardOptions).runner not in LOCAL_RUNNERS


class TaskSpecs(beam.PTransform):
    """The TaskSpecs to build, found when the job runs: task folders listed and LOT tables matched
    by a worker (local or `gs://`), so building the graph lists nothing. On a remote runner the
    tasks are reshuffled over the workers before the heavy load and scoring steps."""

    def __init__(self, args: argparse.Namespace):
        super().__init__()
        self._input, self._lot = args.input, args.lot
        self._tasks = tuple(args.tasks) if args.tasks else None

    def expand(self, pbegin):
        specs = (
            pbegin
            | "Roots" >> beam.Create([None])
            | "FindTasks" >> beam.FlatMap(find_tasks, self._input, self._lot, self._tasks)
        )
        return specs | "Spread" >> beam.Reshuffle() if _is_remote_runner(pbegin.pipeline) else specs


def stats_config(specs: Sequence[TaskSpec], config: GlgeConfig) -> dict:
    """stats.json's `config`: the settings and the tasks found when the job ran, by name."""
    out = dataclasses.asdict(config)
    for lang in ("en", "zh"):  # a tokenizer.json is named by its hash, never by its path
        out[lang]["tokenizer"] = tokenizer_name(out[lang]["tokenizer"])
    return {**out, "tasks": sorted(spec.task for spec in specs)}


def read_if_exists(location: str, *parts: str) -> bytes | None:
    """The bytes of `location/parts...` (local or `gs://`), or None when there is no such file."""
    path = join(location, *parts) if parts else location
    return read_bytes(path) if FileSystems.exists(path) else None


# ----------------------------------------------------------------------------- transforms
class LoadTasks(beam.PTransform):
    """TaskSpec -> checked GlgeTask (stage `load`); a broken task goes whole to rejects."""

    def __init__(self, report, read: Callable[..., bytes | None] = read_if_exists):
        super().__init__()
        self._report, self._read = report, read

    def expand(self, specs):
        return specs | self._report.stage(
            "load", functools.partial(load_task, read=self._read), input_id=lambda spec: spec.task
        )


class ScoreTasks(beam.PTransform):
    """GlgeTask -> TaskLevels (stage `levels`): scores and the four levels' selections."""

    def __init__(self, report, config: GlgeConfig, seed: int, langs: Sequence[str]):
        super().__init__()
        self._report, self._config, self._seed, self._langs = report, config, seed, tuple(langs)

    def expand(self, tasks):
        score = functools.partial(score_task, config=self._config, seed=self._seed)
        setup = functools.partial(preload_langs, self._config, self._langs)
        return tasks | self._report.stage("levels", score, input_id=lambda task: task.task, setup=setup)


def write_task_files(levels: TaskLevels, output: str) -> TaskSummary:
    """Write every level's six files of one task; returns its per-level summary."""
    for file in level_files(levels):
        write_bytes(join(output, file.level, f"{levels.task}_data", "org_data", file.key), file.data)
    return TaskSummary(levels.task, levels.summary)


class WriteTaskFiles(beam.PTransform):
    """TaskLevels -> the GLGE layout under `output/{level}/`; yields one TaskSummary per task."""

    def __init__(self, output: str):
        super().__init__()
        self._output = output

    def expand(self, levels):
        return levels | "Write" >> beam.Map(write_task_files, self._output)


class SummariseTasks(beam.PTransform):
    """TaskSummary -> one dict task -> summary, sorted by task (stats.json `glge`)."""

    def expand(self, summaries):
        return summaries | "ToList" >> beam.combiners.ToList() | "ByTask" >> beam.Map(summaries_by_task)


class LevelRows(beam.PTransform):
    """TaskLevels -> one LEVELS_SCHEMA row per training line per level."""

    def expand(self, levels):
        return levels | "Rows" >> beam.FlatMap(level_rows)


# ----------------------------------------------------------------------------- the job
def check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if not args.input and not args.lot:
        parser.error("give --input (GLGE layout) and/or --lot (LOT tables)")
    if args.input and is_local_path(args.input) and not os.path.isdir(args.input):
        parser.error(f"--input {args.input}: not a folder")
    if args.lot and is_local_path(args.lot) and not os.path.isdir(args.lot):
        parser.error(f"--lot {args.lot}: not a folder")  # once an empty build, two missing_table rows, exit 0
    if args.tasks and all(is_local_path(x) for x in (args.input, args.lot) if x):
        known = [spec.task for spec in task_specs(argparse.Namespace(input=args.input, lot=args.lot, tasks=None))]
        unknown = [t for t in args.tasks if t not in known]
        if unknown:  # a typo built nothing but a missing_split row, with exit 0
            parser.error(
                f"--tasks {' '.join(unknown)}: no such task in "
                f"{' or '.join(f'--{f} {v}' for f, v in (('input', args.input), ('lot', args.lot)) if v)} "
                f"(found: {', '.join(known) or 'none'})"
            )


def build_graph(
    p: beam.Pipeline, report: JobReport, args: argparse.Namespace, config: GlgeConfig, langs: Sequence[str], out: str
) -> None:
    """specs -> load -> levels -> level files, the `levels` table and stats.json's `glge` summaries.

    stats.json's `config` gets its `tasks` from the specs found when the job ran (the extra
    replaces the `config` value in place, so the key keeps its place in stats.json).
    """
    specs = p | "TaskSpecs" >> TaskSpecs(args)
    report.extra("config", specs | "TaskList" >> beam.combiners.ToList() | "Config" >> beam.Map(stats_config, config))
    levels = specs | "Load" >> LoadTasks(report) | "Levels" >> ScoreTasks(report, config, args.seed, langs)
    summaries = levels | "WriteFiles" >> WriteTaskFiles(out)
    report.extra("glge", summaries | "Summaries" >> SummariseTasks())
    rows = levels | "LevelRows" >> LevelRows()
    report.tally(
        rows
        | WriteTable(
            join(out, "levels"),
            LEVELS_SCHEMA,
            lambda r: (r["task"], r["level"], r["line_index"]),
            name="levels",
            shards=args.shards,
        )
    )


def run(argv: Sequence[str] | None = None) -> None:
    parser = build_parser()
    args, options = parse_job_args(parser, argv)
    check_args(parser, args)
    config, out = glge_config(args), staging_path(args.output)
    report = JobReport(
        out,
        "glge",
        config=stats_config([], config),
        seed=args.seed,
        inputs=[x for x in (args.input, args.lot) if x],
        options=options,
        card=glge_card,
        figures=GLGE_FIGURES,
        attachments=harness_tasks.attachments,
    )
    if args.input and is_local_path(args.input) and not args.tasks and not discover_glge(args.input):
        warn(
            f"--input {args.input!r} holds no GLGE task folder ({{task}}_data/org_data/): no GLGE task is built from it"
        )
    p = make_pipeline(options)
    build_graph(p, report, args, config, job_langs(args), out)
    report.finish(p)
    run_pipeline(p, commit_to=args.output)


if __name__ == "__main__":
    main(run, "glge")
