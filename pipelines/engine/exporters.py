"""Files exported from a written table: after `WriteTables` has written a table's sorted shards,
`ExportFromTable` (a stateful writer per file, e.g. one JSON object), `ExportLinesFromTable`
(one line per row, a row may go to several files) and `ExportJsonlFromTable` (JSON lines per
group) read the shards back, merged as streams in sort order, and write the papers' own
layouts (LOT's `.source`/`.target` and `<split>.jsonl`, ChapterBreak's released JSON).

Why read the parquet back instead of shuffling the rows again: the shards are already sorted,
so a streaming merge gives every file in order with one pass and no row held; `ExportTables`
writes several exports in that one step.
"""

from __future__ import annotations

import functools
import heapq
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

import apache_beam as beam
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems

from pipelines.engine.gather import after_all
from pipelines.engine.jsontext import jsonl_line
from pipelines.engine.paths import file_name, table_files
from pipelines.engine.sorted_tables import sortable


def _shard_rows(path: str):
    """Rows of one written parquet shard in its (sorted) order, one row group at a time
    (WriteTable closes groups at about ROW_GROUP_BYTES). `read_row_group` keeps memory at one
    group; `iter_batches` held about 2.5x the shard's decoded size, and kept some of it."""
    with FileSystems.open(path, compression_type="uncompressed") as f:
        shard = pq.ParquetFile(f)
        for i in range(shard.num_row_groups):
            yield from shard.read_row_group(i).to_pylist()


class _TableExport(NamedTuple):
    """What one export from a written table writes (ExportFromTable says how)."""

    table_path: str
    keys: list
    sort_key: Callable[[dict], Any]
    writer_for: Callable[[Any], Any]
    path_for: Callable[[Any], str]
    label: str

    def write(self) -> list[tuple[str, int]]:
        table_path, keys, sort_key, writer_for, path_for, label = self
        shards = table_files(table_path)
        ordered = heapq.merge(*(_shard_rows(s) for s in shards), key=lambda r: sortable(sort_key(r)))
        writers = {k: writer_for(k) for k in keys}
        files = {k: _BufferedText(path_for(k)) for k in keys}
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
        return [(f"jsonl|{label}/{file_name(path_for(k))}", counts[k]) for k in keys]


class _BufferedText:
    """A text file written as UTF-8 in chunks of about 1 MB (local or remote, FileSystems)."""

    def __init__(self, path: str):
        self._f = FileSystems.create(path, mime_type="application/octet-stream", compression_type="uncompressed")
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


def _write_exports(_, exports: Sequence[_TableExport]) -> list[tuple[str, int]]:
    """Every export's files, written once the tables they read are (after_all); their tallies."""
    return [tally for export in exports for tally in export.write()]


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
        return after_all(written, "Write", _write_exports, [self.export])


class ExportTables(beam.PTransform):
    """Several ExportFromTable exports (of tables WriteTables wrote together) in one step, once
    every table is written: applied to the tables' tallies, returns every export's tallies."""

    def __init__(self, exports: Sequence[ExportFromTable], label: str = "Exports"):
        super().__init__(label)
        self._exports = [e.export for e in exports]

    def expand(self, written):
        return after_all(written, "Write", _write_exports, self._exports)


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
        router = _LineRouter(lines)
        ends = newline_at_end if callable(newline_at_end) else (lambda key, end=newline_at_end: end)
        super().__init__(table_path, keys, sort_key, functools.partial(_line_writer, router, ends), path_for, label)


class _LineRouter:
    """`lines(row)` computed once per row for every file's writer: {key: line text}."""

    def __init__(self, lines: Callable[[dict], Iterable[tuple[Any, str]]]):
        self._lines, self._row, self._texts = lines, None, {}

    def texts(self, row: dict) -> dict:
        if row is not self._row:
            self._row, self._texts = row, dict(self._lines(row))
        return self._texts


class _LineWriter:
    """One file of ExportLinesFromTable: its line of each row, newline-ended or -separated."""

    def __init__(self, router: _LineRouter, key: Any, newline_at_end: bool):
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


def _line_writer(router: _LineRouter, ends: Callable[[Any], bool], key: Any) -> _LineWriter:
    return _LineWriter(router, key, ends(key))


def _jsonl_entry(column: str, line: Callable[[dict], dict], row: dict) -> list[tuple[Any, str]]:
    """(group, JSON text of `line(row)`) of one row, for ExportJsonlFromTable."""
    return [(row[column], jsonl_line(line(row))[:-1])]


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
        super().__init__(table_path, groups, sort_key, functools.partial(_jsonl_entry, column, line), path_for, label)
