"""Line ranges: one line file read by every worker at once, numbered as one reader would.

Why: a job's heavy steps (jieba, chapter detection, n-gram matching) run fused with the read
that feeds them, and a runner can only spread what it receives as several elements. A file
matched by one impulse is one element, so without this a whole input file, and everything
fused after it, ran in one worker process however many the machine has.

How: each uncompressed line file is cut into byte ranges of about RANGE_BYTES. A line belongs
to the range that holds its first byte, so every line is read exactly once whatever the
cut. Input ids keep their line numbers ("name:12"): a first pass counts the lines that
start in each range (C `bytes.count`, reading the bytes once; the ranges are spread over the
workers), and the prefix sums per file give each range its first line number. The second
pass, spread again, reads each range's lines. Only the small range descriptors are
shuffled, never lines. A compressed file cannot be cut: it is one range, read whole.
The cut depends on the file size alone (never on the worker count), and the outputs never
depend on it.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems

from pipelines.engine.textlines import CHUNK, iter_lines, range_lines  # noqa: F401 (Beam-free: a pool worker reads lines)

RANGE_BYTES = 4 << 20  # bytes per range: small against a worker's share, large against a shuffle
RANGE_BYTES_ENV = "STORYBENCH_RANGE_BYTES"  # tests cut small files into many ranges with it
COMPRESSED = (".gz", ".gzip", ".bz2", ".zst", ".zstd", ".deflate", ".xz", ".lzma")


class LineRange(NamedTuple):
    """Bytes [start, end) of one file (`end` -1: the whole file, read as one range), the
    number (1-based) of the first line that starts in it (0 until counted), and the source
    record the file came from (a Source, an AuditSource: whatever the reader needs)."""

    path: str
    name: str
    start: int
    end: int
    first_line: int = 0
    source: Any = None


def is_compressed(path: str) -> bool:
    return path.lower().endswith(COMPRESSED)


def content_name(path: str) -> str:
    """`path` without its compression suffix (`a.txt.gz` -> `a.txt`): what the file holds,
    which routes it (a story per file or per line, a page or JSON lines)."""
    lower = path.lower()
    for ext in COMPRESSED:
        if lower.endswith(ext):
            return path[: -len(ext)]
    return path


def file_size(path: str) -> int:
    """The size of `path` in bytes, from the file system's metadata (-1 when unknown)."""
    try:
        found = FileSystems.match([path])[0].metadata_list
    except Exception:  # an unreadable path is read (and reported) by the reader itself
        return -1
    return found[0].size_in_bytes if found else -1


def plan_ranges(
    path: str, name: str, size: int, *, splittable: bool = True, range_bytes: int | None = None, source: Any = None
) -> list[LineRange]:
    """The ranges of one file: whole (one range) when it cannot or need not be cut."""
    if range_bytes is None:
        wanted = os.environ.get(RANGE_BYTES_ENV, "")
        range_bytes = int(wanted) if wanted.isdigit() and int(wanted) > 0 else RANGE_BYTES
    if not splittable or size < 0 or size <= range_bytes:
        return [LineRange(path, name, 0, -1, 1, source)]
    cuts = list(range(0, size, range_bytes)) + [size]
    return [LineRange(path, name, a, b, 0, source) for a, b in zip(cuts, cuts[1:])]


def line_starts(r: LineRange) -> tuple[LineRange, int]:
    """(r, the number of lines whose first byte lies in r): a line starts at 0 and after
    every b"\\n" that is not the file's last byte."""
    if r.end < 0:
        return r, 0
    lo = max(r.start - 1, 0)
    n = 1 if r.start == 0 and r.end > 0 else 0
    with FileSystems.open(r.path, compression_type="uncompressed") as f:
        f.seek(lo)
        left = r.end - 1 - lo  # newlines at positions [start - 1, end - 1) open lines in [start, end)
        while left > 0:
            data = f.read(min(CHUNK, left))
            if not data:
                break
            n += data.count(b"\n")
            left -= len(data)
    return r, n


def _range_order(counted: tuple[LineRange, int]) -> tuple[str, int]:
    r, _ = counted
    return r.path, r.start


def number_ranges(counted: list[tuple[LineRange, int]]) -> list[LineRange]:
    """Every counted range with its first line number (prefix sums of the counts per file)."""
    out, seen = [], {}
    for r, n in sorted(counted, key=_range_order):
        if r.end < 0:
            out.append(r)
            continue
        first = seen.get(r.path, 1)
        out.append(r._replace(first_line=first))
        seen[r.path] = first + n
    return out


def numbered_ranges(sources, *, splittable=lambda path: not is_compressed(path)):
    """Sources (anything with `path` and `name`) -> their numbered LineRanges, spread over
    the workers: the files' ranges are counted in parallel, numbered in one small step, and
    spread again for reading."""
    from pipelines.engine.gather import once

    def plan(source):
        return plan_ranges(
            source.path, source.name, file_size(source.path), splittable=splittable(source.path), source=source
        )

    counted = (
        sources
        | "PlanRanges" >> beam.FlatMap(plan)
        | "SpreadRanges" >> beam.Reshuffle()
        | "CountLines" >> beam.Map(line_starts)
    )
    numbered = once(sources.pipeline, "Number") | "NumberRanges" >> beam.FlatMap(
        lambda _, c: number_ranges(c), beam.pvalue.AsList(counted)
    )
    return numbered | "SpreadNumbered" >> beam.Reshuffle()
