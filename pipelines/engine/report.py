"""`JobReport`: adds up stage tallies into stats.json (read = written + rejected per stage),
writes the rejects table and a human-readable CARD.md.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions

from annotators.core import jsonl
from annotators.core.card import complete_card, default_card
from annotators.core.figures import Figure, load_drawing
from annotators.core.hf_card import readme as hf_readme
from pipelines.engine import pool, usage
from pipelines.engine.gather import Gather, once
from pipelines.engine.paths import join, write_text
from pipelines.engine.sorted_tables import SPILL_FOLDER, TableSpec, WriteTables
from pipelines.engine.stage import REJECTS, TALLY, PooledFlatMap, Stage
from schemas.common import REJECTS_SCHEMA, SCHEMA_VERSION

LOG = logging.getLogger("storybench")
# Runner names that mean Beam's in-process FnApiRunner (never the Prism download).
LOCAL_RUNNERS = {None, "", "DirectRunner", "FnApiRunner", "direct", "fnapi"}


def runner_name(options: PipelineOptions) -> str:
    runner = options.view_as(StandardOptions).runner
    return "FnApiRunner" if runner in LOCAL_RUNNERS else str(runner)


def _pretty_json_files(row: dict) -> list[tuple[str, int]]:
    """(`pretty|<file>`, 1) of a rejects row whose line looks like a piece of a pretty-printed
    JSON document (annotators.core.jsonl.malformed hinted it), for the summary's one line per file."""
    if row["reason"] != "malformed_json" or jsonl.PRETTY_MARK not in row["detail"]:
        return []
    return [(f"pretty|{jsonl.pretty_file(row['input_id'])}", 1)]


def _nest_tallies(pairs: Iterable[tuple[str, int]], stages: Sequence[str]) -> dict:
    totals: dict[str, int] = {}
    for key, n in pairs:
        totals[key] = totals.get(key, 0) + n
    out: dict[str, Any] = {"stages": {}, "tables": {}, "exports": {}}
    for stage in stages:
        reasons = {
            k.split("|", 1)[1][len("rejected/") :]: v
            for k, v in sorted(totals.items())
            if k.startswith(f"{stage}|rejected/")
        }
        read, written = totals.get(f"{stage}|read", 0), totals.get(f"{stage}|written", 0)
        rejected = totals.get(f"{stage}|rejected", 0)
        out["stages"][stage] = {
            "read": read,
            "written": written,
            "rejected": rejected,
            "outputs": totals.get(f"{stage}|outputs", 0),
            "rejected_by_reason": reasons,
            "balanced": read == written + rejected,
        }
    for key, n in sorted(totals.items()):
        kind, _, name = key.partition("|")
        if kind == "table":
            out["tables"][name] = n
        elif kind == "split":
            table, _, split = name.partition("|")
            out.setdefault("table_splits", {}).setdefault(table, {})[split] = n
        elif kind == "jsonl":
            out["exports"][name] = n
        elif kind == "pretty":  # only when some file looked pretty-printed: other stats.json stay as they were
            out.setdefault("pretty_printed_json", {})[name] = n
    out["balanced"] = all(s["balanced"] for s in out["stages"].values())
    return out


_REQUIRED = object()  # JobReport.extra without a default: the PCollection must hold one value


def _reject_order(row: dict) -> tuple:
    return row["stage"], row["input_id"], row["reason"], row["detail"]


def _reject_rows(row: dict) -> tuple:
    return (("rejects", row),)


