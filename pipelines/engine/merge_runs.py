"""The Beam-free half of the sorted table writer (pipelines.engine.sorted_tables): merging one
shard's segments from the spilled runs, and writing the shard as parquet (`write_table_shard`)
or as JSON lines (`write_jsonl_group`).

Why a module of its own: in a local run with a pool (pipelines.engine.pool), each shard is a
task on a worker, so a job's tables are written on every core instead of in the job's process
alone after the rest of the run (LOT at 80,000 stories: about 8 s of its last 20 s). A pool
worker must not import Beam, and nothing here does: local paths are opened directly (as Beam's
local file system opens them), any other path through Beam's FileSystems, imported only then.
A shard of a remote output, or any shard without a pool, is written in the job's process by
the same functions.
"""

from __future__ import annotations

import heapq
import io
import itertools
import operator
import os
import pickle
import shutil
import tempfile
import uuid
from collections.abc import Iterable
from typing import Any

MERGE_IN_MEMORY_BYTES = 16 << 20  # a shard whose spilled segments are at most this is merged in memory
MERGE_FAN_IN = 64  # sorted files one merge reads at once (each holds one chunk in memory)
CHUNK_BYTES = 256 << 10  # rows pickled together in a merge file (at least one row)
POOL_BYTES = 32 << 20  # a shard of at least this many pickled bytes is worth a pool worker


def worth_a_worker(task: tuple) -> bool:
    """Whether a shard task (`write_table_shard`'s or `write_jsonl_group`'s: its segment lists
    last) holds at least POOL_BYTES: a smaller one is written where it is. A new worker (a
    process with pyarrow, about 90 MB) costs more than such a shard saves and adds its memory
    to the run's peak: the stories job's 79,140 reject rows (about 17 MB) on a worker raised
    the run's peak by 35-40 MiB at 80,000 stories and saved nothing."""
    return sum(length for lst in task[-1] if lst for _, _, length in lst) >= POOL_BYTES


_NONE_KEY = ("", "")


def sortable(key: Any) -> Any:
    """Make a sort key totally ordered (None sorts first) and JSON-stable: every scalar
    becomes (its type's name, itself), every list or tuple a tuple of those (one list
    comprehension per level: this runs once per row of every table)."""
    if isinstance(key, (list, tuple)):
        return tuple(
            [
                sortable(k) if isinstance(k, (list, tuple)) else _NONE_KEY if k is None else (type(k).__name__, k)
                for k in key
            ]
        )
    return _NONE_KEY if key is None else (type(key).__name__, key)


def is_local_path(path: str) -> bool:
    """A path of this machine's file system (no `scheme://`); pipelines.engine.paths uses it too."""
    return "://" not in path


def open_read(path: str):
    """A binary read handle: the file itself for a local path, else Beam's FileSystems."""
    if is_local_path(path):
        return open(path, "rb")
    from apache_beam.io.filesystems import FileSystems

    return FileSystems.open(path, compression_type="uncompressed")


def create(path: str):
    """A binary write handle, its folders made for a local path (as Beam's local file system
    does), else Beam's FileSystems."""
    if is_local_path(path):
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        return open(path, "wb")
    from apache_beam.io.filesystems import FileSystems

    return FileSystems.create(path, mime_type="application/octet-stream", compression_type="uncompressed")


def park_blobs(folder: str, blobs: list[bytes]) -> list:
    """Write `blobs` one after another into one new file of `folder` and return each one's
    `schemas.common.Loc`: a step's output parked on disk where it is made (a pool worker, in a
    local run), so that only its locations cross the runner's stage boundaries, which the
    local runner holds whole until the next stage has read them. The folder is deleted with
    the job's other spill files."""
    from schemas.common import Loc

    path = f"{folder.rstrip('/')}/park-{uuid.uuid4().hex}.pkl"  # a name only, never an output
    locs, offset = [], 0
    with create(path) as f:
        for blob in blobs:
            f.write(blob)
            locs.append(Loc(path, offset, len(blob)))
            offset += len(blob)
    return locs


def read_loc(loc) -> bytes:
    """The bytes a `park_blobs` (or spill) location points at."""
    return read_pickles([loc])[loc]


def read_pickles(locs: Iterable[Any]) -> dict[Any, bytes]:
    """The bytes at each of `locs` (spilled records' pickles, not decoded), each file opened
    once and read in offset order; in the job's process or on a pool worker alike."""
    out: dict[Any, bytes] = {}
    by_file: dict[str, list] = {}
    for loc in locs:
        by_file.setdefault(loc.path, []).append(loc)
    for path, group in sorted(by_file.items()):
        with open_read(path) as f:
            for loc in sorted(set(group)):
                f.seek(loc.offset)
                out[loc] = f.read(loc.length)
    return out


