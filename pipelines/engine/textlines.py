"""Lines of text files, read in chunks: UTF-16 files caught before they are cut (issue 28),
and lines too long to be one record skipped as they are read.

Cut at b"\\n", UTF-16 text falls apart: the byte 0x0A sits inside many CJK characters, so
its "lines" are fragments that look like binary data, or even decode as GB18030 garbage.
The readers look at a file's first bytes first (`is_utf16_head`): a UTF-16/32 file (a
byte-order mark, or NULs at every other byte) is one record, its head, which the job's
parser rejects as `utf16` (annotators.core.sniff), instead of hundreds of misleading rows.

A line over `MAX_LINE_BYTES` is not a record a job can use (a JSON array written on one
line, a dump with no newlines): held whole and parsed, one such line of a few hundred MB
takes many GB. `iter_lines` keeps only its size and first bytes as it reads past it
(`LongLine`), and the readers make it one `line_too_long` rejects row.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from annotators.core.outcome import Drop
from annotators.core.sniff import utf16_evidence

HEAD_BYTES = 4096
CHUNK = 1 << 20  # bytes read at a time
MAX_LINE_BYTES = 64 << 20  # the longest line read as a record (a long novel is 2-10 MB)
_KEPT = 120  # first bytes of a skipped line shown in its rejects row


def is_utf16_head(head: bytes) -> bool:
    """Whether a file's first bytes show UTF-16/32 text (a byte-order mark or NULs at every
    other byte)."""
    return len(head) >= 4 and bool(utf16_evidence(head))


class LongLine:
    """A line over the limit, read past without being held: its size in bytes (`len`) and
    its first bytes."""

    __slots__ = ("head", "limit", "size")

    def __init__(self, size: int, head: bytes, limit: int = MAX_LINE_BYTES):
        self.size, self.head, self.limit = size, head[:_KEPT], limit

    def __len__(self) -> int:
        return self.size

    def __eq__(self, other) -> bool:
        return isinstance(other, LongLine) and (self.size, self.head) == (other.size, other.head)

    def __repr__(self) -> str:
        return f"LongLine({self.size}, {self.head!r})"

    def drop(self) -> Drop:
        start = self.head.decode("utf-8", errors="replace").rstrip("\ufffd")  # a character cut at the end
        message = f"a {self.size:,}-byte line is over the {self.limit:,}-byte limit of one record; it was skipped."
        if start.lstrip().startswith("["):
            message += " It starts like a JSON array: a JSON-lines file holds one record per line (`jq -c '.[]'`)."
        return Drop(
            "line_too_long",
            {"line_bytes": self.size, "limit_bytes": self.limit, "starts_with": start, "message": message},
        )


def line_payload(raw):
    """A line as a reader's record payload: its bytes without a final "\\r", or the Drop of a
    line too long to read."""
    return raw.drop() if isinstance(raw, LongLine) else raw.rstrip(b"\r")


def iter_lines(f, chunk: int = CHUNK, limit: int = MAX_LINE_BYTES) -> Iterator:
    """Lines of a binary file object without their b"\\n", streamed chunk by chunk; a line over
    `limit` bytes is a LongLine (only its first bytes are held while it is read).

    Works on any object with read(n), including Beam's decompressing file wrappers, which
    io.BufferedReader cannot wrap. A line spread over many chunks is joined once, at its end.
    """
    parts, size = [], 0  # the line under way: its pieces (its first bytes only, past the limit) and size
    while True:
        data = f.read(chunk)
        if not data:
            break
        lines = data.split(b"\n")
        tail = lines.pop()
        if lines:
            parts.append(lines[0])
            yield _line(parts, size + len(lines[0]), limit)
            if len(data) > limit:
                yield from (_line([x], len(x), limit) for x in lines[1:])
            else:
                yield from lines[1:]
            parts, size = [], 0
        parts.append(tail)
        size += len(tail)
        if size > limit and len(parts) > 1:
            parts = [b"".join(parts)[:_KEPT]]
    if size:
        yield _line(parts, size, limit)


def _line(parts: list, size: int, limit: int):
    if size > limit:
        return LongLine(size, b"".join(parts), limit)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def range_lines(f, r) -> Iterator[bytes]:
    """The lines (without b"\\n") of an open binary file whose first byte lies in r (bytes
    [r.start, r.end); a whole file when r.end is -1)."""
    if r.end < 0:
        f.seek(0)
        yield from iter_lines(f)
        return
    pos = r.start
    if r.start > 0:
        f.seek(r.start - 1)
        opens_line = f.read(1) == b"\n"
    else:
        f.seek(0)
        opens_line = True
    lines = iter_lines(f)
    if not opens_line:  # the line under way at `start` belongs to the range before
        pos += len(next(lines, b"")) + 1
    for line in lines:
        if pos >= r.end:
            break
        yield line
        pos += len(line) + 1


class RangeBlock(NamedTuple):
    """About a block's worth (pipelines.engine.readers.BLOCK_BYTES) of one uncompressed line
    file: the lines whose first byte lies in bytes [start, end), the first of them numbered
    `first_line`. It is read where it is worked on (`records`, on a pool worker in a local
    run), so the job's process sends a few numbers per block instead of reading, parsing and
    piping every line of a reference that may be many GB: it stays off the critical path
    however many workers there are. Same records, ids and rejects as reading the lines here
    (pipelines.engine.records.stream_range)."""

    path: str
    name: str
    task: str
    kind: str
    start: int
    end: int
    first_line: int

    def records(self) -> list:
        """The block's RawRecords, as a list (`stream`)."""
        return list(self.stream())

    def stream(self, lines=iter):
        """The block's RawRecords ("name:line", task, kind, the line without "\\r"), read as
        they go (`lines` wraps the line iterator: a progress count); a read that fails mid-way
        keeps the lines before it and adds one `unreadable_file` record."""
        from annotators.audits.records import RawRecord
        from annotators.core.outcome import Drop

        number = self.first_line - 1
        try:
            with _open_bytes(self.path) as f:
                for raw in lines(range_lines(f, self)):
                    number += 1
                    yield RawRecord(f"{self.name}:{number}", self.task, self.kind, line_payload(raw))
        except Exception as exc:
            detail = f"{type(exc).__name__}: {exc}"[:300]
            yield RawRecord(f"{self.name}:{number + 1}", self.task, self.kind, Drop("unreadable_file", detail))


def _open_bytes(path: str):
    """A binary file object: opened directly when local (a pool worker imports no Beam),
    through Beam's FileSystems when remote."""
    if "://" not in path:
        return open(path, "rb")
    from apache_beam.io.filesystems import FileSystems

    return FileSystems.open(path, compression_type="uncompressed")
