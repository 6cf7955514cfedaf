"""What the glge job's stages apply (GLGE paper section 2.4), one task per element.

A task is loaded and scored whole: Score(y) needs every test target of the task, and a
broken task is rejected whole so no partial output is ever written for it. File access is
the job's: it passes `read(location, *parts) -> bytes | None` (None: no such file), so these
steps stay pure and tests can read from a dict.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from annotators.core.outcome import Drop
from annotators.glge.layout import glge_task, lot_task, parse_parquet_rows
from annotators.glge.levels import GlgeConfig, build_levels
from annotators.glge.score import preload
from schemas.glge import FILES, GlgeTask, LotTable, TaskLevels, TaskSpec, TaskSummary

Reader = Callable[..., "bytes | None"]
LOT_KINDS = ("plotcom", "outgen")


def _load_glge(spec: TaskSpec, read: Reader) -> GlgeTask | Drop:
    """The six files of `location/{task}_data/org_data/`, checked (none when no location)."""
    prefix = spec.location.rstrip("/") + "/" if spec.location else ""
    files = {key: read(spec.location, f"{spec.task}_data", "org_data", key) if spec.location else None for key in FILES}
    return glge_task(spec.task, files, prefix=prefix)


def _load_lot(spec: TaskSpec, read: Reader) -> GlgeTask | Drop:
    """A LOT table's parquet files as one task; the first unreadable file rejects it."""
    if not spec.parquet_paths:
        return Drop("missing_table", f"{spec.location}: no parquet files for LOT {spec.kind}")
    tables = []
    for path in spec.parquet_paths:
        data = read(path)
        rows = Drop("unreadable_file", f"{path}: file not found") if data is None else parse_parquet_rows(path, data)
        if isinstance(rows, Drop):
            return rows
        tables.append(LotTable(path, rows))
    return lot_task(spec.task, spec.kind, tables)


def load_task(spec: TaskSpec, read: Reader) -> list[GlgeTask] | Drop:
    """The `load` stage: one checked task, or a Drop naming the broken file and line (a split
    file that is a folder: `not_a_file`)."""
    try:
        result = _load_glge(spec, read) if spec.kind == "glge" else _load_lot(spec, read)
    except IsADirectoryError as exc:
        return Drop("not_a_file", {"path": str(exc.filename), "message": f"{exc.filename} is a folder, not a file"})
    return result if isinstance(result, Drop) else [result]


def preload_langs(config: GlgeConfig, langs: Iterable[str]) -> None:
    """Load the stop words (and jieba) of every profile once per worker (`DoFn.setup`)."""
    for lang in langs:
        preload(config.tokens_for(lang))


def score_task(task: GlgeTask, config: GlgeConfig, seed: int) -> list[TaskLevels]:
    """The `levels` stage: scores and the four levels' line selections of one task."""
    return [build_levels(task, config, seed)]


def summaries_by_task(summaries: Iterable[TaskSummary]) -> dict:
    """stats.json's `glge` value: task -> per-level summary, by task name."""
    return {s.task: s.summary for s in sorted(summaries, key=lambda s: s.task)}
