"""Beam readers of the jobs' inputs: `MatchInputs` (the files of a pattern, matched when the
job runs), `ReadLines` (numbered lines, in byte ranges spread over the workers), `ReadFiles`
(whole files: books, pages, games) and `ReadParquetRows` (rows of parquet tables).

Why: every job reads its inputs the same way, so input ids ("name:line", "name:row"), the
progress bar's byte counts and the spreading of work over the workers are decided once here.
"""

from __future__ import annotations

from collections.abc import Sequence

import apache_beam as beam
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems

from annotators.core.outcome import Drop
from pipelines.engine import progress, ranges
from pipelines.engine.compressed import ReadBreak, open_checked
from pipelines.engine.gather import once, seeded
from pipelines.engine.paths import Source, expand_input, is_local_path, match_sources, read_bytes
from pipelines.engine.ranges import iter_lines
from pipelines.engine.textlines import HEAD_BYTES, is_utf16_head, line_payload
from pipelines.engine.usage import warn_empty_files

READ_ERROR = "__read_error__"


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
        return once(pbegin.pipeline, "Pattern") | "Match" >> beam.FlatMap(lambda _: match_sources(pattern, exts, mixed))


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


def broken_read(exc: ReadBreak, records: int) -> Drop:
    """The rejects record of a compressed file that breaks mid-way (a reader yields it as the
    payload of the record after the last one read; `pool_worker.outcome` rejects it as it is):
    how far reading got."""
    return Drop(
        exc.reason,
        {
            "message": str(exc)[:300],
            "records_read": records,
            "compressed_bytes_read": exc.read_in,
            "content_bytes_read": exc.read_out,
        },
    )


class _Head:
    """A file object whose first bytes were read already (`head`): read(n) gives them first."""

    def __init__(self, head: bytes, f):
        self._head, self._f = head, f

    def read(self, n: int = -1) -> bytes:
        if self._head:
            if n < 0:
                data, self._head = self._head + self._f.read(), b""
                return data
            data, self._head = self._head[:n], self._head[n:]
            return data
        return self._f.read(n)


def _compressed_lines(r: ranges.LineRange):
    """`_range_lines` of a whole compressed file (.gz, .bz2, and the kinds Beam decompresses):
    its content's lines, and where a .gz/.bz2 file ends early or is corrupt, one record whose
    payload is the Drop that says how far reading got (the lines before it are kept)."""
    number = 0
    try:
        with open_checked(r.path) as f:
            head = f.read(HEAD_BYTES)
            if is_utf16_head(head):
                yield f"{r.name}:1", head
                return
            for number, raw in enumerate(counted(iter_lines(_Head(head, f))), start=1):
                yield f"{r.name}:{number}", line_payload(raw)
    except ReadBreak as exc:
        yield f"{r.name}:{number + 1}", broken_read(exc, number)


def _range_lines(r: ranges.LineRange):
    """(input_id "name:line", raw line) of one numbered line range, its bytes reported to the
    progress bar as they are read. A UTF-16/32 file (pipelines.engine.textlines) is one
    record, its head, given by the range that starts the file (issue 28). A compressed file
    is one range, decompressed (`_compressed_lines`)."""
    if ranges.is_compressed(r.path):
        yield from _compressed_lines(r)
        return
    with FileSystems.open(r.path, compression_type="uncompressed") as f:
        head = f.read(HEAD_BYTES)
        if is_utf16_head(head):
            if r.start == 0:
                yield f"{r.name}:1", head
            return
        for number, raw in enumerate(counted(ranges.range_lines(f, r)), start=r.first_line):
            yield f"{r.name}:{number}", line_payload(raw)


