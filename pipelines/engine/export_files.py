"""The Beam-free half of the exporters (pipelines.engine.exporters): writing one export's files
from a written table's sorted shards (`write_export`), and the line writers of
ExportLinesFromTable.

Why a module of its own: in a local run with a pool, each export (LOT: one per task) is a task
on a worker, so the exports are written side by side instead of one after another in the
job's process at the end of the run. Nothing here imports Beam (pipelines.engine.merge_runs
opens the files).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from pipelines.engine.jsontext import jsonl_line
from pipelines.engine.merge_runs import create, open_read, sortable


def _shard_rows(path: str):
    """Rows of one written parquet shard in its (sorted) order, one row group at a time
    (WriteTable closes groups at about ROW_GROUP_BYTES). `read_row_group` keeps memory at one
    group; `iter_batches` held about 2.5x the shard's decoded size, and kept some of it."""
    import pyarrow.parquet as pq

    with open_read(path) as f:
        shard = pq.ParquetFile(f)
        for i in range(shard.num_row_groups):
            yield from shard.read_row_group(i).to_pylist()


class ExportSpec(NamedTuple):
    """One export, as its files are written: its file keys, the rows' sort key, a writer per
    key, each key's path and tally key (the table's shards are listed once it is written)."""

    keys: list
    sort_key: Callable[[dict], Any]
    writer_for: Callable[[Any], Any]
    paths: dict
    tallies: dict


def write_export(specs: Sequence[ExportSpec], item: tuple[int, list[str]]) -> list[tuple[str, int]]:
    """Every file of export `i` of `specs` from its table's `shards` (`item` = (i, shards)):
    the shards merged as streams in sort order and read once for every file. Returns (tally
    key, rows written) per file."""
    i, shards = item
    keys, sort_key, writer_for, paths, tallies = specs[i]
    if len(shards) == 1:  # one shard is already in order: no key to compute per row
        ordered = _shard_rows(shards[0])
    else:
        ordered = heapq.merge(*(_shard_rows(s) for s in shards), key=lambda r: sortable(sort_key(r)))
    writers = {k: writer_for(k) for k in keys}
    files = {k: _BufferedText(paths[k]) for k in keys}
    counts = dict.fromkeys(keys, 0)
    routers = {id(w._router) for w in writers.values() if isinstance(w, _LineWriter)}
    # line writers of one router (ExportLinesFromTable): each row's lines go straight to
    # their files, instead of every writer being asked about every row
    router = (
        next(iter(writers.values()))._router
        if len(routers) == 1 and all(isinstance(w, _LineWriter) for w in writers.values())
        else None
    )
    try:
        for k in keys:
            files[k].write(writers[k].begin())
        for row in ordered:
            if router is not None:
                for k, text in router.texts(row).items():
                    writer = writers.get(k)
                    if writer is not None:
                        files[k].write(writer.line(text))
                        counts[k] += 1
                continue
            for k in keys:
                text = writers[k].add(row)
                if text is not None:
                    files[k].write(text)
                    counts[k] += 1
        for k in keys:
            files[k].write(writers[k].end())
    finally:
        for f in files.values():
            f.close()
    return [(tallies[k], counts[k]) for k in keys]


class _BufferedText:
    """A text file written as UTF-8 in chunks of about 1 MB (local or remote)."""

    def __init__(self, path: str):
        self._f = create(path)
        self._parts: list[str] = []
        self._held = 0

    def write(self, text: str) -> None:
        if text:
            self._parts.append(text)
            self._held += len(text)
            if self._held >= 1 << 20:
                self._flush()

    def _flush(self) -> None:
        if self._parts:
            self._f.write("".join(self._parts).encode("utf-8"))
            self._parts, self._held = [], 0

    def close(self) -> None:
        try:
            self._flush()
        finally:
            self._f.close()


class LineRouter:
    """`lines(row)` computed once per row for every file's writer: {key: line text}."""

    def __init__(self, lines: Callable[[dict], Iterable[tuple[Any, str]]]):
        self._lines, self._row, self._texts = lines, None, {}

    def texts(self, row: dict) -> dict:
        if row is not self._row:
            self._row, self._texts = row, dict(self._lines(row))
        return self._texts


class _LineWriter:
    """One file of ExportLinesFromTable: its line of each row, newline-ended or -separated."""

    def __init__(self, router: LineRouter, key: Any, newline_at_end: bool):
        self._router, self._key, self._end, self._n = router, key, newline_at_end, 0

    def begin(self) -> str:
        return ""

    def add(self, row: dict) -> str | None:
        text = self._router.texts(row).get(self._key)
        return None if text is None else self.line(text)

    def line(self, text: str) -> str:
        """The file's next line of `text` (with its newline, or after the previous one's)."""
        self._n += 1
        return text + "\n" if self._end else ("\n" if self._n > 1 else "") + text

    def end(self) -> str:
        return ""


def line_writer(router: LineRouter, ends: Callable[[Any], bool], key: Any) -> _LineWriter:
    return _LineWriter(router, key, ends(key))


def same_end(end: bool, key: Any) -> bool:
    """Every file's lines end alike (`newline_at_end` given as a bool)."""
    return end


def jsonl_entry(column: str, line: Callable[[dict], dict], row: dict) -> list[tuple[Any, str]]:
    """(group, JSON text of `line(row)`) of one row, for ExportJsonlFromTable."""
    return [(row[column], jsonl_line(line(row))[:-1])]
