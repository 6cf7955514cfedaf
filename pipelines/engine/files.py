"""Reading and writing files from Beam jobs: inputs matched by glob, sorted parquet tables
and JSON lines, all through Beam's FileSystems (local paths now, `gs://` on Dataflow).

Writes are sorted and sharded by a stable hash, so bytes never depend on arrival order.
"""
from __future__ import annotations

import hashlib
import heapq
import itertools
import json
import operator
import os
import pickle
import re
import uuid
from typing import Any, Callable, Iterable, NamedTuple, Sequence

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems
from apache_beam.transforms.window import GlobalWindows

from pipelines.engine import progress, ranges
from pipelines.engine.ranges import iter_lines  # noqa: F401 (re-exported: pipelines.engine.iter_lines)
from pipelines.engine.textlines import HEAD_BYTES, is_utf16_head
from pipelines.engine.gather import once, seeded
from pipelines.engine.usage import MissingInput, warn_empty_files

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
        raise MissingInput(f"no {'/'.join(exts) or ''} files in folder {pattern!r}")
    paths = _match(pattern)
    if not paths:
        raise MissingInput(f"no input files match {pattern!r}")
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


class Source(NamedTuple):
    """One input file and its stable name (relative to the pattern's fixed folder) for ids."""

    path: str
    name: str


def match_sources(pattern: str, exts: Sequence[str] = (), mixed: bool = False) -> list[Source]:
    paths = expand_input(pattern, exts, mixed=mixed)
    names = input_names(paths, pattern)
    return [Source(path, names[path]) for path in paths]


class MatchInputs(beam.PTransform):
    """The Sources of a file, glob or folder (see `expand_input`), matched when the job runs.

    Matching never happens while the graph is built for remote paths, so a Dataflow dry run
    with `gs://` inputs stays offline; a local pattern that matches nothing still fails at
    once with a clear message. The readers spread the files (or their line ranges) over the
    workers."""

    def __init__(self, pattern: str, exts: Sequence[str] = (), *, mixed: bool = False):
        super().__init__()
        self._pattern, self._exts, self._mixed = pattern, tuple(exts), mixed

    def expand(self, pbegin):
        if is_local_path(self._pattern):  # fail fast, offline; the sizes arm the progress bar
            paths = expand_input(self._pattern, self._exts, mixed=self._mixed)
            warn_empty_files(paths)
            progress.expect_input(pbegin.pipeline, progress.local_size(paths))
        pattern, exts, mixed = self._pattern, self._exts, self._mixed
        return (once(pbegin.pipeline, "Pattern")
                | "Match" >> beam.FlatMap(lambda _: match_sources(pattern, exts, mixed)))


class _Reader(beam.PTransform):
    """Base of the readers: applied to Sources (from MatchInputs), or to the pipeline with a
    fixed list of paths and names. The files (ReadFiles, ReadParquetRows) or their line
    ranges (ReadLines, pipelines.engine.ranges) are spread over the workers before they are
    read, so reading and the heavy steps fused after it use every worker, locally and on a
    remote runner, however few the files are."""

    def __init__(self, paths: Sequence[str] | None = None, names: dict[str, str] | None = None):
        super().__init__()
        self._paths = list(paths or [])
        self._names = names or {p: p.rsplit("/", 1)[-1] for p in self._paths}

    def _sources(self, pcoll):
        if isinstance(pcoll, beam.pvalue.PBegin):
            progress.expect_input(pcoll.pipeline, progress.local_size(self._paths))
            return seeded(pcoll.pipeline, "Paths", [Source(p, self._names[p]) for p in self._paths])
        return pcoll

    def _records(self, sources):
        raise NotImplementedError

    def expand(self, pcoll):
        return self._records(self._sources(pcoll))


PROGRESS_BYTES = 1 << 20  # readers report the bytes they read to the progress bar every ~1 MB


def counted(lines):
    """The lines of any line iterator, reporting their bytes to the progress bar as they go."""
    pending = 0
    for raw in lines:
        pending += len(raw) + 1
        if pending >= PROGRESS_BYTES:
            progress.advance(pending)
            pending = 0
        yield raw
    progress.advance(pending)


def counted_lines(f):
    """`iter_lines(f)`, reporting the bytes read to the progress bar as it goes."""
    return counted(iter_lines(f))


