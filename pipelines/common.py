"""Beam plumbing every storybench job shares (wiring only; text logic is in annotators/).

- `parse_job_args`: the job's own flags via argparse, the rest to `PipelineOptions`, so one
  command runs locally or on Dataflow (apache_beam/examples/wordcount.py does the same).
- `make_pipeline`: `DirectRunner` (the default) is mapped to the in-process `FnApiRunner`,
  which never downloads a Prism binary and still honours
  `--direct_running_mode=multi_processing --direct_num_workers=N`.
- `Stage`: applies a pure function `fn(record) -> iterable | Drop` and yields outputs, rejects
  rows and tallies; exceptions become rejects (`internal_error`) instead of crashing.
- `WriteTable` / `WriteJsonlGroups`: sorted, sharded-by-stable-hash writes, so outputs are
  byte-identical on any runner and worker count.
- `JobReport`: adds up tallies into `stats.json` (read = written + rejected per stage) and
  writes `CARD.md`.
"""
from __future__ import annotations

import argparse
import io
import json
import logging
import traceback
from typing import Any, Callable, Iterable, Sequence

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.pvalue import TaggedOutput

from annotators.ids import stable_int
from annotators.outcome import Drop
from schemas.common import REJECTS_SCHEMA, SCHEMA_VERSION, Reject

LOG = logging.getLogger("storybench")
REJECTS = "rejects"
TALLY = "tally"
READ_ERROR = "__read_error__"
LOCAL_RUNNERS = {None, "", "DirectRunner", "FnApiRunner", "direct", "fnapi"}


# ----------------------------------------------------------------------------- options
def _alias_separators(parser: argparse.ArgumentParser) -> None:
    """Accept `--prefix-lengths` and `--prefix_lengths` alike for every job flag."""
    for action in list(parser._actions):
        for opt in list(action.option_strings):
            if not opt.startswith("--"):
                continue
            for alt in ("--" + opt[2:].replace("_", "-"), "--" + opt[2:].replace("-", "_")):
                if alt not in parser._option_string_actions:
                    action.option_strings.append(alt)
                    parser._option_string_actions[alt] = action


def parse_job_args(parser: argparse.ArgumentParser, argv: Sequence[str] | None):
    """Split argv into (job args, PipelineOptions); job flags take `-` or `_` alike."""
    _alias_separators(parser)
    args, beam_argv = parser.parse_known_args(argv)
    return args, PipelineOptions(beam_argv)


def runner_name(options: PipelineOptions) -> str:
    runner = options.view_as(StandardOptions).runner
    return "FnApiRunner" if runner in LOCAL_RUNNERS else str(runner)


def make_pipeline(options: PipelineOptions) -> beam.Pipeline:
    """A Pipeline on the in-process FnApiRunner for local runs, else the named runner."""
    if options.view_as(StandardOptions).runner in LOCAL_RUNNERS:
        from apache_beam.runners.portability.fn_api_runner import FnApiRunner

        return beam.Pipeline(runner=FnApiRunner(), options=options)
    return beam.Pipeline(options=options)


def is_local_path(path: str) -> bool:
    return "://" not in path


def join(*parts: str) -> str:
    return FileSystems.join(*parts) if parts else ""


# ----------------------------------------------------------------------------- files
def expand_input(pattern: str, exts: Sequence[str] = ()) -> list[str]:
    """Matched file paths for a file, glob or folder (a folder means its files with `exts`).

    Raises FileNotFoundError with the pattern when nothing matches, at construction time.
    """
    patterns = [pattern]
    if is_local_path(pattern):
        import os

        if os.path.isdir(pattern):
            patterns = [os.path.join(pattern, f"*{e}") for e in exts] or [os.path.join(pattern, "*")]
    paths: list[str] = []
    for pat in patterns:
        try:
            result = FileSystems.match([pat])[0]
        except Exception:  # a glob with no match raises on some filesystems
            continue
        paths.extend(m.path for m in result.metadata_list)
    paths = sorted(set(paths))
    if not paths:
        raise FileNotFoundError(f"no input files match {pattern!r}")
    return paths


