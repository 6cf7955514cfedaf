"""Reading and writing files from Beam jobs: inputs matched by glob, sorted parquet tables
and JSON lines, all through Beam's FileSystems (local paths now, `gs://` on Dataflow).

Writes are sorted and sharded by a stable hash, so bytes never depend on arrival order.
"""
from __future__ import annotations

import heapq
import itertools
import json
import pickle
from typing import Any, Callable, Iterable, NamedTuple, Sequence

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems

from annotators.core.ids import stable_int

READ_ERROR = "__read_error__"
# Runner names that mean Beam's in-process FnApiRunner (never the Prism download).
LOCAL_RUNNERS = {None, "", "DirectRunner", "FnApiRunner", "direct", "fnapi"}


def is_local_path(path: str) -> bool:
    return "://" not in path


def join(*parts: str) -> str:
    return FileSystems.join(*parts) if parts else ""


# ----------------------------------------------------------------------------- files
def _match(pattern: str) -> list[str]:
    try:
        return sorted({m.path for m in FileSystems.match([pattern])[0].metadata_list})
    except Exception:  # a glob with no match raises on some filesystems
        return []


def _is_folder(pattern: str) -> bool:
    if is_local_path(pattern):
        import os

        return os.path.isdir(pattern)
    return not any(c in pattern for c in "*?[") and not _match(pattern)


def expand_input(pattern: str, exts: Sequence[str] = (), *, mixed: bool = False) -> list[str]:
    """Matched file paths for a file, glob or folder (local or `gs://`).

    A folder means its files with the first of `exts` (in order of preference) that has any:
    a LOT task folder holds parquet parts and `<split>.jsonl` exports of the same rows, and
    must be read once. With `mixed`, a folder means its files with any of `exts` (an AO3
    folder of pages and JSON lines). Raises FileNotFoundError naming the pattern when
    nothing matches.
    """
    if _is_folder(pattern):
        folder = pattern.rstrip("/")
        found: list[str] = []
        for ext in exts or ("",):
            found += _match(f"{folder}/*{ext}")
            if found and not mixed:
                return found
        if found:
            return sorted(set(found))
        raise FileNotFoundError(f"no {'/'.join(exts) or ''} files in folder {pattern!r}")
    paths = _match(pattern)
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


def listed_inputs(pattern: str, exts: Sequence[str] = (), *, mixed: bool = False) -> list[str]:
    """The stable names of a pattern's inputs, for stats.json and cards.

    A local pattern is listed now (offline and cheap; no match raises FileNotFoundError); a
    remote one is recorded as given, since nothing remote is listed while a graph is built.
    """
    if not is_local_path(pattern):
        return [pattern]
    paths = expand_input(pattern, exts, mixed=mixed)
    return sorted(input_names(paths, pattern).values())


def read_bytes(path: str) -> bytes:
    with FileSystems.open(path, mime_type="application/octet-stream", compression_type="uncompressed") as f:
        return f.read()


def write_bytes(path: str, data: bytes) -> None:
    with FileSystems.create(path, mime_type="application/octet-stream", compression_type="uncompressed") as f:
        f.write(data)