def parquet_batches(f, path: str, batch_size: int, columns):
    """Record batches of an open parquet file, reporting its bytes to the progress bar in
    proportion to the rows read."""
    pf = pq.ParquetFile(f)
    size, rows = progress.local_size([path]), max(1, pf.metadata.num_rows)
    for batch in pf.iter_batches(batch_size=batch_size, columns=columns):
        progress.advance(size * batch.num_rows // rows)
        yield batch


BLOCK_BYTES = 1 << 20  # a block of records (ReadRecords(blocks=True)) holds about this much text
BLOCK_RECORDS = 2048  # and at most this many records


def in_blocks(records, size_of):
    """`records` as lists of up to BLOCK_RECORDS records and about BLOCK_BYTES (`size_of`
    each), in order: a block is one element, so Beam's per-element work is paid per block."""
    block, size = [], 0
    for record in records:
        block.append(record)
        size += size_of(record)
        if size >= BLOCK_BYTES or len(block) >= BLOCK_RECORDS:
            yield block
            block, size = [], 0
    if block:
        yield block


class ReadLines(_Reader):
    """(input_id "name:line", raw bytes) for every line of every file, streamed; files are
    read in line ranges spread over the workers, and a compressed file (`.gz`, `.bz2`, ...)
    whole, decompressed: a break in it is a record whose payload is a Drop (`broken_read`)."""

    def _records(self, sources):
        spread = ranges.numbered_ranges(sources)
        return spread | "Lines" >> beam.FlatMap(_range_lines)


def read_content(path: str) -> bytes | Drop:
    """A file's bytes, decompressed when its name says it is compressed (`.gz`, `.bz2`, ...),
    or the Drop of a compressed file that ends early or is corrupt."""
    if not ranges.is_compressed(path):
        return read_bytes(path)
    try:
        with open_checked(path) as f:
            chunks = []
            while True:  # to the end: a break is raised by the read after the last bytes before it
                chunk = f.read(1 << 20)
                if not chunk:
                    return b"".join(chunks)
                chunks.append(chunk)
    except ReadBreak as exc:
        return broken_read(exc, 0)


class ReadFiles(_Reader):
    """(input_id, whole-file bytes) for every file: one element per book/page/game; a
    compressed file decompressed (its Drop, `broken_read`, when it breaks)."""

    def _records(self, sources):
        def read(source: Source):
            data = read_content(source.path)
            progress.advance(len(data) if isinstance(data, bytes) else 0)
            return source.name, data

        return sources | "SpreadFiles" >> beam.Reshuffle() | "Read" >> beam.Map(read)


class ReadParquetRows(_Reader):
    """(input_id "name:row", row dict) for every row of every parquet file, streamed.

    A file that cannot be read yields one row {READ_ERROR: message} for the parser to reject.
    """

    def __init__(
        self,
        paths: Sequence[str] | None = None,
        names: dict[str, str] | None = None,
        columns: Sequence[str] | None = None,
    ):
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


def _is_parquet(source: Source) -> bool:
    return source.path.endswith(".parquet")


def _is_line_file(source: Source) -> bool:
    return not _is_parquet(source)


def read_lines_or_rows(p, pattern: str, exts: Sequence[str], label: str = "", *, mixed: bool = False):
    """(input_id, raw line bytes | parquet row dict) for every record of a pattern's JSON-lines
    and parquet files, matched when the job runs and routed by extension (a local pattern is
    listed now only to leave out a kind it has no file of). `label` tells apart several reads
    of one pattern; `mixed`: a folder's files of every one of `exts` (`expand_input`)."""
    kinds = (
        {x.endswith(".parquet") for x in expand_input(pattern, exts, mixed=mixed)}
        if is_local_path(pattern)
        else {True, False}
    )
    sources = p | f"MatchRecords{label}" >> MatchInputs(pattern, exts, mixed=mixed)
    parts = []
    if False in kinds:
        parts.append(sources | f"LineFiles{label}" >> beam.Filter(_is_line_file) | f"ReadLines{label}" >> ReadLines())
    if True in kinds:
        parts.append(
            sources | f"ParquetFiles{label}" >> beam.Filter(_is_parquet) | f"ReadParquet{label}" >> ReadParquetRows()
        )
    return parts[0] if len(parts) == 1 else parts | f"AllRecords{label}" >> beam.Flatten()