def input_names(paths: Sequence[str], pattern: str) -> dict[str, str]:
    """Each path relative to the glob-free folder of `pattern`: ids stable across machines."""
    cut = min([i for i, c in enumerate(pattern) if c in "*?["] or [len(pattern)])
    fixed = pattern[:cut]
    if is_local_path(fixed):
        import os

        fixed = fixed + "/" if os.path.isdir(fixed) and not fixed.endswith("/") else fixed
    prefix = fixed.rsplit("/", 1)[0] + "/" if "/" in fixed else ""
    return {p: p[len(prefix):] if prefix and p.startswith(prefix) else p.rsplit("/", 1)[-1]
            for p in paths}


def read_bytes(path: str) -> bytes:
    with FileSystems.open(path, mime_type="application/octet-stream", compression_type="uncompressed") as f:
        return f.read()


def write_bytes(path: str, data: bytes) -> None:
    with FileSystems.create(path, mime_type="application/octet-stream", compression_type="uncompressed") as f:
        f.write(data)


def write_text(path: str, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def delete_matching(pattern: str) -> None:
    """Delete stale outputs (construction time), so a re-run never mixes old shards."""
    try:
        paths = [m.path for m in FileSystems.match([pattern])[0].metadata_list]
    except Exception:
        return
    if paths:
        FileSystems.delete(paths)


class ReadLines(beam.PTransform):
    """(input_id "name:line", raw bytes) for every line of every matched file, streamed."""

    def __init__(self, paths: Sequence[str], names: dict[str, str] | None = None):
        super().__init__()
        self._paths = list(paths)
        self._names = names or {p: p.rsplit("/", 1)[-1] for p in self._paths}

    def expand(self, pbegin):
        names = self._names

        def lines(path: str):
            with FileSystems.open(path, compression_type="uncompressed") as f:
                for number, raw in enumerate(io.BufferedReader(f), start=1):
                    yield f"{names[path]}:{number}", raw.rstrip(b"\r\n")

        return pbegin | "Paths" >> beam.Create(self._paths) | "Lines" >> beam.FlatMap(lines)


class ReadFiles(beam.PTransform):
    """(input_id, whole-file bytes) for every matched file: one element per book/page/game."""

    def __init__(self, paths: Sequence[str], names: dict[str, str] | None = None):
        super().__init__()
        self._paths = list(paths)
        self._names = names or {p: p.rsplit("/", 1)[-1] for p in self._paths}

    def expand(self, pbegin):
        names = self._names
        return (
            pbegin
            | "Paths" >> beam.Create(self._paths)
            | "Read" >> beam.Map(lambda p: (names[p], read_bytes(p)))
        )


class ReadParquetRows(beam.PTransform):
    """(input_id "name:row", row dict) for every row of every matched parquet file, streamed.

    A file that cannot be read yields one row {READ_ERROR: message} for the parser to reject.
    """

    def __init__(self, paths: Sequence[str], names: dict[str, str] | None = None,
                 columns: Sequence[str] | None = None):
        super().__init__()
        self._paths = list(paths)
        self._names = names or {p: p.rsplit("/", 1)[-1] for p in self._paths}
        self._columns = list(columns) if columns else None

    def expand(self, pbegin):
        names, columns = self._names, self._columns

        def rows(path: str):
            number = 0
            try:
                with FileSystems.open(path, compression_type="uncompressed") as f:
                    for batch in pq.ParquetFile(f).iter_batches(batch_size=1024, columns=columns):
                        for row in batch.to_pylist():
                            yield f"{names[path]}:{number}", row
                            number += 1
            except Exception as exc:  # a corrupt file becomes one record the parser rejects
                yield f"{names[path]}:{number}", {READ_ERROR: f"{type(exc).__name__}: {exc}"}

        return pbegin | "Paths" >> beam.Create(self._paths) | "Rows" >> beam.FlatMap(rows)


# ----------------------------------------------------------------------------- stages
class _StageFn(beam.DoFn):
    def __init__(self, stage: str, fn: Callable, input_id: Callable, setup: Callable | None,
                 grouped: bool):
        self._stage, self._fn, self._input_id, self._setup = stage, fn, input_id, setup
        self._grouped = grouped
        self._counters: dict[str, Any] = {}

    def setup(self):
        if self._setup is not None:
            self._setup()

    def _count(self, outcome: str):
        if outcome not in self._counters:
            self._counters[outcome] = Metrics.counter(self._stage, outcome)
        self._counters[outcome].inc()

    def _outcomes(self, element, side):
        """(input_id, list of outputs | Drop) per input record held by `element`."""
        try:
            if self._grouped:
                return [(i, r if isinstance(r, Drop) else list(r))
                        for i, r in self._fn(element, **side)]
            result = self._fn(element, **side)
            return [(self._input_id(element), result if isinstance(result, Drop) else list(result))]
        except Exception as exc:  # bad input must not crash the job; it is recorded instead
            tb = traceback.format_exc(limit=3).strip().splitlines()[-1]
            drop = Drop("internal_error", f"{type(exc).__name__}: {exc} | {tb}"[:2000])
            return [(self._input_id(element), drop)]

    def process(self, element, **side):
        for input_id, result in self._outcomes(element, side):
            yield TaggedOutput(TALLY, (f"{self._stage}|read", 1))
            if isinstance(result, Drop):
                self._count(f"rejected/{result.reason}")
                yield TaggedOutput(REJECTS, Reject(self._stage, str(input_id), result.reason,
                                                   result.detail).to_row())
                yield TaggedOutput(TALLY, (f"{self._stage}|rejected", 1))
                yield TaggedOutput(TALLY, (f"{self._stage}|rejected/{result.reason}", 1))
                continue
            self._count("written")
            yield TaggedOutput(TALLY, (f"{self._stage}|written", 1))
            if result:
                yield TaggedOutput(TALLY, (f"{self._stage}|outputs", len(result)))
            yield from result


class Stage(beam.PTransform):
    """Apply a pure `fn(record) -> iterable of outputs | Drop` and account for every input.

    With `grouped=True`, `fn(element)` instead returns `[(input_id, outputs | Drop), ...]`,
    one pair per input record the element holds (after a GroupByKey / CoGroupByKey), so
    dedup and join steps keep the same accounting. `side_inputs` (name -> AsList/AsDict/...)
    reach `fn` as keyword arguments. Returns a DoOutputsTuple with the main
    output, `rejects` (rows of REJECTS_SCHEMA) and `tally`; register it with `report.add`.
    """

    def __init__(self, stage: str, fn: Callable, *, input_id: Callable = lambda e: e[0],
                 setup: Callable | None = None, grouped: bool = False,
                 side_inputs: dict[str, Any] | None = None):
        super().__init__(f"Stage[{stage}]")
        self._args = (stage, fn, input_id, setup, grouped)
        self._side = side_inputs or {}

    def expand(self, pcoll):
        return pcoll | beam.ParDo(_StageFn(*self._args), **self._side).with_outputs(
            REJECTS, TALLY, main="main")


# ----------------------------------------------------------------------------- writing
def _shard_of(key: Any, shards: int) -> int:
    return stable_int("shard", json.dumps(key, ensure_ascii=False, default=str)) % shards


def _parquet_bytes(rows: list[dict], schema: pa.Schema) -> bytes:
    table = pa.Table.from_pylist(rows, schema=schema)
    for field in schema:
        if not field.nullable and table.column(field.name).null_count:
            raise ValueError(f"null values in non-nullable field {field.name!r}")
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue().to_pybytes()


class WriteTable(beam.PTransform):
    """Write row dicts as a parquet table folder `path/part-SSSSS-of-NNNNN.parquet`.

    Rows are spread over `shards` by a stable hash of `sort_key(row)` and sorted within each
    shard, so the bytes do not depend on arrival order. Every shard file is written, empty
    ones included, so an empty table is still a readable folder. Returns the (key, n) tally.
    """

    def __init__(self, path: str, schema: pa.Schema, sort_key: Callable[[dict], Any], *,
                 name: str | None = None, shards: int = 1):
        super().__init__(f"WriteTable[{name or path.rstrip('/').rsplit('/', 1)[-1]}]")
        self._path, self._schema, self._key, self._shards = path, schema, sort_key, max(1, shards)
        self._name = name or path.rstrip("/").rsplit("/", 1)[-1]

    def expand(self, rows):
        path, schema, key, shards, name = self._path, self._schema, self._key, self._shards, self._name
        delete_matching(join(path, "part-*.parquet"))

        def write_shard(item):
            shard, keyed = item
            ordered = sorted((kv for kv in keyed if kv is not None), key=lambda kv: kv[0])
            data = _parquet_bytes([row for _, row in ordered], schema)
            write_bytes(join(path, f"part-{shard:05d}-of-{shards:05d}.parquet"), data)
            return (f"table|{name}", len(ordered))

        def keyed(row):
            k = _sortable(key(row))
            return (_shard_of(k, shards), (k, row))

        seeds = rows.pipeline | "Shards" >> beam.Create([(i, None) for i in range(shards)])
        return (
            (rows | "Key" >> beam.Map(keyed), seeds)
            | "Join" >> beam.Flatten()
            | "Group" >> beam.GroupByKey()
            | "Write" >> beam.Map(write_shard)
        )


def _sortable(key: Any) -> Any:
    """Make a sort key totally ordered (None sorts first) and JSON-stable."""
    if isinstance(key, (list, tuple)):
        return tuple(_sortable(k) for k in key)
    return ("", "") if key is None else (type(key).__name__, key)


def jsonl_line(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False, sort_keys=False) + "\n"


class WriteJsonlGroups(beam.PTransform):
    """Write records to `path_for(group)` as sorted JSON lines, one file per group.

    Elements are (group, sort_key, record dict). Every group in `groups` gets a file, empty
    or not. Used for LOT's `<task>/<split>.jsonl` and other original-layout exports.
    """

    def __init__(self, path_for: Callable[[Any], str], groups: Iterable[Any], label: str):
        super().__init__(f"WriteJsonl[{label}]")
        self._path_for, self._groups, self._label = path_for, list(groups), label

    def expand(self, items):
        path_for = self._path_for

        def write_group(item):
            group, keyed = item
            ordered = sorted((kv for kv in keyed if kv is not None), key=lambda kv: kv[0])
            write_text(path_for(group), "".join(jsonl_line(rec) for _, rec in ordered))
            return (f"jsonl|{self._label}/{group}", len(ordered))

        seeds = items.pipeline | "Groups" >> beam.Create([(g, None) for g in self._groups])
        return (
            (items | "Key" >> beam.Map(lambda e: (e[0], (_sortable(e[1]), e[2]))), seeds)
            | "Join" >> beam.Flatten()
            | "Group" >> beam.GroupByKey()
            | "Write" >> beam.Map(write_group)
        )


# ----------------------------------------------------------------------------- report
def _nest_tallies(pairs: Iterable[tuple[str, int]], stages: Sequence[str]) -> dict:
    totals: dict[str, int] = {}
    for key, n in pairs:
        totals[key] = totals.get(key, 0) + n
    out: dict[str, Any] = {"stages": {}, "tables": {}, "exports": {}}
    for stage in stages:
        reasons = {k.split("|", 1)[1][len("rejected/"):]: v for k, v in sorted(totals.items())
                   if k.startswith(f"{stage}|rejected/")}
        read, written = totals.get(f"{stage}|read", 0), totals.get(f"{stage}|written", 0)
        rejected = totals.get(f"{stage}|rejected", 0)
        out["stages"][stage] = {
            "read": read, "written": written, "rejected": rejected,
            "outputs": totals.get(f"{stage}|outputs", 0),
            "rejected_by_reason": reasons, "balanced": read == written + rejected,
        }
    for key, n in sorted(totals.items()):
        kind, _, name = key.partition("|")
        if kind == "table":
            out["tables"][name] = n
        elif kind == "jsonl":
            out["exports"][name] = n
    out["balanced"] = all(s["balanced"] for s in out["stages"].values())
    return out


def default_card(stats: dict) -> str:
    """A human-readable summary of stats.json: counts, accounting, config, provenance."""
    lines = [f"# storybench `{stats['job']}` output", "",
             f"- schema version: {stats['schema_version']}", f"- seed: {stats.get('seed')}",
             f"- runner: {stats.get('runner')}", f"- apache-beam: {stats.get('beam_version')}",
             f"- inputs: {', '.join(stats.get('inputs', [])) or '-'}", "",
             "## Accounting (read = written + rejected per stage)", "",
             "| stage | read | written | rejected | outputs | balanced | reject reasons |",
             "|---|---:|---:|---:|---:|---|---|"]
    for name, s in stats["stages"].items():
        reasons = ", ".join(f"{k}: {v}" for k, v in s["rejected_by_reason"].items()) or "-"
        lines.append(f"| {name} | {s['read']} | {s['written']} | {s['rejected']} | {s['outputs']} "
                     f"| {'yes' if s['balanced'] else 'NO'} | {reasons} |")
    lines += ["", "## Tables", "", "| table | rows |", "|---|---:|"]
    lines += [f"| {k} | {v} |" for k, v in stats["tables"].items()]
    if stats.get("exports"):
        lines += ["", "## Exports", "", "| file | records |", "|---|---:|"]
        lines += [f"| {k} | {v} |" for k, v in stats["exports"].items()]
    lines += ["", "## Config", "", "```json", json.dumps(stats.get("config", {}), indent=2,
              ensure_ascii=False, sort_keys=True), "```", ""]
    return "\n".join(lines)


class JobReport:
    """Collects stage tallies, rejects and job-specific summaries; writes the report files.

    Usage in a job: `report = JobReport(output, job, config, seed, inputs)`, then for each
    Stage result `report.add(stage_name, result)`, `report.tally(write_result)` for table
    writes, `report.extra(name, pcoll_of_one_value)`, finally `report.finish(pipeline)`.
    """

    def __init__(self, output: str, job: str, *, config: dict, seed: int | None,
                 inputs: Sequence[str], options: PipelineOptions,
                 card: Callable[[dict], str] = default_card):
        self.output, self.job, self.config, self.seed = output, job, config, seed
        self.inputs, self.card, self.runner = list(inputs), card, runner_name(options)
        self.stages: list[str] = []
        self._tallies: list = []
        self._rejects: list = []
        self._extras: dict[str, Any] = {}

    def add(self, stage: str, result) -> Any:
        """Register a Stage's outputs; returns its main output."""
        if stage not in self.stages:
            self.stages.append(stage)
        self._tallies.append(result[TALLY])
        self._rejects.append(result[REJECTS])
        return result["main"]

    def reject_rows(self, pcoll) -> None:
        """Extra rejects rows produced outside a Stage (already counted by a tally)."""
        self._rejects.append(pcoll)

    def tally(self, pcoll) -> None:
        self._tallies.append(pcoll)

    def extra(self, name: str, pcoll) -> None:
        """A PCollection holding exactly one JSON-able value, stored under stats[name]."""
        self._extras[name] = pcoll

    def finish(self, p: beam.Pipeline) -> None:
        rejects = (self._rejects or [p | "NoRejects" >> beam.Create([])]) | "AllRejects" >> beam.Flatten()
        self.tally(rejects | WriteTable(join(self.output, "rejects"), REJECTS_SCHEMA,
                                        lambda r: (r["stage"], r["input_id"], r["reason"], r["detail"]),
                                        name="rejects"))
        totals = (
            self._tallies
            | "AllTallies" >> beam.Flatten()
            | "SumTallies" >> beam.CombinePerKey(sum)
            | "TallyList" >> beam.combiners.ToList()
        )
        extras = {name: beam.pvalue.AsSingleton(pc) for name, pc in sorted(self._extras.items())}
        totals | "WriteReport" >> beam.Map(self._write, **extras)

    def _write(self, pairs, **extras):
        import apache_beam

        stats = {"job": self.job, "schema_version": SCHEMA_VERSION, "seed": self.seed,
                 "runner": self.runner, "beam_version": apache_beam.__version__,
                 "inputs": self.inputs, "config": self.config}
        stats.update(_nest_tallies(pairs, self.stages))
        stats.update(extras)
        write_text(join(self.output, "stats.json"),
                   json.dumps(stats, indent=2, ensure_ascii=False, sort_keys=False) + "\n")
        write_text(join(self.output, "CARD.md"), self.card(stats))
        if not stats["balanced"]:
            LOG.error("accounting does not balance: %s", stats["stages"])


def run_pipeline(p: beam.Pipeline) -> Any:
    """Run and wait; returns the PipelineResult."""
    result = p.run()
    result.wait_until_finish()
    return result
