"""The sorted, sharded table writer: an external merge sort on files (spill runs) that writes
parquet tables (`WriteTables`, `WriteTable`) and sorted JSON-lines groups (`WriteJsonlGroups`).

How: each bundle pickles its rows, sorts them by (bucket, sort key, pickled row) every
SPILL_BYTES and writes them as one run file under a `_spill` folder (`_SpillRuns`); only
each run's small index (bucket -> offset and length) is shuffled; a shard then reads its
buckets' segments from every run and merges them (`merge_runs.merged_records`: in memory up to 16 MB
of segments, else through chunked local files, so memory never follows the shard's size),
and is written row group by row group. The spilled runs are deleted once every shard is written.

Why not Beam's GroupByKey on the rows: a shuffle carries every row whole, the local runner
holds every grouped row in its buffers until the group is read (LOT on 20,000 stories: 989
MiB peak instead of 598), and a group's values come in arrival order, so each shard would
still have to be sorted in memory to give the same bytes on every runner and worker count.
Sorting where the rows are made and shuffling only the run indexes keeps memory at one
run per bundle and a bounded merge per writer, and the total order (key, then the pickled row)
makes ties independent of arrival.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import operator
import pickle
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

import apache_beam as beam
import pyarrow as pa
from apache_beam.io.filesystems import FileSystems
from apache_beam.transforms.window import GlobalWindows

from pipelines.engine.gather import after_all, once, seeded
from pipelines.engine.jsontext import JSON_KEY
from pipelines.engine.merge_runs import (
    sortable,
    tagged_worth_a_worker,
    worth_a_worker,
    write_jsonl_group,
    write_table_shard,
    write_tagged,
)
from pipelines.engine.parquet_files import row_bytes
from pipelines.engine.paths import DEFAULT_SPLITS, delete_folder, file_name, hf_split, is_local_path, join
from pipelines.engine.stage import PooledFlatMap

SHARD_BYTES = 128 << 20  # target uncompressed bytes per shard when the count follows the data
MAX_SHARDS = 4096
SHARDING = {"shards": None, "shard_bytes": SHARD_BYTES}  # set from --shards / --shard-bytes
SHARD_PREFIX = b"shard\x1f"  # stable_int("shard", text): SHA-256 of "shard" US text


def shard_of_key(key: Any, shards: int) -> int:
    """The bucket of a sort key: `stable_int("shard", json of the key) % shards`, computed
    straight from the digest's first 8 bytes (the same number)."""
    digest = hashlib.sha256(SHARD_PREFIX + JSON_KEY(key).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % shards


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

    def __init__(
        self,
        folder: str,
        measure: Callable[[Any], int] | None,
        keyed: Callable[[Any], Iterable[tuple]] | None = None,
        size_of: Callable[[Any], Any] | None = None,
    ):
        self._folder, self._measure, self._keyed, self._size_of = folder, measure, keyed, size_of

    def start_bundle(self):
        self._buf, self._held, self._est = [], 0, {}

    def process(self, element):
        dumps, measure, size_of, est = pickle.dumps, self._measure, self._size_of, self._est
        for bucket, key, record in self._keyed(element) if self._keyed is not None else (element,):
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
        with FileSystems.create(path, mime_type="application/octet-stream", compression_type="uncompressed") as f:
            for bucket, group in itertools.groupby(buf, key=operator.itemgetter(0)):
                data = pickle.dumps(
                    [(key, blob, size) for _, key, blob, size in group], protocol=pickle.HIGHEST_PROTOCOL
                )
                f.write(data)
                segments[bucket] = (offset, len(data))
                offset += len(data)
        return _Run(path, segments, len(buf), est if self._size_of is not None else est.get(None, 0))


def _shard_segments(run: _Run, shard_of: Callable[[Any], Any]):
    """(shard, [(run path, offset, length), ...]) for the segments of one run: a shard's
    buckets that lie next to each other in the run are one range (a table of one shard reads
    each run in one piece, not one piece per bucket: its tasks then carry a range per run
    instead of about one per row, and the shard is read in as many reads)."""
    per: dict = {}
    for bucket, (offset, length) in sorted(run.segments.items(), key=lambda item: item[1]):
        ranges = per.setdefault(shard_of(bucket), [])
        if ranges and ranges[-1][1] + ranges[-1][2] == offset:
            ranges[-1] = (run.path, ranges[-1][1], ranges[-1][2] + length)
        else:
            ranges.append((run.path, offset, length))
    return list(per.items())


def _group_shards(runs, groups: list, label: str = ""):
    """(group, [segment lists]) for every group in `groups`, empty ones included: the runs'
    segments grouped by their bucket, which is the group itself (WriteJsonlGroups)."""
    seeds = seeded(runs.pipeline, f"Seeds{label}", [(g, None) for g in groups])
    parts = runs | f"Segments{label}" >> beam.FlatMap(_shard_segments, lambda bucket: bucket)
    return (parts, seeds) | f"Join{label}" >> beam.Flatten() | f"Group{label}" >> beam.GroupByKey()


def _shard_writer(name: str, write, local: bool, worth=worth_a_worker):
    """The step that writes each shard task (`merge_runs`): on the pool's workers in a local
    run that has one and writes local files (each shard of POOL_BYTES or more one task, on new
    workers that hold nothing an earlier stage loaded), else here."""
    if local:
        return beam.ParDo(PooledFlatMap(name, write, fresh_workers=True, items=1, worth=worth))
    return beam.FlatMap(write)


class JsonlGroups(NamedTuple):
    """Sorted JSON-lines files written beside WriteTables' tables, in the same write step
    (WriteJsonlGroups says what they are): `path_for(group)`, the groups that always get a
    file, and the label of their tallies and spill folder."""

    path_for: Callable[[Any], str]
    groups: Sequence[Any]
    label: str


def _jsonl_tasks(items, spec: JsonlGroups, prefix: str = ""):
    """(write_jsonl_group's task per group, the spill folder, whether every file is local) of
    JsonlEntry items (WriteJsonlGroups)."""
    path_for, groups, label = spec.path_for, list(spec.groups), spec.label
    first = path_for(groups[0] if groups else "_")
    folder = f"{first.rsplit('/', 1)[0] if '/' in first else '.'}/{SPILL_FOLDER}-{label}"

    def group_task(item):
        bucket, segment_lists = item
        path = path_for(json.loads(bucket))
        return path, f"jsonl|{label}/{file_name(path)}", list(segment_lists)

    local = is_local_path(folder) and all(is_local_path(path_for(g)) for g in groups)
    runs = items | f"{prefix}Key" >> beam.Map(_spill_entry) | f"{prefix}Spill" >> beam.ParDo(_SpillRuns(folder, None))
    grouped = _group_shards(runs, [json.dumps(g) for g in groups], prefix)
    return grouped | f"{prefix}Groups" >> beam.Map(group_task), folder, local


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
    `jsonl`: JSON-lines groups (`JsonlGroups`, as WriteJsonlGroups writes them) whose entries
    are the last inputs, one PCollection each after the tables' ones: their files are written
    in the tables' write step, so on a pool every large shard and group is written at once.
    Returns the (key, n) tallies (`table|<name>`, and `split|<name>|<split>`; `jsonl|...`).
    """

    def __init__(
        self,
        tables: dict[str, TableSpec],
        rows_of: Sequence[Callable[[Any], Iterable[tuple]]],
        *,
        spill: str,
        label: str | None = None,
        jsonl: Sequence[JsonlGroups] = (),
    ):
        super().__init__(label)
        self._specs = {}
        for name, spec in tables.items():
            splits = (
                (tuple(dict.fromkeys(hf_split(x) for x in spec.splits)) if spec.splits is not None else DEFAULT_SPLITS)
                if "split" in spec.schema.names
                else None
            )
            self._specs[name] = spec._replace(shards=spec.shards or SHARDING["shards"], splits=splits)
        self._rows_of, self._spill, self._jsonl = list(rows_of), spill, list(jsonl)
        self._shard_bytes = SHARDING["shard_bytes"]

    def expand(self, inputs):
        specs, folder, shard_bytes = self._specs, self._spill, self._shard_bytes
        pcolls = inputs if isinstance(inputs, (tuple, list)) else (inputs,)
        if len(pcolls) != len(self._rows_of) + len(self._jsonl):
            raise ValueError(
                f"WriteTables: {len(pcolls)} inputs but {len(self._rows_of)} rows_of functions "
                f"and {len(self._jsonl)} JSON-lines groups"
            )
        pcolls, entries = pcolls[: len(self._rows_of)], pcolls[len(self._rows_of) :]
        keys = {name: spec.sort_key for name, spec in specs.items()}
        split_tables = {name for name, spec in specs.items() if spec.splits is not None}

        def keyed(rows_of):
            def triples(element):
                for name, row in rows_of(element):
                    k = sortable(keys[name](row))
                    b = shard_of_key(k, MAX_SHARDS)
                    yield ((name, hf_split(row["split"]), b) if name in split_tables else (name, None, b)), k, row

            return triples

        def count_of(sizes, name):
            spec = specs[name]
            if spec.shards:
                return max(1, int(spec.shards))
            return shard_count(sum(size.get(name, 0) for size in sizes), shard_bytes)

        def shard_of(bucket, counts):
            name, split, b = bucket
            return name, split, b % counts[name]

        def seeds(_, sizes):
            return [
                ((name, split, i), None)
                for name, spec in sorted(specs.items())
                for split in (spec.splits or (None,))
                for i in range(count_of(sizes, name))
            ]

        def shard_task(item, sizes):
            (name, split, i), segment_lists = item
            spec, n_shards = specs[name], count_of(sizes, name)
            file_name = (
                f"part-{i:05d}-of-{n_shards:05d}.parquet"
                if split is None
                else f"{split}-{i:05d}-of-{n_shards:05d}.parquet"
            )
            return join(spec.path, file_name), spec.schema, name, split, list(segment_lists)

        spilled = [
            pc
            | (f"Spill{i}" if len(pcolls) > 1 else "Spill")
            >> beam.ParDo(_SpillRuns(folder, row_bytes, keyed(fn), size_of=operator.itemgetter(0)))
            for i, (pc, fn) in enumerate(zip(pcolls, self._rows_of))
        ]
        runs = spilled[0] if len(spilled) == 1 else spilled | "Runs" >> beam.Flatten()
        sizes = beam.pvalue.AsList(runs | "RunBytes" >> beam.Map(lambda run: run.nbytes))
        seeded_shards = once(runs.pipeline, "One") | "Seeds" >> beam.FlatMap(seeds, sizes)

        def segments(run, sizes):
            # each table's shard count once per run, not once per bucket (a sum over every run)
            counts = {name: count_of(sizes, name) for name in specs}
            return _shard_segments(run, functools.partial(shard_of, counts=counts))

        parts = runs | "Segments" >> beam.FlatMap(segments, sizes)
        grouped = (parts, seeded_shards) | "Join" >> beam.Flatten() | "Group" >> beam.GroupByKey()
        local = is_local_path(folder) and all(is_local_path(spec.path) for spec in specs.values())
        tasks = grouped | "Shards" >> beam.Map(shard_task, sizes)
        if not self._jsonl:
            written = tasks | "Write" >> _shard_writer("write_tables", write_table_shard, local)
            _ = after_all(written, "DeleteSpill", delete_folder, folder)
            return written
        # the JSON-lines groups' tasks join the shards' in one write step, so the pool's
        # workers write them side by side instead of one writer's tasks after another's
        tagged, folders = [tasks | "TableTasks" >> beam.Map(lambda task: ("table", task))], [folder]
        for i, (spec, items) in enumerate(zip(self._jsonl, entries)):
            group_tasks, group_folder, group_local = _jsonl_tasks(items, spec, f"Jsonl{i}")
            tagged.append(group_tasks | f"Jsonl{i}Tasks" >> beam.Map(lambda task: ("jsonl", task)))
            folders.append(group_folder)
            local = local and group_local
        write = functools.partial(write_tagged, {"table": write_table_shard, "jsonl": write_jsonl_group})
        written = (
            tagged
            | "AllTasks" >> beam.Flatten()
            | "Write" >> _shard_writer("write_tables", write, local, tagged_worth_a_worker)
        )
        for i, spill in enumerate(folders):
            _ = after_all(written, f"DeleteSpill{i or ''}", delete_folder, spill)
        return written


class WriteTable(WriteTables):
    """Write row dicts as one parquet table folder `path/part-SSSSS-of-NNNNN.parquet`
    (WriteTables, one table): its rows spill to `path/_spill/`. Returns the (key, n) tally."""

    def __init__(
        self,
        path: str,
        schema: pa.Schema,
        sort_key: Callable[[dict], Any],
        *,
        name: str | None = None,
        shards: int | None = None,
        splits: Iterable[str] | None = None,
    ):
        name = name or path.rstrip("/").rsplit("/", 1)[-1]
        super().__init__(
            {name: TableSpec(path, schema, sort_key, shards, splits)},
            [lambda row: ((name, row),)],
            spill=join(path, SPILL_FOLDER),
            label=f"WriteTable[{name}]",
        )
        self._shards = self._specs[name].shards


def _spill_entry(entry) -> tuple:
    """(bucket, key, record) of a WriteJsonlGroups element (schemas.common.JsonlEntry, or
    a (group, sort key, record) tuple): the group as JSON text is the bucket."""
    group, sort_key, record = entry
    return json.dumps(group), sortable(sort_key), record


class WriteJsonlGroups(beam.PTransform):
    """Write records to `path_for(group)` as sorted JSON lines, one file per group.

    Elements are JsonlEntry(group, sort_key, record dict) (schemas.common). Every group in
    `groups` gets a file, empty or not. Used for LOT's annotation and review tasks.
    """

    def __init__(self, path_for: Callable[[Any], str], groups: Iterable[Any], label: str):
        super().__init__(f"WriteJsonl[{label}]")
        self._path_for, self._groups, self._label = path_for, list(groups), label

    def expand(self, items):
        tasks, folder, local = _jsonl_tasks(items, JsonlGroups(self._path_for, self._groups, self._label))
        written = tasks | "Write" >> _shard_writer(f"write_jsonl[{self._label}]", write_jsonl_group, local)
        _ = after_all(written, "DeleteSpill", delete_folder, folder)
        return written
