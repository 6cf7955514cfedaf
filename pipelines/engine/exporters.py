"""Files exported from a written table: after `WriteTables` has written a table's sorted shards,
`ExportFromTable` (a stateful writer per file, e.g. one JSON object), `ExportLinesFromTable`
(one line per row, a row may go to several files) and `ExportJsonlFromTable` (JSON lines per
group) read the shards back, merged as streams in sort order, and write the papers' own
layouts (LOT's `.source`/`.target` and `<split>.jsonl`, ChapterBreak's released JSON).

Why read the parquet back instead of shuffling the rows again: the shards are already sorted,
so a streaming merge gives every file in order with one pass and no row held; `ExportTables`
writes several exports in that one step, each on its own pool worker in a local run with a
pool (pipelines.engine.export_files, Beam-free, writes them).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

import apache_beam as beam

from pipelines.engine import pool
from pipelines.engine.export_files import ExportSpec, LineRouter, jsonl_entry, line_writer, same_end, write_export
from pipelines.engine.gather import after_all
from pipelines.engine.paths import file_name, is_local_path, table_files
from pipelines.engine.stage import PooledFlatMap


class _TableExport(NamedTuple):
    """What one export from a written table writes (ExportFromTable says how)."""

    table_path: str
    keys: list
    sort_key: Callable[[dict], Any]
    writer_for: Callable[[Any], Any]
    path_for: Callable[[Any], str]
    label: str

    def spec(self) -> ExportSpec:
        """What writing this export needs besides its table's shards."""
        table_path, keys, sort_key, writer_for, path_for, label = self
        paths = {k: path_for(k) for k in keys}
        tallies = {k: f"jsonl|{label}/{file_name(paths[k])}" for k in keys}
        return ExportSpec(keys, sort_key, writer_for, paths, tallies)


def _shards_of(_, exports: Sequence[_TableExport]) -> list[tuple[int, list[str]]]:
    """(index, the table's shards) of every export, listed once the tables they read are
    written (after_all)."""
    return [(i, table_files(export.table_path)) for i, export in enumerate(exports)]


EXPORT_POOL_BYTES = 4 << 20  # an export of a table of at least this many parquet bytes is worth a worker


def _worth_a_worker(item: tuple[int, list[str]]) -> bool:
    """Whether an export's table holds at least EXPORT_POOL_BYTES of (compressed) parquet."""
    return sum(os.path.getsize(path) for path in item[1]) >= EXPORT_POOL_BYTES


def _written(exports: Sequence[_TableExport]):
    """Shards of each export -> its files written, and their tallies: each export of a table
    of EXPORT_POOL_BYTES or more on a pool worker (new ones, that hold nothing an earlier
    stage loaded) in a local run that has a pool, when its files are local and nothing it
    holds needs a job's wiring (a worker must not import Beam); else here, one after another."""
    specs = [e.spec() for e in exports]
    write = functools.partial(write_export, specs)
    local = all(
        is_local_path(e.table_path) and all(map(is_local_path, s.paths.values())) for e, s in zip(exports, specs)
    )
    if local and len(specs) > 1 and not pool.holds_wiring(specs):
        return beam.ParDo(PooledFlatMap("exports", write, fresh_workers=True, items=1, worth=_worth_a_worker))
    return beam.FlatMap(write)


class ExportFromTable(beam.PTransform):
    """After WriteTable has written a table, write one file per key from its rows, each by a
    stateful writer (a document that is not one line per row, e.g. one JSON object).

    Applied to the table's tallies, like ExportLinesFromTable. `writer_for(key)` gives an
    object with `begin() -> str`, `add(row) -> str | None` (None: the row is not this file's)
    and `end() -> str`; the rows come in `sort_key` order, merged from the sorted shards and
    read once for every file, so no file's rows are ever held. Returns (`jsonl|<label>/<key>`,
    rows written) tallies. `ExportTables` runs several exports in one step.
    """

    def __init__(
        self,
        table_path: str,
        keys: Iterable[Any],
        sort_key: Callable[[dict], Any],
        writer_for: Callable[[Any], Any],
        path_for: Callable[[Any], str],
        label: str,
    ):
        super().__init__(f"Export[{label}]")
        self.export = _TableExport(table_path, list(keys), sort_key, writer_for, path_for, label)

    def expand(self, written):
        return after_all(written, "Shards", _shards_of, [self.export]) | "Write" >> _written([self.export])


class ExportTables(beam.PTransform):
    """Several ExportFromTable exports (of tables WriteTables wrote together) in one step, once
    every table is written: applied to the tables' tallies, returns every export's tallies."""

    def __init__(self, exports: Sequence[ExportFromTable], label: str = "Exports"):
        super().__init__(label)
        self._exports = [e.export for e in exports]

    def expand(self, written):
        return after_all(written, "Shards", _shards_of, self._exports) | "Write" >> _written(self._exports)


class ExportLinesFromTable(ExportFromTable):
    """After WriteTable has written a table, write files of one line per row from it.

    Applied to the table's tallies (so it runs once every shard is written): `lines(row)`
    gives (file key, line text) pairs, so one row can go to several files (a `.source` and
    its `.target`); file `key` is `path_for(key)`, its lines in `sort_key` order (the shards
    are sorted by it, so they are merged as streams and read once for every file). Every key
    in `keys` gets a file, empty or not; a line for another key is not written. Lines end
    with a newline, or with `newline_at_end=False` are only separated by one (files read as
    `text.split("\n")`, like the LongLM baselines' `.source`/`.target`; a function of the key
    decides it per file). The rows are read
    back from the parquet files instead of being shuffled again. Returns
    (`jsonl|<label>/<key>`, n) tallies like WriteJsonlGroups.
    """

    def __init__(
        self,
        table_path: str,
        keys: Iterable[Any],
        sort_key: Callable[[dict], Any],
        lines: Callable[[dict], Iterable[tuple[Any, str]]],
        path_for: Callable[[Any], str],
        label: str,
        *,
        newline_at_end: bool | Callable[[Any], bool] = True,
    ):
        router = LineRouter(lines)
        ends = newline_at_end if callable(newline_at_end) else functools.partial(same_end, newline_at_end)
        super().__init__(table_path, keys, sort_key, functools.partial(line_writer, router, ends), path_for, label)


class ExportJsonlFromTable(ExportLinesFromTable):
    """ExportLinesFromTable writing one JSON-lines file per group: group g's file
    `path_for(g)` holds `line(row)` as JSON for the table's rows with `row[column] == g`."""

    def __init__(
        self,
        table_path: str,
        column: str,
        groups: Iterable[Any],
        sort_key: Callable[[dict], Any],
        line: Callable[[dict], dict],
        path_for: Callable[[Any], str],
        label: str,
    ):
        super().__init__(table_path, groups, sort_key, functools.partial(jsonl_entry, column, line), path_for, label)
