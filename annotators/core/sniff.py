"""Naming the real cause of bytes that are not UTF-8 text (issue 28).

UTF-16 text is full of NUL bytes, and was called `binary_file`; a GBK or Big5 file was
called `malformed_json`. `not_text_reason` tells them apart for a line or a file's first
bytes: `utf16` (a UTF-16/32 byte-order mark, or NULs at every other byte), `binary_file`
(other NUL bytes), `encoding` with the charset detection finds (GB18030 or Big5), else
`not_utf8`. `legacy_file_reason` decides whether a file's head is in a legacy charset as a
whole (most of its non-ASCII lines fail UTF-8) rather than holding a few broken lines,
which are rejected line by line.
"""

from __future__ import annotations

import codecs

from annotators.core.outcome import Drop

_WIDE_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32LE"),
    (codecs.BOM_UTF32_BE, "UTF-32BE"),
    (codecs.BOM_UTF16_LE, "UTF-16LE"),
    (codecs.BOM_UTF16_BE, "UTF-16BE"),
)


def utf16_evidence(data: bytes) -> str | None:
    """What shows `data` is UTF-16/32 text: its byte-order mark, or NUL bytes at every other
    position (ASCII text in UTF-16 without a mark); None otherwise."""
    for bom, name in _WIDE_BOMS:
        if data.startswith(bom):
            return f"{name} byte-order mark"
    sample = data[:4096]
    nuls = sample.count(b"\x00")
    if sample and len(sample) < 4 and nuls == len(sample):
        return "a lone NUL byte: the rest of a UTF-16 line break"
    if len(sample) >= 4 and nuls >= 0.3 * len(sample):
        even = sample[0::2].count(b"\x00")
        if max(even, nuls - even) >= 0.9 * nuls:
            return f"{nuls} of {len(sample)} bytes are NUL, at every other byte"
    return None


def detected_charset(data: bytes) -> str | None:
    """The legacy charset (gb18030, big5hkscs) that decodes `data` best, else None."""
    from annotators.text.charset import detect

    decoded = detect(data)
    return decoded.encoding if decoded is not None and decoded.encoding != "utf-8" else None


def not_text_reason(data: bytes, what: str = "the line") -> Drop:
    """Why `data`, which is not UTF-8 text, cannot be read: utf16, binary_file, encoding or not_utf8."""
    wide = utf16_evidence(data)
    if wide:
        return Drop("utf16", f"{what} is UTF-16/32 text ({wide}); save it as UTF-8")
    if b"\x00" in data:
        return Drop("binary_file", "NUL bytes: binary data")
    charset = detected_charset(data)
    if charset:
        return Drop(
            "encoding", {"charset": charset, "message": f"{what} is {charset} text, not UTF-8; convert it to UTF-8"}
        )
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Drop("not_utf8", f"{what} is not UTF-8 (invalid byte at {exc.start})")
    return Drop("not_utf8", f"{what} is not UTF-8")


def legacy_file_reason(head: bytes) -> Drop | None:
    """For a file's first bytes: utf16, or encoding when most of its non-ASCII lines are not
    UTF-8 (the file is in a legacy charset), else None (read it line by line)."""
    if utf16_evidence(head):
        return not_text_reason(head, "the file")
    lines = head.split(b"\n")
    bad = non_ascii = 0
    for n, line in enumerate(lines, start=1):
        if line.isascii():
            continue
        non_ascii += 1
        try:  # the last line may be cut mid-character by the sniff window
            codecs.getincrementaldecoder("utf-8")().decode(line, final=n < len(lines))
        except UnicodeDecodeError:
            bad += 1
    if non_ascii and bad * 2 > non_ascii and b"\x00" not in head:
        return not_text_reason(b"\n".join(lines), "the file")
    return None
