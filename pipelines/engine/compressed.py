"""Compressed inputs read to their real end, or an error that says how far reading got.

Beam's decompressing reader stops quietly where a truncated `.gz` ends: a reference cut in
half lost its second half without a word (issue 28). `open_checked` reads `.gz` (every
member of a multi-member file) and `.bz2` with the standard decompressors and raises
`TruncatedFile` when the compressed stream ends before its end-of-stream marker, or
`CorruptFile` when the bytes do not decompress; both carry the compressed and
decompressed bytes read so far. Other files open as they are.
"""

from __future__ import annotations

import bz2
import zlib

from apache_beam.io.filesystems import FileSystems

CHUNK = 1 << 20


class ReadBreak(OSError):
    """A compressed file that breaks mid-way: `read_in` compressed bytes were read and gave
    `read_out` bytes of content before the break."""

    reason = "truncated_file"

    def __init__(self, message: str, read_in: int, read_out: int):
        super().__init__(message)
        self.read_in, self.read_out = read_in, read_out


class TruncatedFile(ReadBreak):
    pass


class CorruptFile(ReadBreak):
    pass


def _decompressor(path: str):
    if path.endswith(".gz"):
        return lambda: zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    if path.endswith(".bz2"):
        return bz2.BZ2Decompressor
    return None


class _Checked:
    """A binary file object with `read(n)` over the decompressed bytes of a .gz/.bz2 file."""

    def __init__(self, raw, path: str, make):
        self._raw, self._path, self._make = raw, path, make
        self._d = make()
        self._buffer = b""
        self._in = self._out = 0
        self._done = False
        self._pending: ReadBreak | None = None

    def _more(self) -> None:
        data = self._raw.read(CHUNK)
        if not data:
            self._finish()
            return
        self._in += len(data)
        out = []
        while data:
            try:
                out.append(self._d.decompress(data))
            except (zlib.error, OSError, EOFError, ValueError) as exc:
                raise CorruptFile(
                    f"{self._path}: corrupt compressed data after {self._in} bytes "
                    f"({self._out} bytes of content read): {exc}",
                    self._in,
                    self._out,
                ) from None
            data = b""
            if self._d.eof:  # a member ended: another may follow (concatenated .gz/.bz2)
                data = self._d.unused_data
                if data.strip(b"\x00"):
                    self._d = self._make()
                else:
                    data = b""
        chunk = b"".join(out)
        self._out += len(chunk)
        self._buffer += chunk

    def _finish(self) -> None:
        self._done = True
        if not self._d.eof:
            raise TruncatedFile(
                f"{self._path}: the compressed file ends early, after {self._in} bytes "
                f"({self._out} bytes of content read)",
                self._in,
                self._out,
            )

    def read(self, n: int = -1) -> bytes:
        """Up to `n` bytes of content; the bytes before a break come out first, the break is
        raised by the read after them."""
        if self._pending is not None and not self._buffer:
            raise self._pending
        while self._pending is None and not self._done and (n < 0 or len(self._buffer) < n):
            try:
                self._more()
            except ReadBreak as exc:
                self._pending = exc
                if not self._buffer:
                    raise
        if n < 0:
            data, self._buffer = self._buffer, b""
        else:
            data, self._buffer = self._buffer[:n], self._buffer[n:]
        return data

    def close(self) -> None:
        self._raw.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def open_checked(path: str):
    """`path` opened for reading its content: decompressed and checked for .gz/.bz2; other
    compressed kinds Beam knows (.zst, .deflate, .lzma) by Beam, plain files as they are."""
    make = _decompressor(path)
    if make is None:
        return FileSystems.open(path, compression_type="auto")
    return _Checked(FileSystems.open(path, compression_type="uncompressed"), path, make)
