"""Decode Project Gutenberg files and strip their headers and footers, of every era.

PG-19 (ChapterBreak paper section 2) is PG text with the licence boilerplate removed. Files
in the wild come as UTF-8, cp1252 or Latin-1 (often mixed line by line), with CRLF or LF,
and with one of three boilerplate styles:
- modern (2000s on): "*** START OF THE/THIS PROJECT GUTENBERG EBOOK ... ***" and "*** END OF ...";
- 1990s: an intro, then "*START**THE SMALL PRINT!..." ending "*END*THE SMALL PRINT!...*END*",
  and a closing line "End of (The) Project Gutenberg Etext of ...";
- none (already stripped, e.g. PG-19 itself).
Known-bad inputs: empty files, binary files (NUL or many control bytes), a lone Ctrl-Z.
"""

from __future__ import annotations

import re

from annotators.core.outcome import Drop
from annotators.core.sniff import not_text_reason, utf16_evidence

_START_MODERN = re.compile(r"^\W*\*{2,}\s*START OF (?:THE |THIS )?PROJECT GUTENBERG", re.I)
_END_MODERN = re.compile(r"^\W*\*{2,}\s*END OF (?:THE |THIS )?PROJECT GUTENBERG", re.I)
_END_SMALL_PRINT = re.compile(r"^\W*\*?END\*?\s*THE SMALL PRINT", re.I)
_START_SMALL_PRINT = re.compile(r"^\W*\*+\s*START\**\s*THE SMALL PRINT", re.I)
_END_LINE = re.compile(
    r"^\W*(?:the\s+)?end of (?:the )?project gutenberg(?:'s)?\s+(?:e-?text|e-?book|edition|etext)?", re.I
)
_PRODUCED_BY = re.compile(r"^\s*(?:produced|prepared|transcribed|scanned|e-?text prepared)\b.*\bby\b", re.I)
_CONTROL = set(range(0, 32)) - {9, 10, 12, 13, 26}
_CP1252_HOLES = {0x81, 0x8D, 0x8F, 0x90, 0x9D}


def decode_text(raw: bytes, *, max_control_ratio: float = 0.001) -> tuple[str, str] | Drop:
    """(text with "\\n" newlines, encoding label) or Drop(empty_file | binary_file).

    Whole-file UTF-8 first; otherwise line by line: UTF-8 where it decodes, else cp1252
    (Latin-1 for the five bytes cp1252 leaves undefined). Only "\\n", "\\r\\n" and "\\r"
    end lines: a Latin-1 0x85 (NEL) must not split a line. Not built on
    `annotators.text.charset.decode_bytes`: its fallback decodes the whole file as GB18030 or
    Big5, while PG files mix UTF-8 and cp1252 line by line (see `_decode_lines`).
    """
    raw = raw.removeprefix(b"\xef\xbb\xbf")
    refused = refuse_non_text(raw, max_control_ratio=max_control_ratio)
    if refused is not None:
        return refused
    try:
        text, label = raw.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        text, label = _decode_lines(raw)
    return unify_newlines(text), label


def refuse_non_text(raw: bytes, *, max_control_ratio: float = 0.001) -> Drop | None:
    """Drop(empty_file) for blank bytes, Drop(binary_file) for NUL or many control bytes, else None."""
    if not raw.strip(b" \t\r\n\x1a\x00"):
        return Drop("empty_file", f"{len(raw)} bytes")
    sample = raw[:65536]
    if utf16_evidence(sample):
        return not_text_reason(sample, "the file")
    controls = sum(1 for b in sample if b in _CONTROL)
    if b"\x00" in sample or controls > max_control_ratio * len(sample):
        return Drop("binary_file", f"{controls} control bytes in the first {len(sample)}")
    return None


def unify_newlines(text: str) -> str:
    """ "\r\n" and "\r" as "\n", and DOS end-of-file marks (Ctrl-Z) removed."""
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\x1a", "")


def _decode_lines(raw: bytes) -> tuple[str, str]:
    labels, out = set(), []
    for line in raw.split(b"\n"):
        try:
            out.append(line.decode("utf-8"))
            if any(b > 127 for b in line):
                labels.add("utf-8")
        except UnicodeDecodeError:
            if any(b in _CP1252_HOLES for b in line):
                out.append(line.decode("latin-1"))
                labels.add("latin-1")
            else:
                out.append(line.decode("cp1252"))
                labels.add("cp1252")
    label = labels.pop() if len(labels) == 1 else ("mixed" if labels else "ascii")
    return "\n".join(out), label


def strip_boilerplate(text: str) -> tuple[str, str]:
    """(body, header style) with the PG header and footer of any era removed.

    The style is "modern", "small_print" or "none". The body starts after the last header
    marker found in the first 40% of the file and ends before the first footer marker.
    """
    lines = text.split("\n")
    limit = max(1, int(len(lines) * 0.4))
    start, style = 0, "none"
    for i, line in enumerate(lines[:limit]):
        if _START_MODERN.match(line):
            start, style = i + 1, "modern"
        elif _END_SMALL_PRINT.match(line) and style != "modern":
            start, style = i + 1, "small_print"
    end = len(lines)
    for i in range(start, len(lines)):
        line = lines[i]
        if _END_MODERN.match(line) or _START_SMALL_PRINT.match(line) or _END_LINE.match(line):
            end = i
            break
    body = lines[start:end]
    body = _drop_credit_lines(body)
    return "\n".join(body).strip("\n"), style


def _drop_credit_lines(lines: list[str]) -> list[str]:
    """Remove a leading "Produced by ..." credit paragraph (PG transcriber credits)."""
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i < len(lines) and _PRODUCED_BY.match(lines[i]):
        j = i
        while j < len(lines) and lines[j].strip():
            j += 1
        return lines[j:]
    return lines


def clean_book(raw: bytes) -> tuple[str, dict] | Drop:
    """Decode and strip one PG file: (body, info) or Drop(empty_file | binary_file | no_text)."""
    decoded = decode_text(raw)
    if isinstance(decoded, Drop):
        return decoded
    text, encoding = decoded
    body, style = strip_boilerplate(text)
    if not body.strip():
        return Drop("no_text", f"nothing left after stripping {style} boilerplate")
    return body, {"encoding": encoding, "boilerplate": style}