def merged_records(segment_lists, sized: bool = False) -> Iterable[Any]:
    """The records of one shard's segments (from every run) in (key, pickled) order (`sized`:
    as (record, measured size) pairs). A shard of at most MERGE_IN_MEMORY_BYTES of segments is
    merged in memory (one C sort of the sorted runs' concatenation); a larger one in bounded
    memory (`external_merge`), with the same order."""
    segments = sorted(s for lst in segment_lists if lst for s in lst)
    if sum(length for _, _, length in segments) > MERGE_IN_MEMORY_BYTES:
        ordered = external_merge(segments)
    else:
        ordered = sorted(
            itertools.chain.from_iterable(
                run_rows(path, group) for path, group in itertools.groupby(segments, key=operator.itemgetter(0))
            )
        )
    if sized:
        return ((pickle.loads(blob), size) for _, blob, size in ordered)
    return (pickle.loads(blob) for _, blob, _ in ordered)


def run_rows(path: str, segments) -> list:
    """The (key, pickled row, size) triples of one run's segments, each bucket's sorted. A
    segment is a range of the run: one or more buckets' pickled lists, one after another."""
    rows = []
    with open_read(path) as f:
        for _, offset, length in segments:
            f.seek(offset)
            data = io.BytesIO(f.read(length))
            while data.tell() < length:
                rows.extend(pickle.load(data))
    return rows


def external_merge(segments) -> Iterable[tuple]:
    """The shard's rows in sorted order, holding about one run's share of the shard plus one
    chunk per open file: each run's segments are sorted together and written to a local
    temporary file in chunks, and the files are merged MERGE_FAN_IN at a time (heapq.merge;
    a merge of more files goes through intermediate files first). Equal rows are identical,
    so the order is exactly the in-memory sort's."""
    folder = tempfile.mkdtemp(prefix="storybench-merge-")
    try:
        files = []
        for path, group in itertools.groupby(segments, key=operator.itemgetter(0)):
            files.append(_write_chunks(os.path.join(folder, f"{len(files)}.run"), sorted(run_rows(path, group))))
        level = 0
        while len(files) > MERGE_FAN_IN:
            level += 1
            files = [
                _write_chunks(
                    os.path.join(folder, f"{level}-{i}.run"),
                    heapq.merge(*(_read_chunks(p) for p in files[i : i + MERGE_FAN_IN])),
                )
                for i in range(0, len(files), MERGE_FAN_IN)
            ]
        yield from heapq.merge(*(_read_chunks(p) for p in files))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _write_chunks(path: str, rows: Iterable[tuple]) -> str:
    """Write sorted (key, blob, size) rows to `path` as pickled lists of about CHUNK_BYTES."""
    with open(path, "wb") as f:
        chunk, held = [], 0
        for row in rows:
            chunk.append(row)
            held += len(row[1]) + 64
            if held >= CHUNK_BYTES:
                pickle.dump(chunk, f, protocol=pickle.HIGHEST_PROTOCOL)
                chunk, held = [], 0
        if chunk:
            pickle.dump(chunk, f, protocol=pickle.HIGHEST_PROTOCOL)
    return path


def _read_chunks(path: str) -> Iterable[tuple]:
    """The rows `_write_chunks` wrote, one chunk in memory at a time."""
    with open(path, "rb") as f:
        while True:
            try:
                chunk = pickle.load(f)
            except EOFError:
                return
            yield from chunk


def write_table_shard(task: tuple) -> list[tuple[str, int]]:
    """One parquet shard, `task` = (path, schema, table name, split or None, segment lists):
    its rows merged from the runs and written row group by row group. Returns its tallies
    (`table|<name>` and, for a table with splits, `split|<name>|<split>`: the rows written)."""
    from pipelines.engine.parquet_files import write_parquet

    path, schema, name, split, segment_lists = task
    n = write_parquet(path, merged_records(segment_lists, sized=True), schema, sized=True)
    return [(f"table|{name}", n)] + ([(f"split|{name}|{split}", n)] if split is not None else [])


def write_jsonl_group(task: tuple) -> list[tuple[str, int]]:
    """One JSON-lines file, `task` = (path, tally key, segment lists): its records merged from
    the runs, a line each. Returns [(tally key, lines written)]."""
    from pipelines.engine.jsontext import jsonl_line

    path, key, segment_lists = task
    n = 0
    with create(path) as f:
        for rec in merged_records(segment_lists):
            f.write(jsonl_line(rec).encode("utf-8"))
            n += 1
    return [(key, n)]


def write_tagged(writers: dict, task: tuple) -> list[tuple[str, int]]:
    """One `(kind, task)` of a write step that writes several kinds of shard together
    (`WriteTables` with JSON-lines groups): `writers[kind](task)`."""
    kind, inner = task
    return writers[kind](inner)


def tagged_worth_a_worker(task: tuple) -> bool:
    """`worth_a_worker` of a `(kind, task)` (write_tagged)."""
    return worth_a_worker(task[1])