def _range_lines(r: ranges.LineRange):
    """(input_id "name:line", raw line) of one numbered line range, its bytes reported to the
    progress bar as they are read. A UTF-16/32 file (pipelines.engine.textlines) is one
    record, its head, given by the range that starts the file (issue 28)."""
    with FileSystems.open(r.path, compression_type="uncompressed") as f:
        head = f.read(HEAD_BYTES)
        if is_utf16_head(head):
            if r.start == 0:
                yield f"{r.name}:1", head
            return
        for number, raw in enumerate(counted(ranges.range_lines(f, r)), start=r.first_line):
            yield f"{r.name}:{number}", raw.rstrip(b"\r")


def parquet_batches(f, path: str, batch_size: int, columns):
    """Record batches of an open parquet file, reporting its bytes to the progress bar in
    proportion to the rows read."""
    pf = pq.ParquetFile(f)
    size, rows = progress.local_size([path]), max(1, pf.metadata.num_rows)
    for batch in pf.iter_batches(batch_size=batch_size, columns=columns):
        progress.advance(size * batch.num_rows // rows)
        yield batch


class ReadLines(_Reader):
    """(input_id "name:line", raw bytes) for every line of every file, streamed; files are
    read as uncompressed bytes, in line ranges spread over the workers."""

    def _records(self, sources):
        spread = ranges.numbered_ranges(sources, splittable=lambda path: True)
        return spread | "Lines" >> beam.FlatMap(_range_lines)


class ReadFiles(_Reader):
    """(input_id, whole-file bytes) for every file: one element per book/page/game."""

    def _records(self, sources):
        def read(source: Source):
            data = read_bytes(source.path)
            progress.advance(len(data))
            return source.name, data

        return sources | "SpreadFiles" >> beam.Reshuffle() | "Read" >> beam.Map(read)


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
                    for batch in parquet_batches(f, source.path, 1024, columns):
                        for row in batch.to_pylist():
                            yield f"{source.name}:{number}", row
                            number += 1
            except Exception as exc:  # a corrupt file becomes one record the parser rejects
                yield f"{source.name}:{number}", {READ_ERROR: f"{type(exc).__name__}: {exc}"}

        return sources | "SpreadFiles" >> beam.Reshuffle() | "Rows" >> beam.FlatMap(rows)


# Split names as Hugging Face datasets names them (its file-name patterns and `DatasetDict`
# keys): the parquet tables use these; the papers' own layouts (exports) keep "val" or "dev".
HF_SPLITS = {"train": "train", "val": "validation", "valid": "validation", "validation": "validation",
             "dev": "validation", "test": "test"}
DEFAULT_SPLITS = ("train", "validation", "test")


def hf_split(split: str) -> str:
    """The Hugging Face name of a split ("val", "valid", "dev" -> "validation"); other names
    as they are (made file-name safe)."""
    return HF_SPLITS.get(split) or re.sub(r"[^\w.]+", "_", split or "unnamed")


def table_files(table_path: str) -> list[str]:
    """A written table's parquet files (`part-*` or per-split `<split>-*`), sorted."""
    return sorted(m.path for m in FileSystems.match([join(table_path, "*.parquet")])[0].metadata_list)


def _json_text(default: Callable | None):
    """`json.dumps(obj, ensure_ascii=False[, default=default])` for the acyclic rows and keys
    the writers encode, with the C encoder made once instead of per call (json's own
    `_one_shot` path; no circular-reference bookkeeping). Falls back to json.dumps when the
    C encoder is not there."""
    c_make = getattr(json.encoder, "c_make_encoder", None)
    if c_make is None:
        return lambda obj: json.dumps(obj, ensure_ascii=False, default=default)
    encode = c_make(None, default or json.JSONEncoder().default, json.encoder.encode_basestring, None,
                    ": ", ", ", False, False, True)
    return lambda obj: "".join(encode(obj, 0))


_JSON = _json_text(None)
_JSON_KEY = _json_text(str)
_SHARD_PREFIX = "shard\x1f".encode("utf-8")  # stable_int("shard", text): SHA-256 of "shard" US text


def _shard_of(key: Any, shards: int) -> int:
    """The bucket of a sort key: `stable_int("shard", json of the key) % shards`, computed
    straight from the digest's first 8 bytes (the same number)."""
    digest = hashlib.sha256(_SHARD_PREFIX + _JSON_KEY(key).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % shards


ROW_GROUP_ROWS = 65536  # rows per parquet row group at most: a shard is written group by group
ROW_GROUP_BYTES = 4 << 20  # ... and at most about this much row data (estimated) per group
SHARD_BYTES = 128 << 20  # target uncompressed bytes per shard when the count follows the data
MAX_SHARDS = 4096
SHARDING = {"shards": None, "shard_bytes": SHARD_BYTES}  # set from --shards / --shard-bytes


def _check_nulls(table: pa.Table, schema: pa.Schema) -> None:
    for field in schema:
        if not field.nullable and table.column(field.name).null_count:
            raise ValueError(f"null values in non-nullable field {field.name!r}")


def _row_groups(rows: Iterable[dict], sized: bool = False):
    """Lists of rows, each closed at ROW_GROUP_ROWS rows or ROW_GROUP_BYTES of row data (a rule
    of the rows alone, so the layout never depends on the runner). `sized`: the rows come as
    (row, _row_bytes(row)) pairs, the size already measured."""
    group, held = [], 0
    for item in rows:
        row, size = item if sized else (item, _row_bytes(item))
        group.append(row)
        held += size
        if len(group) >= ROW_GROUP_ROWS or held >= ROW_GROUP_BYTES:
            yield group
            group, held = [], 0
    if group:
        yield group


def write_parquet(path: str, rows: Iterable[dict], schema: pa.Schema, *, sized: bool = False) -> int:
    """Sorted rows streamed to a parquet file at `path`, one row group at a time: only one row
    group's rows are ever dicts at once and the file is never held whole (`sized`: rows come
    as (row, _row_bytes(row)) pairs). Returns the rows."""
    n = 0
    with FileSystems.create(path, mime_type="application/octet-stream", compression_type="uncompressed") as f:
        with pq.ParquetWriter(pa.PythonFile(f, mode="w"), schema, compression="zstd") as writer:
            for group in _row_groups(rows, sized):
                table = pa.Table.from_pylist(group, schema=schema)
                _check_nulls(table, schema)
                writer.write_table(table, row_group_size=ROW_GROUP_ROWS)
                n += len(group)
            # An empty table is its schema and no row group: a 0-row group makes readers that
            # size batches by row groups fail (Hugging Face datasets: "BatchSize must be greater
            # than 0"), while every reader takes a file without groups as 0 rows.
    return n


def parquet_bytes(rows: list[dict], schema: pa.Schema) -> bytes:
    """A small table as parquet bytes (no row group when empty, as `write_parquet`)."""
    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(sink, schema, compression="zstd") as writer:
        if rows:
            table = pa.Table.from_pylist(rows, schema=schema)
            _check_nulls(table, schema)
            writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _value_bytes(value: Any) -> int:
    """A value's size estimate: a string's or bytes' length, 8 per other scalar, and 8 plus
    its items' for a list, tuple or dict (values only)."""
    if isinstance(value, (str, bytes)):
        return len(value)
    if isinstance(value, (list, tuple)):
        if all(type(v) is str for v in value):  # most often: a list of words or sentences
            return sum(map(len, value)) + 8
        return sum(map(_value_bytes, value)) + 8
    if isinstance(value, dict):
        return sum(map(_value_bytes, value.values())) + 8
    return 8


def shard_count(total_bytes: int, shard_bytes: int) -> int:
    """Shards for a table of `total_bytes` (uncompressed estimate): 1 per `shard_bytes`."""
    return max(1, min(MAX_SHARDS, -(-total_bytes // max(1, shard_bytes))))


SPILL_BYTES = 4 << 20  # a bundle's rows are sorted and spilled to a run file every ~4 MB
SPILL_FOLDER = "_spill"  # beside a table's shards while it is written; deleted once they are


class _Run(NamedTuple):
    """One spilled run file: rows sorted by (bucket, key, pickled row), and where each bucket's
    segment of them is (bucket -> (offset, length))."""

    path: str
    segments: dict
    rows: int
    nbytes: int  # uncompressed size estimate of the rows, for the shard count


class _SpillRuns(beam.DoFn):
    """(bucket, key, record) -> sorted run files in `folder`, one _Run element per file.

    A bundle's records are held pickled until about SPILL_BYTES, then sorted and written as
    one run (each bucket's records one pickled segment): memory stays bounded however large
    the table, and no shuffle or runner buffer ever holds the rows, only the runs' indexes.
    `keyed(element)` gives the (bucket, key, record) triples of an element (default: the
    element is one); `measure(record)` gives a record's size estimate, kept beside it in the
    run and summed under `size_of(bucket)` (the run's `nbytes` is then {name: bytes}).
    """

    def __init__(self, folder: str, measure: Callable[[Any], int] | None,
                 keyed: Callable[[Any], Iterable[tuple]] | None = None,
                 size_of: Callable[[Any], Any] | None = None):
        self._folder, self._measure, self._keyed, self._size_of = folder, measure, keyed, size_of

    def start_bundle(self):
        self._buf, self._held, self._est = [], 0, {}

    def process(self, element):
        dumps, measure, size_of, est = pickle.dumps, self._measure, self._size_of, self._est
        for bucket, key, record in (self._keyed(element) if self._keyed is not None else (element,)):
            blob = dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
            size = 0
            if measure is not None:
                size = measure(record)
                name = size_of(bucket) if size_of is not None else None
                est[name] = est.get(name, 0) + size
            self._buf.append((bucket, key, blob, size))  # size last: it never decides the order
            self._held += len(blob) + 100
        if self._held >= SPILL_BYTES:
            yield self._flush()

    def finish_bundle(self):
        if self._buf:
            yield GlobalWindows.windowed_value(self._flush())

    def _flush(self) -> _Run:
        buf, est = self._buf, self._est
        self._buf, self._held, self._est = [], 0, {}
        buf.sort()  # (bucket, key, blob, size): a total order, so equal keys never depend on arrival
        path = join(self._folder, f"run-{uuid.uuid4().hex}.pkl")  # a name only, never an output
        segments, offset = {}, 0
        with FileSystems.create(path, mime_type="application/octet-stream",
                                compression_type="uncompressed") as f:
            for bucket, group in itertools.groupby(buf, key=operator.itemgetter(0)):
                data = pickle.dumps([(key, blob, size) for _, key, blob, size in group],
                                    protocol=pickle.HIGHEST_PROTOCOL)
                f.write(data)
                segments[bucket] = (offset, len(data))
                offset += len(data)
        return _Run(path, segments, len(buf), est if self._size_of is not None else est.get(None, 0))


def _shard_segments(run: _Run, shard_of: Callable[[Any], Any]):
    """(shard, [(run path, offset, length), ...]) for the segments of one run."""
    per: dict = {}
    for bucket, (offset, length) in run.segments.items():
        per.setdefault(shard_of(bucket), []).append((run.path, offset, length))
    return list(per.items())


def _merged_records(segment_lists, sized: bool = False) -> Iterable[Any]:
    """The records of one shard's segments (from every run) in (key, pickled) order (`sized`:
    as (record, measured size) pairs)."""
    segments = sorted(s for lst in segment_lists if lst for s in lst)
    runs = []
    for path, group in itertools.groupby(segments, key=operator.itemgetter(0)):
        with FileSystems.open(path, compression_type="uncompressed") as f:
            for _, offset, length in group:
                f.seek(offset)
                runs.append(pickle.loads(f.read(length)))
    # the segments are sorted runs: one C sort of their concatenation merges them (Timsort)
    ordered = sorted(itertools.chain.from_iterable(runs))
    if sized:
        return ((pickle.loads(blob), size) for _, blob, size in ordered)
    return (pickle.loads(blob) for _, blob, _ in ordered)


def _group_shards(runs, groups: list, label: str = ""):
    """(group, [segment lists]) for every group in `groups`, empty ones included: the runs'
    segments grouped by their bucket, which is the group itself (WriteJsonlGroups)."""
    seeds = seeded(runs.pipeline, f"Seeds{label}", [(g, None) for g in groups])
    parts = runs | f"Segments{label}" >> beam.FlatMap(_shard_segments, lambda bucket: bucket)
    return (parts, seeds) | f"Join{label}" >> beam.Flatten() | f"Group{label}" >> beam.GroupByKey()


def after_all(pcoll, label: str, fn: Callable, *args):
    """`fn(elements of pcoll, *args)` once, when every element of `pcoll` is there: a side-input
    barrier (four transforms, where a global Count is ten; its elements are few and small)."""
    return (once(pcoll.pipeline, f"{label}Once")
            | label >> beam.FlatMap(lambda _, done, *a: fn(done, *a), beam.pvalue.AsList(pcoll), *args))


def delete_folder(_, folder: str) -> list:
    """Delete the spilled runs once every shard that reads them is written."""
    try:
        paths = [m.path for m in FileSystems.match([join(folder, "*")])[0].metadata_list]
    except Exception:  # nothing was spilled
        paths = []
    if paths:
        FileSystems.delete(paths)
    if is_local_path(folder) and os.path.isdir(folder) and not os.listdir(folder):
        os.rmdir(folder)
    return []


class TableSpec(NamedTuple):
    """One parquet table of WriteTables: its folder, schema and row order; `shards` fixes its
    shard count (else it follows the data); `splits` lists the splits that always get files
    (tables with a `split` column only; default train/validation/test)."""

    path: str
    schema: pa.Schema
    sort_key: Callable[[dict], Any]
    shards: int | None = None
    splits: Iterable[str] | None = None


class WriteTables(beam.PTransform):
    """Write row dicts as parquet tables, each a folder `path/part-SSSSS-of-NNNNN.parquet`
    (`path/<split>-SSSSS-of-NNNNN.parquet` when it has a `split` column, in Hugging Face
    split names, every split in `splits` written even when empty).

    `tables`: table name -> TableSpec. Applied to one PCollection or a tuple of them, with one
    function per PCollection in `rows_of`: element -> iterable of (table name, row) (an
    element may give rows of several tables, or none). Each table is written as if alone:
    its shard count follows its size (one shard per `SHARD_BYTES` of row data, estimated from
    the rows themselves, so it is the same on every runner) unless its spec (or the job flag
    `--shards`) fixes it. Each row goes to one of `MAX_SHARDS` buckets of its table by a
    stable hash of `sort_key(row)` (bucket b belongs to shard b mod N). Rows are not
    shuffled: each bundle sorts its rows by (table, bucket, key) in runs of about SPILL_BYTES
    and spills them to `spill` (a folder); only the runs' bucket indexes are shuffled, and a
    shard merges its buckets' segments from every run and is written row group by row group,
    so the bytes never depend on arrival order or worker count and no worker holds more
    than one shard. Every shard file is written, empty ones included, so an empty table is
    still a readable folder; the spilled runs are deleted once every shard is written.
    Writing several tables together takes one set of steps instead of one per table.
    Returns the (key, n) tallies (`table|<name>`, and `split|<name>|<split>`).
    """

    def __init__(self, tables: dict[str, TableSpec], rows_of: Sequence[Callable[[Any], Iterable[tuple]]], *,
                 spill: str, label: str | None = None):
        super().__init__(label)
        self._specs = {}
        for name, spec in tables.items():
            splits = ((tuple(dict.fromkeys(hf_split(x) for x in spec.splits)) if spec.splits is not None
                       else DEFAULT_SPLITS) if "split" in spec.schema.names else None)
            self._specs[name] = spec._replace(shards=spec.shards or SHARDING["shards"], splits=splits)
        self._rows_of, self._spill = list(rows_of), spill
        self._shard_bytes = SHARDING["shard_bytes"]

    def expand(self, inputs):
        specs, folder, shard_bytes = self._specs, self._spill, self._shard_bytes
        pcolls = inputs if isinstance(inputs, (tuple, list)) else (inputs,)
        if len(pcolls) != len(self._rows_of):
            raise ValueError(f"WriteTables: {len(pcolls)} inputs but {len(self._rows_of)} rows_of functions")
        keys = {name: spec.sort_key for name, spec in specs.items()}
        split_tables = {name for name, spec in specs.items() if spec.splits is not None}

        def keyed(rows_of):
            def triples(element):
                for name, row in rows_of(element):
                    k = _sortable(keys[name](row))
                    b = _shard_of(k, MAX_SHARDS)
                    yield ((name, hf_split(row["split"]), b) if name in split_tables else (name, None, b)), k, row
            return triples

        def count_of(sizes, name):
            spec = specs[name]
            if spec.shards:
                return max(1, int(spec.shards))
            return shard_count(sum(size.get(name, 0) for size in sizes), shard_bytes)

        def shard_of(bucket, sizes):
            name, split, b = bucket
            return name, split, b % count_of(sizes, name)

        def seeds(_, sizes):
            return [((name, split, i), None) for name, spec in sorted(specs.items())
                    for split in (spec.splits or (None,)) for i in range(count_of(sizes, name))]

        def write_shard(item, sizes):
            (name, split, i), segment_lists = item
            spec, n_shards = specs[name], count_of(sizes, name)
            file_name = (f"part-{i:05d}-of-{n_shards:05d}.parquet" if split is None
                         else f"{split}-{i:05d}-of-{n_shards:05d}.parquet")
            n = write_parquet(join(spec.path, file_name), _merged_records(segment_lists, sized=True), spec.schema,
                              sized=True)
            return [(f"table|{name}", n)] + ([(f"split|{name}|{split}", n)] if split is not None else [])

        spilled = [pc | (f"Spill{i}" if len(pcolls) > 1 else "Spill") >> beam.ParDo(
                       _SpillRuns(folder, _row_bytes, keyed(fn), size_of=operator.itemgetter(0)))
                   for i, (pc, fn) in enumerate(zip(pcolls, self._rows_of))]
        runs = spilled[0] if len(spilled) == 1 else spilled | "Runs" >> beam.Flatten()
        sizes = beam.pvalue.AsList(runs | "RunBytes" >> beam.Map(lambda run: run.nbytes))
        seeded_shards = once(runs.pipeline, "One") | "Seeds" >> beam.FlatMap(seeds, sizes)
        parts = runs | "Segments" >> beam.FlatMap(lambda run, sz: _shard_segments(run, lambda b: shard_of(b, sz)), sizes)
        grouped = (parts, seeded_shards) | "Join" >> beam.Flatten() | "Group" >> beam.GroupByKey()
        written = grouped | "Write" >> beam.FlatMap(write_shard, sizes)
        _ = after_all(written, "DeleteSpill", delete_folder, folder)
        return written


class WriteTable(WriteTables):
    """Write row dicts as one parquet table folder `path/part-SSSSS-of-NNNNN.parquet`
    (WriteTables, one table): its rows spill to `path/_spill/`. Returns the (key, n) tally."""

    def __init__(self, path: str, schema: pa.Schema, sort_key: Callable[[dict], Any], *,
                 name: str | None = None, shards: int | None = None, splits: Iterable[str] | None = None):
        name = name or path.rstrip("/").rsplit("/", 1)[-1]
        super().__init__({name: TableSpec(path, schema, sort_key, shards, splits)}, [lambda row: ((name, row),)],
                         spill=join(path, SPILL_FOLDER), label=f"WriteTable[{name}]")
        self._shards = self._specs[name].shards


def _row_bytes(row: dict) -> int:
    return sum(map(_value_bytes, row.values()))


def _sortable(key: Any) -> Any:
    """Make a sort key totally ordered (None sorts first) and JSON-stable."""
    if isinstance(key, (list, tuple)):
        return tuple(_sortable(k) for k in key)
    return ("", "") if key is None else (type(key).__name__, key)


def jsonl_line(record: dict) -> str:
    return _JSON(record) + "\n"


class WriteJsonlGroups(beam.PTransform):
    """Write records to `path_for(group)` as sorted JSON lines, one file per group.

    Elements are (group, sort_key, record dict). Every group in `groups` gets a file, empty
    or not. Used for LOT's `<task>/<split>.jsonl` and other original-layout exports.
    """

    def __init__(self, path_for: Callable[[Any], str], groups: Iterable[Any], label: str):
        super().__init__(f"WriteJsonl[{label}]")
        self._path_for, self._groups, self._label = path_for, list(groups), label

    def expand(self, items):
        path_for, label = self._path_for, self._label
        first = path_for(self._groups[0] if self._groups else "_")
        folder = f"{first.rsplit('/', 1)[0] if '/' in first else '.'}/{SPILL_FOLDER}-{label}"

        def write_group(item):
            bucket, segment_lists = item
            group = json.loads(bucket)
            n = 0
            with FileSystems.create(path_for(group), mime_type="application/octet-stream",
                                    compression_type="uncompressed") as f:
                for rec in _merged_records(segment_lists):
                    f.write(jsonl_line(rec).encode("utf-8"))
                    n += 1
            return (f"jsonl|{label}/{_file_name(path_for(group))}", n)

        runs = (items | "Key" >> beam.Map(lambda e: (json.dumps(e[0]), _sortable(e[1]), e[2]))
                | "Spill" >> beam.ParDo(_SpillRuns(folder, None)))
        written = (_group_shards(runs, [json.dumps(g) for g in self._groups])
                   | "Write" >> beam.Map(write_group))
        _ = after_all(written, "DeleteSpill", delete_folder, folder)
        return written


def _file_name(path: str) -> str:
    """The last component of a local or remote path (what an export's tally is named by)."""
    return path.rstrip("/").rsplit("/", 1)[-1]


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
        ordered = heapq.merge(*(_shard_rows(s) for s in shards), key=lambda r: _sortable(sort_key(r)))
        writers = {k: writer_for(k) for k in keys}
        files = {k: _BufferedText(path_for(k)) for k in keys}
        counts = dict.fromkeys(keys, 0)
        routers = {id(w._router) for w in writers.values() if isinstance(w, _LineWriter)}
        # line writers of one router (ExportLinesFromTable): each row's lines go straight to
        # their files, instead of every writer being asked about every row
        router = next(iter(writers.values()))._router if len(routers) == 1 and all(
            isinstance(w, _LineWriter) for w in writers.values()) else None
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
        return [(f"jsonl|{label}/{_file_name(path_for(k))}", counts[k]) for k in keys]


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


class ExportFromTable(beam.PTransform):
    """After WriteTable has written a table, write one file per key from its rows, each by a
    stateful writer (a document that is not one line per row, e.g. one JSON object).

    Applied to the table's tallies, like ExportLinesFromTable. `writer_for(key)` gives an
    object with `begin() -> str`, `add(row) -> str | None` (None: the row is not this file's)
    and `end() -> str`; the rows come in `sort_key` order, merged from the sorted shards and
    read once for every file, so no file's rows are ever held. Returns (`jsonl|<label>/<key>`,
    rows written) tallies. `ExportTables` runs several exports in one step.
    """

    def __init__(self, table_path: str, keys: Iterable[Any], sort_key: Callable[[dict], Any],
                 writer_for: Callable[[Any], Any], path_for: Callable[[Any], str], label: str):
        super().__init__(f"Export[{label}]")
        self.export = _TableExport(table_path, list(keys), sort_key, writer_for, path_for, label)

    def expand(self, written):
        export = self.export
        return after_all(written, "Write", lambda _: export.write())


class ExportTables(beam.PTransform):
    """Several ExportFromTable exports (of tables WriteTables wrote together) in one step, once
    every table is written: applied to the tables' tallies, returns every export's tallies."""

    def __init__(self, exports: Sequence[ExportFromTable], label: str = "Exports"):
        super().__init__(label)
        self._exports = [e.export for e in exports]

    def expand(self, written):
        exports = self._exports
        return after_all(written, "Write", lambda _: [t for e in exports for t in e.write()])


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

    def __init__(self, table_path: str, keys: Iterable[Any], sort_key: Callable[[dict], Any],
                 lines: Callable[[dict], Iterable[tuple[Any, str]]], path_for: Callable[[Any], str], label: str,
                 *, newline_at_end: bool | Callable[[Any], bool] = True):
        router = _LineRouter(lines)
        ends = newline_at_end if callable(newline_at_end) else (lambda key, end=newline_at_end: end)
        super().__init__(table_path, keys, sort_key, lambda key: _LineWriter(router, key, ends(key)),
                         path_for, label)


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


class ExportJsonlFromTable(ExportLinesFromTable):
    """ExportLinesFromTable writing one JSON-lines file per group: group g's file
    `path_for(g)` holds `line(row)` as JSON for the table's rows with `row[column] == g`."""

    def __init__(self, table_path: str, column: str, groups: Iterable[Any], sort_key: Callable[[dict], Any],
                 line: Callable[[dict], dict], path_for: Callable[[Any], str], label: str):
        super().__init__(table_path, groups, sort_key, lambda row: [(row[column], jsonl_line(line(row))[:-1])],
                         path_for, label)

