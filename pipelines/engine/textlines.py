"""The numbered lines of a text file, with UTF-16 files caught before they are cut (issue 28).

Cut at b"\\n", UTF-16 text falls apart: the byte 0x0A sits inside many CJK characters, so
its "lines" are fragments that look like binary data, or even decode as GB18030 garbage.
`numbered_lines` looks at a file's first bytes first: a UTF-16/32 file (a byte-order mark,
or NULs at every other byte) is one record, its head, which the job's parser rejects as
`utf16` (annotators.core.sniff), instead of hundreds of misleading rows.
"""

from __future__ import annotations

from annotators.core.sniff import utf16_evidence

HEAD_BYTES = 4096


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