def write_text(path: str, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def iter_lines(f, chunk: int = 1 << 20):
    """Lines of a binary file object without their b"\\n", streamed chunk by chunk.

    Works on any object with read(n), including Beam's decompressing file wrappers, which
    io.BufferedReader cannot wrap.
    """
    rest = b""
    while True:
        data = f.read(chunk)
        if not data:
            break
        lines = (rest + data).split(b"\n")
        rest = lines.pop()
        yield from lines
    if rest:
        yield rest


class Source(NamedTuple):
    """One input file and its stable name (relative to the pattern's fixed folder) for ids."""

    path: str
    name: str


def match_sources(pattern: str, exts: Sequence[str] = (), mixed: bool = False) -> list[Source]:
    paths = expand_input(pattern, exts, mixed=mixed)
    names = input_names(paths, pattern)
    return [Source(path, names[path]) for path in paths]


def _is_remote_run(pipeline: beam.Pipeline) -> bool:
    from apache_beam.options.pipeline_options import StandardOptions

    return pipeline.options.view_as(StandardOptions).runner not in LOCAL_RUNNERS


class MatchInputs(beam.PTransform):
    """The Sources of a file, glob or folder (see `expand_input`), matched when the job runs.

    Matching never happens while the graph is built for remote paths, so a Dataflow dry run
    with `gs://` inputs stays offline; a local pattern that matches nothing still fails at
    once with a clear message. On a remote runner the files are reshuffled over the workers.
    """

    def __init__(self, pattern: str, exts: Sequence[str] = (), *, mixed: bool = False):
        super().__init__()
        self._pattern, self._exts, self._mixed = pattern, tuple(exts), mixed

    def expand(self, pbegin):
        if is_local_path(self._pattern):
            expand_input(self._pattern, self._exts, mixed=self._mixed)  # fail fast, offline
        sources = (pbegin | "Pattern" >> beam.Create([self._pattern])
                   | "Match" >> beam.FlatMap(match_sources, self._exts, self._mixed))
        return sources | "Spread" >> beam.Reshuffle() if _is_remote_run(pbegin.pipeline) else sources


class _Reader(beam.PTransform):
    """Base of the readers: applied to Sources (from MatchInputs), or to the pipeline with a
    fixed list of paths and names. On a remote runner the records are reshuffled after
    reading, so the heavy steps that follow use every worker however few the files are."""

    def __init__(self, paths: Sequence[str] | None = None, names: dict[str, str] | None = None):
        super().__init__()
        self._paths = list(paths or [])
        self._names = names or {p: p.rsplit("/", 1)[-1] for p in self._paths}

    def _sources(self, pcoll):
        if isinstance(pcoll, beam.pvalue.PBegin):
            return pcoll | "Paths" >> beam.Create([Source(p, self._names[p]) for p in self._paths])
        return pcoll

    def _records(self, sources):
        raise NotImplementedError

    def expand(self, pcoll):
        records = self._records(self._sources(pcoll))
        return records | "Spread" >> beam.Reshuffle() if _is_remote_run(pcoll.pipeline) else records


def _lines(source: Source):
    with FileSystems.open(source.path, compression_type="uncompressed") as f:
        for number, raw in enumerate(iter_lines(f), start=1):
            yield f"{source.name}:{number}", raw.rstrip(b"\r")


class ReadLines(_Reader):
    """(input_id "name:line", raw bytes) for every line of every file, streamed."""

    def _records(self, sources):
        return sources | "Lines" >> beam.FlatMap(_lines)


class ReadFiles(_Reader):
    """(input_id, whole-file bytes) for every file: one element per book/page/game."""

    def _records(self, sources):
        return sources | "Read" >> beam.Map(lambda s: (s.name, read_bytes(s.path)))


class ReadParquetRows(_Reader):
    """(input_id "name:row", row dict) for every row of every parquet file, streamed.

    A file that cannot be read yields one row {READ_ERROR: message} for the parser to reject.
    """

    def __init__(self, paths: Sequence[str] | None = None, names: dict[str, str] | None = None,
                 columns: Sequence[str] | None = None):
        super().__init__(paths, names)
        self._columns = list(columns) if columns else None

    def _records(self, sources):
        columns = self._columns

        def rows(source: Source):
            number = 0
            try:
                with FileSystems.open(source.path, compression_type="uncompressed") as f:
                    for batch in pq.ParquetFile(f).iter_batches(batch_size=1024, columns=columns):
                        for row in batch.to_pylist():
                            yield f"{source.name}:{number}", row
                            number += 1
            except Exception as exc:  # a corrupt file becomes one record the parser rejects
                yield f"{source.name}:{number}", {READ_ERROR: f"{type(exc).__name__}: {exc}"}

        return sources | "Rows" >> beam.FlatMap(rows)


def _shard_of(key: Any, shards: int) -> int:
    return stable_int("shard", json.dumps(key, ensure_ascii=False, default=str)) % shards


ROW_GROUP_ROWS = 65536  # rows per parquet row group: a shard is written group by group
SHARD_BYTES = 128 << 20  # target uncompressed bytes per shard when the count follows the data
MAX_SHARDS = 4096
SHARDING = {"shards": None, "shard_bytes": SHARD_BYTES}  # set from --shards / --shard-bytes


def _check_nulls(table: pa.Table, schema: pa.Schema) -> None:
    for field in schema:
        if not field.nullable and table.column(field.name).null_count:
            raise ValueError(f"null values in non-nullable field {field.name!r}")


def _parquet_bytes(rows: Iterable[dict], schema: pa.Schema) -> tuple[bytes, int]:
    """Sorted rows as parquet bytes (and their count), converted and written one row group at
    a time: only one row group's rows are ever dicts at once."""
    sink = pa.BufferOutputStream()
    n = 0
    with pq.ParquetWriter(sink, schema, compression="zstd") as writer:
        rows = iter(rows)
        while True:
            chunk = list(itertools.islice(rows, ROW_GROUP_ROWS))
            if chunk or not n:
                table = pa.Table.from_pylist(chunk, schema=schema)
                _check_nulls(table, schema)
                writer.write_table(table, row_group_size=ROW_GROUP_ROWS)
            n += len(chunk)
            if len(chunk) < ROW_GROUP_ROWS:
                break
    return sink.getvalue().to_pybytes(), n


def _value_bytes(value: Any) -> int:
    if isinstance(value, (str, bytes)):
        return len(value)
    if isinstance(value, (list, tuple)):
        return sum(_value_bytes(v) for v in value) + 8
    if isinstance(value, dict):
        return sum(_value_bytes(v) for v in value.values()) + 8
    return 8


def shard_count(total_bytes: int, shard_bytes: int) -> int:
    """Shards for a table of `total_bytes` (uncompressed estimate): 1 per `shard_bytes`."""
    return max(1, min(MAX_SHARDS, -(-total_bytes // max(1, shard_bytes))))


class WriteTable(beam.PTransform):
    """Write row dicts as a parquet table folder `path/part-SSSSS-of-NNNNN.parquet`.

    The shard count follows the table's size (one shard per `SHARD_BYTES` of row data,
    estimated from the rows themselves, so it is the same on every runner) unless `shards`
    (or the job flag `--shards`) fixes it. Each row goes to one of `MAX_SHARDS` buckets by a
    stable hash of `sort_key(row)` (bucket b belongs to shard b mod N); a bucket's rows are
    sorted where they are grouped, a shard merges its buckets' sorted runs and is written row
    group by row group, so the bytes never depend on arrival order or worker count and no
    worker holds more than one shard. Keying rows does not wait for the shard count (the rows
    are shuffled once, never buffered for it). Every shard file is written, empty ones
    included, so an empty table is still a readable folder. Returns the (key, n) tally.
    """

    def __init__(self, path: str, schema: pa.Schema, sort_key: Callable[[dict], Any], *,
                 name: str | None = None, shards: int | None = None):
        super().__init__(f"WriteTable[{name or path.rstrip('/').rsplit('/', 1)[-1]}]")
        self._path, self._schema, self._key = path, schema, sort_key
        self._shards = shards or SHARDING["shards"]
        self._shard_bytes = SHARDING["shard_bytes"]
        self._name = name or path.rstrip("/").rsplit("/", 1)[-1]

    def _count(self, rows):
        if self._shards:
            return rows.pipeline | "ShardCount" >> beam.Create([max(1, int(self._shards))])
        shard_bytes = self._shard_bytes
        return (rows | "RowBytes" >> beam.Map(lambda r: sum(_value_bytes(v) for v in r.values()))
                | "TableBytes" >> beam.CombineGlobally(sum)
                | "ShardCount" >> beam.Map(shard_count, shard_bytes))

    def expand(self, rows):
        path, schema, key, name = self._path, self._schema, self._key, self._name

        def keyed(row):
            k = _sortable(key(row))
            # The row travels pickled (one bytes object per row in every shuffle and buffer);
            # it becomes a dict again only while its row group is converted to parquet.
            return (_shard_of(k, MAX_SHARDS), (k, pickle.dumps(row, protocol=pickle.HIGHEST_PROTOCOL)))

        def to_shard(item, shards):
            bucket, pairs = item
            return (bucket % shards, sorted(pairs, key=lambda kv: kv[0]))

        def write_shard(item, shards):
            shard, runs = item
            ordered = heapq.merge(*(run for run in runs if run is not None), key=lambda kv: kv[0])
            data, n = _parquet_bytes((pickle.loads(row) for _, row in ordered), schema)
            write_bytes(join(path, f"part-{shard:05d}-of-{shards:05d}.parquet"), data)
            return (f"table|{name}", n)

        count = beam.pvalue.AsSingleton(self._count(rows))
        runs = (rows | "Key" >> beam.Map(keyed) | "Buckets" >> beam.GroupByKey()
                | "SortBucket" >> beam.Map(to_shard, count))
        seeds = rows.pipeline | "One" >> beam.Create([None]) | "Seeds" >> beam.FlatMap(
            lambda _, n: [(i, None) for i in range(n)], count)
        return ((runs, seeds) | "Join" >> beam.Flatten() | "Group" >> beam.GroupByKey()
                | "Write" >> beam.Map(write_shard, count))


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


def _shard_rows(path: str):
    """Rows of one written parquet shard in its (sorted) order, one row group at a time."""
    with FileSystems.open(path, compression_type="uncompressed") as f:
        for batch in pq.ParquetFile(f).iter_batches(batch_size=4096):
            yield from batch.to_pylist()


class ExportJsonlFromTable(beam.PTransform):
    """After WriteTable has written a table, write one sorted JSON-lines file per group from it.

    Applied to the table's tallies (so it runs once every shard is written): group g's file
    `path_for(g)` holds `line(row)` for the table's rows with `row[column] == g`, in
    `sort_key` order (the shards are sorted by it, so they are merged as streams and read
    once for all groups). Every group gets a file, empty or not. The rows are read back from
    the parquet files instead of being shuffled a second time. Returns (key, n) tallies like
    WriteJsonlGroups.
    """

    def __init__(self, table_path: str, column: str, groups: Iterable[Any], sort_key: Callable[[dict], Any],
                 line: Callable[[dict], dict], path_for: Callable[[Any], str], label: str):
        super().__init__(f"ExportJsonl[{label}]")
        self._args = (table_path, column, list(groups), sort_key, line, path_for, label)

    def expand(self, written):
        table_path, column, groups, sort_key, line, path_for, label = self._args

        def write_groups(_):
            shards = sorted(m.path for m in FileSystems.match([join(table_path, "part-*.parquet")])[0].metadata_list)
            ordered = heapq.merge(*(_shard_rows(s) for s in shards), key=lambda r: _sortable(sort_key(r)))
            files = {g: FileSystems.create(path_for(g), mime_type="application/octet-stream",
                                           compression_type="uncompressed") for g in groups}
            counts = dict.fromkeys(groups, 0)
            try:
                for row in ordered:
                    group = row[column]
                    if group in files:
                        files[group].write(jsonl_line(line(row)).encode("utf-8"))
                        counts[group] += 1
            finally:
                for f in files.values():
                    f.close()
            return [(f"jsonl|{label}/{g}", counts[g]) for g in groups]

        return (written | "Written" >> beam.combiners.Count.Globally()
                | "Write" >> beam.FlatMap(write_groups))
