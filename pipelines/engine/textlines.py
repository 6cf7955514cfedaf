"""The numbered lines of a text file, with UTF-16 files caught before they are cut (issue 28).

Cut at b"\\n", UTF-16 text falls apart: the byte 0x0A sits inside many CJK characters, so
its "lines" are fragments that look like binary data, or even decode as GB18030 garbage.
`numbered_lines` looks at a file's first bytes first: a UTF-16/32 file (a byte-order mark,
or NULs at every other byte) is one record, its head, which the job's parser rejects as
`utf16` (annotators.core.sniff), instead of hundreds of misleading rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from annotators.core.sniff import utf16_evidence

HEAD_BYTES = 4096
CHUNK = 1 << 20  # bytes read at a time


class _Prepended:
    """A file object whose first bytes were already read: `read(n)` gives them back first."""

    def __init__(self, head: bytes, f):
        self._head, self._f = head, f

    def read(self, n: int = -1) -> bytes:
        if self._head:
            data, self._head = self._head, b""
            return data
        return self._f.read(n)


def is_utf16_head(head: bytes) -> bool:
    """Whether a file's first bytes show UTF-16/32 text (a byte-order mark or NULs at every
    other byte)."""
    return len(head) >= 4 and bool(utf16_evidence(head))


def numbered_lines(name: str, f, lines):
    """(f"{name}:{n}", line bytes without "\\r") for each line of `f` (`lines(f)` cuts them),
    or one (f"{name}:1", head) for a UTF-16/32 file."""
    head = f.read(HEAD_BYTES)
    if is_utf16_head(head):
        yield f"{name}:1", head
        return
    for number, raw in enumerate(lines(_Prepended(head, f)), start=1):
        yield f"{name}:{number}", raw.rstrip(b"\r")


def iter_lines(f, chunk: int = CHUNK) -> Iterator[bytes]:
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
                    yield RawRecord(f"{self.name}:{number}", self.task, self.kind, raw.rstrip(b"\r"))
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