class JobReport:
    """Collects stage tallies, rejects and job-specific summaries; writes the report files.

    Usage in a job: `report = JobReport(output, job, config, seed, inputs)`, then
    `pcoll | report.stage(name, fn, ...)` for each step, `report.tally(write_result)` for table
    writes, `report.extra(name, pcoll_of_one_value)` (or `report.extras(pcoll_of_one_dict,
    defaults)` for several entries from one summary), finally `report.finish(pipeline)`.
    """

    def __init__(
        self,
        output: str,
        job: str,
        *,
        config: dict,
        seed: int | None,
        inputs: Sequence[str],
        options: PipelineOptions,
        card: Callable[[dict], str] = default_card,
        figures: Sequence[Figure] = (),
        attachments: Callable[[dict], tuple[dict[str, str], dict]] | None = None,
        input_paths: Sequence[str] | None = None,
    ):
        self.output, self.job, self.config, self.seed = output, job, config, seed
        # stats -> ({path under the output: text}, what stats.json keeps of them), e.g. the
        # lm_eval tasks (annotators/harness): written with the report, from the same stats
        self.attachments = attachments
        self.inputs, self.card, self.runner = list(inputs), card, runner_name(options)
        # the paths the job reads (files, folders, globs), which its output must not hold:
        # `inputs` unless the job lists them elsewhere in stats.json
        self.input_paths = list(inputs if input_paths is None else input_paths)
        self.figures = tuple(figures)
        self.stages: list[str] = []
        self._tallies: list = []
        self._rejects: list = []
        self._extras: dict[str, tuple] = {}  # stats key -> (PCollection, default, key in its dict)
        self._warned_from = usage.start_job_warnings()  # the warnings given from here on are this job's

    def stage(self, name: str, fn: Callable, **kwargs) -> Stage:
        """`pcoll | report.stage(name, fn, ...)`: apply a Stage and register it; returns its main output."""
        return Stage(name, fn, report=self, **kwargs)

    def add(self, stage: str, result) -> Any:
        """Register a Stage's outputs; returns its main output."""
        if stage not in self.stages:
            self.stages.append(stage)
        self._tallies.append(result[TALLY])
        self._rejects.append(result[REJECTS])
        return result["main"]

    def declare(self, stage: str) -> None:
        """A stage this run gives no input to (so builds no step for): listed in stats.json and
        the card with zero counts, as a stage that read nothing."""
        if stage not in self.stages:
            self.stages.append(stage)

    def tally(self, pcoll) -> None:
        self._tallies.append(pcoll)

    def record_jieba_backend(self, p: beam.Pipeline, backend: str | None = None, after=None) -> None:
        """stats.json and the card name the jieba backend (and version) the workers resolved
        (`backend`: the job's --zh-backend, else the workers' default). It is resolved where
        the stages run (a pool worker in a local run that has a pool), so the job's own
        process never loads jieba's dictionary for it; `after` (a side input) makes it wait
        for a step whose workers have resolved it already."""
        from annotators.text import zh_tokens

        signal = once(p, "JiebaBackend")
        if after is not None:
            signal = signal | "AfterWork" >> beam.Map(lambda x, _: x, after)
        resolve = functools.partial(zh_tokens.backend_record, backend)
        self.extra("jieba_backend", signal | "ResolveBackend" >> beam.ParDo(PooledFlatMap("jieba_backend", resolve)))

    def extra(self, name: str, pcoll, default: Any = _REQUIRED) -> None:
        """A PCollection holding exactly one JSON-able value, stored under stats[name] (with
        `default`, the PCollection may also be empty)."""
        self._extras[name] = (pcoll, default, None)

    def extras(self, pcoll, defaults: dict[str, Any]) -> None:
        """stats[name] for every name in `defaults`, from a PCollection holding one dict with
        those keys (one summary of several things), or the defaults when it is empty."""
        for name, default in defaults.items():
            self._extras[name] = (pcoll, default, name)

    def finish(self, p: beam.Pipeline) -> None:
        from pipelines.engine.commit import OWNER

        setattr(p, OWNER, {"job": self.job, "inputs": self.input_paths})  # what the output may replace
        if self.figures and pool.current() is not None:  # matplotlib's import, off the job's tail
            pool.current().prefetch(load_drawing)
        warnings = usage.WARNINGS[self._warned_from :]
        if warnings:  # stats.json `warnings` and a card section (empty inputs, empty layouts)
            self.extra("warnings", p | "Warnings" >> beam.Create([list(warnings)]))
        # each stage's rejects spill to the table's runs in the step that made them: flattened
        # first, the local runner held every stage's rejects until the last stage had run (13 MB
        # of the stories job's 80,000 shuffled stories, in the job's process, through its dedup)
        rejects = self._rejects or [p | "NoRejects" >> beam.Create([])]
        for i, rows in enumerate(rejects):  # files whose lines look like one pretty-printed JSON document
            self.tally(rows | f"PrettyJson{i}" >> beam.FlatMap(_pretty_json_files))
        self.tally(
            tuple(rejects)
            | WriteTables(
                {"rejects": TableSpec(join(self.output, "rejects"), REJECTS_SCHEMA, _reject_order)},
                [_reject_rows] * len(rejects),
                spill=join(self.output, "rejects", SPILL_FOLDER),
                label="WriteTable[rejects]",
            )
        )
        totals = (
            self._tallies
            | "AllTallies" >> beam.Flatten()
            | "SumTallies" >> beam.CombinePerKey(sum)
            | "TallyList" >> Gather()  # never empty: the rejects table's tally is always there
        )
        side: dict[str, Any] = {}  # one side input per PCollection, however many entries it gives
        fields = {}  # stats key -> (its side input, its key in that input's dict or None)
        for name, (pc, default, key) in sorted(self._extras.items()):
            arg = next((a for a, (q, _) in side.items() if q is pc), None)
            if arg is None:
                arg = f"extra{len(side)}"
                # the default of a summary dict is the dict of its entries' defaults
                value = default if key is None else {k: d for q, d, k in self._extras.values() if q is pc}
                side[arg] = (pc, value)
            fields[name] = (arg, key)
        inputs = {
            arg: beam.pvalue.AsSingleton(pc) if value is _REQUIRED else beam.pvalue.AsSingleton(pc, default_value=value)
            for arg, (pc, value) in side.items()
        }
        totals | "WriteReport" >> beam.Map(self._write_from, fields, **inputs)

    def _write_from(self, pairs, fields, **inputs):
        """`_write` with every extra taken from its side input (or from the dict it holds)."""
        return self._write(
            pairs, **{name: inputs[arg] if key is None else inputs[arg][key] for name, (arg, key) in fields.items()}
        )

    def _write(self, pairs, **extras):
        import apache_beam

        stats = {
            "job": self.job,
            "schema_version": SCHEMA_VERSION,
            "seed": self.seed,
            "runner": self.runner,
            "beam_version": apache_beam.__version__,
            "inputs": self.inputs,
            "config": self.config,
        }
        stats.update(_nest_tallies(pairs, self.stages))
        stats.update(extras)
        pretty = stats.get("pretty_printed_json") or {}
        if pretty:  # the card's warnings and the job summary's (pipelines.engine.progress) name each file
            stats["warnings"] = [*stats.get("warnings", []), *(jsonl.pretty_warning(f, n) for f, n in pretty.items())]
        if self.figures:  # drawn from the written tables (every write is in the tallies)
            from pipelines.engine.figures import draw_figures

            stats["figures"] = draw_figures(self.output, self.figures)
        if self.attachments:
            files, stats["lm_eval"] = self.attachments(stats)
            for path, text in sorted(files.items()):
                write_text(join(self.output, path), text)
        write_text(
            join(self.output, "stats.json"), json.dumps(stats, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
        )
        card_text = complete_card(self.card(stats), stats)
        write_text(join(self.output, "CARD.md"), card_text)
        write_text(join(self.output, "README.md"), hf_readme(stats, card_text))  # Hugging Face dataset card
        if not stats["balanced"]:
            LOG.error("accounting does not balance: %s", stats["stages"])
