"""Streaming readers shared by the audit jobs (overlap, bias). Wiring only.

`ReadRecords` checks each file once (a `<label>_files` Stage: binary or non-UTF-8 text and
broken parquet become rejects), then streams its records without holding a file in memory:
text/JSON lines line by line (.gz/.bz2 decompressed on the fly), parquet batch by batch
with only the needed columns. A file that breaks mid-way yields a Drop marker, which the
next Stage turns into a rejects row, so the job never crashes on it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import apache_beam as beam
import pyarrow.parquet as pq
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from annotators.audits import records as ar
from annotators.core.outcome import Drop
from pipelines.engine import JobReport, expand_input, input_names, is_local_path, join, progress, ranges
from pipelines.engine.compressed import ReadBreak, open_checked
from pipelines.engine.gather import once, seeded
from pipelines.engine.readers import BLOCK_BYTES, broken_read, counted, counted_lines, in_blocks, parquet_batches
from pipelines.engine.textlines import RangeBlock, line_payload
from pipelines.engine.usage import MissingInput, require_folder, warn_empty_files

PARQUET_BATCH = 1024


def _open(path: str, kind: str):
    """Parquet as it is; text and JSON lines decompressed (.gz/.bz2) and checked to their
    end, so a truncated or corrupt archive is an error, never a quiet early end."""
    if kind == "parquet":
        return FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)
    return open_checked(path)


def sniff_file(item: ar.AuditSource) -> list | Drop:
    """Stage fn over an AuditSource: keep a readable file, reject anything else."""
    path = item.path
    kind = ar.file_kind(path)
    try:
        with _open(path, kind) as f:
            if kind == "parquet":
                _ = pq.ParquetFile(f).schema_arrow  # reads the footer only
                return [item]
            head = f.read(ar.SNIFF_BYTES)
    except ReadBreak as exc:  # broken within its first bytes
        return broken_read(exc, 0)
    except Exception as exc:  # unreadable, truncated, or not the format its name says
        return Drop("unreadable_file", f"{type(exc).__name__}: {exc}"[:300])
    dropped = ar.sniff_text(head)
    return dropped if dropped else [item]


def stream_records(item: ar.AuditSource, columns: Sequence[str] | None):
    """A RawRecord for every record of one checked file, streamed.

    Its payload is raw line bytes (text, JSON lines), a row dict (parquet) or a Drop.
    """
    path, task, name = item
    kind = ar.file_kind(path)
    number = 0
    try:
        with _open(path, kind) as f:
            if kind == "parquet":
                have = set(pq.ParquetFile(f).schema_arrow.names)
                cols = [c for c in columns if c in have] if columns else None
                for batch in parquet_batches(f, path, PARQUET_BATCH, cols):
                    for row in batch.to_pylist():
                        number += 1
                        yield ar.RawRecord(f"{name}:{number}", task, kind, row)
                return
            for raw in counted_lines(f):
                number += 1
                yield ar.RawRecord(f"{name}:{number}", task, kind, line_payload(raw))
    except ReadBreak as exc:  # a truncated or corrupt archive: the records before the break are kept
        yield ar.RawRecord(f"{name}:{number + 1}", task, kind, broken_read(exc, number))
    except Exception as exc:  # a file that breaks mid-way: one rejects row, the rest kept
        yield ar.RawRecord(
            f"{name}:{number + 1}", task, kind, Drop("unreadable_file", f"{type(exc).__name__}: {exc}"[:300])
        )


def _splittable(path: str) -> bool:
    """Uncompressed text and JSON-lines files are read in line ranges; parquet and compressed
    files whole."""
    return ar.file_kind(path) != "parquet" and not ranges.is_compressed(path)


def stream_range(r: ranges.LineRange, columns: Sequence[str] | None):
    """`stream_records` of one numbered line range of a checked file (its source record is
    `r.source`); a whole-file range is the whole file."""
    if r.end < 0:
        yield from stream_records(r.source, columns)
        return
    path, task, name = r.source
    block = RangeBlock(path, name, task, ar.file_kind(path), r.start, r.end, r.first_line)
    yield from block.stream(counted)  # one reader of a range's lines, here and on the workers


def _payload_size(payload) -> int:
    if isinstance(payload, (bytes, str)):
        return len(payload)
    if isinstance(payload, dict):
        return sum(len(v) for v in payload.values() if isinstance(v, (bytes, str)))
    return 64


def stream_blocks(r: ranges.LineRange, columns: Sequence[str] | None):
    """`stream_range`'s records in blocks: a block is one element, so Beam's per-element work
    is paid per block, not per line. A line range is cut into RangeBlocks of about
    BLOCK_BYTES, each read where the stage works on it (numbered here by counting its line
    starts, C `bytes.count`); a whole file (parquet, compressed) is read here and cut by
    `in_blocks`."""
    if r.end < 0:
        return in_blocks(stream_range(r, columns), lambda record: _payload_size(record.payload))
    return range_blocks(r)


def range_blocks(r: ranges.LineRange, size: int = BLOCK_BYTES):
    """The RangeBlocks of a numbered line range: bytes cut every `size`, each numbered by the
    lines that start in the ones before it; a cut where no line starts is skipped."""
    path, task, name = r.source
    kind = ar.file_kind(path)
    first = r.first_line
    for start in range(r.start, r.end, size):
        end = min(start + size, r.end)
        _, n = ranges.line_starts(r._replace(start=start, end=end))
        progress.advance(end - start)
        if n:
            yield RangeBlock(path, name, task, kind, start, end, first)
        first += n


class ReadRecords(beam.PTransform):
    """Check then stream the records of `sources`; see module doc. With `blocks=True` the
    elements are blocks of records (`stream_blocks`), for a Stage with `blocks=True`.

    `sources` is a list of AuditSources, or a function returning them that runs when the job
    runs (remote inputs are never listed while the graph is built)."""

    def __init__(
        self,
        sources,
        report: JobReport,
        label: str,
        columns: Sequence[str] | None = None,
        check: bool = True,
        blocks: bool = False,
    ):
        super().__init__()
        self._sources = sources if callable(sources) else sorted(sources)
        self._report, self._label = report, label
        self._columns, self._check = (list(columns) if columns else None), check
        self._blocks = blocks

    def _files(self, pbegin):
        if not callable(self._sources):
            progress.expect_input(pbegin.pipeline, progress.local_size(s.path for s in self._sources))
            return pbegin | "Files" >> beam.Create(self._sources)
        resolve = self._sources
        return once(pbegin.pipeline, "Files") | "Match" >> beam.FlatMap(lambda _: sorted(resolve()))

    def expand(self, pbegin):
        stage = f"{self._label}_files"
        ok = files = self._files(pbegin)
        if self._check:  # unchecked: a second read of files another ReadRecords checked
            ok = files | self._report.stage(stage, sniff_file, input_id=lambda source: source.name)
        spread = ranges.numbered_ranges(ok, splittable=_splittable)
        return spread | "Stream" >> beam.FlatMap(stream_blocks if self._blocks else stream_range, self._columns)


def count_check(counts, expected: Sequence[str]):
    """(label, count) for every expected label (0 when absent) and every label seen, from
    (label, n) pairs (n records each; a block's merged outputs count its records).

    Labels are counted per key before the Flatten with the expected ones: the runner never
    holds one element per record (a reference has millions) at the Flatten."""
    seeds = seeded(counts.pipeline, "Expected", [(e, 0) for e in expected])
    counted = counts | "Count" >> beam.CombinePerKey(sum)
    return (counted, seeds) | "Counts" >> beam.Flatten() | "Sum" >> beam.CombinePerKey(sum)


def _lot_source_list(lot_dir: str, tasks: Sequence[str]) -> list:
    sources, _ = _lot_sources(lot_dir, tasks)
    return sources


def lot_sources(lot_dir: str, tasks: Sequence[str]) -> tuple:
    """(AuditSources (path, task, "task/file") of the parquet files of each LOT task folder
    present, the folders read). A remote LOT folder gives a function listing them when the
    job runs, and every task folder as read. A local LOT folder that does not exist, or holds
    none of the task folders, is a usage error."""
    require_folder(lot_dir, "--lot")
    if not is_local_path(lot_dir):
        return functools.partial(_lot_source_list, lot_dir, tasks), [join(lot_dir, task) for task in tasks]
    sources, inputs = _lot_sources(lot_dir, tasks)
    if not inputs:
        raise MissingInput(f"--lot {lot_dir!r} holds none of the task folders {', '.join(f'{t}/' for t in tasks)}")
    return sources, inputs


def table_sources(pattern: str, exts: Sequence[str], task: str):
    """AuditSources of a test table or reference: now for a local pattern, when the job runs
    for a remote one."""

    def listed() -> list:
        paths = expand_input(pattern, exts)
        warn_empty_files(paths)
        return [ar.AuditSource(path, task, name) for path, name in input_names(paths, pattern).items()]

    return listed() if is_local_path(pattern) else listed


def _lot_sources(lot_dir: str, tasks: Sequence[str]) -> tuple[list, list[str]]:
    sources, inputs = [], []
    for task in tasks:
        folder = join(lot_dir, task)
        try:
            paths = expand_input(folder, (".parquet",))
        except FileNotFoundError:
            continue  # a missing task folder shows up as empty splits in rejects
        names = input_names(paths, lot_dir)
        sources += [ar.AuditSource(path, task, names[path]) for path in paths]
        inputs.append(folder)
    return sources, inputs
