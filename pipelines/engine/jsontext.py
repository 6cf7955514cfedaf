"""The writers' JSON text: `json.dumps(obj, ensure_ascii=False)` with the C encoder made once.

Why: every table row's shard bucket and every exported JSON line is encoded; building json's
encoder per call cost more than the encoding itself on short rows.

A JSON line (`jsonl_line`, `json_text_of`) also escapes the three characters that json
leaves as they are but `str.splitlines()` ends a line at (NEL, U+2028, U+2029; json escapes
every control character below U+0020 already): `\\u2028` in a string is the same string to
any JSON reader, and a reader that splits the file with splitlines() sees one record a line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable


def json_text(default: Callable | None):
    """`json.dumps(obj, ensure_ascii=False[, default=default])` for the acyclic rows and keys
    the writers encode, with the C encoder made once instead of per call (json's own
    `_one_shot` path; no circular-reference bookkeeping). Falls back to json.dumps when the
    C encoder is not there."""
    c_make = getattr(json.encoder, "c_make_encoder", None)
    if c_make is None:
        return lambda obj: json.dumps(obj, ensure_ascii=False, default=default)
    encode = c_make(
        None,
        default or json.JSONEncoder().default,
        json.encoder.encode_basestring,
        None,
        ": ",
        ", ",
        False,
        False,
        True,
    )
    return lambda obj: "".join(encode(obj, 0))


JSON = json_text(None)
JSON_KEY = json_text(str)


_LINE_BREAKS = re.compile("[\x85\u2028\u2029]")  # what splitlines() splits at and json leaves unescaped
_ESCAPED = {0x85: "\\u0085", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def one_line_json(text: str) -> str:
    """JSON text with NEL, U+2028 and U+2029 escaped (they can only be inside its strings)."""
    return text.translate(_ESCAPED) if _LINE_BREAKS.search(text) else text


def jsonl_line(record: dict) -> str:
    return one_line_json(JSON(record)) + "\n"


def json_text_of(record) -> str:
    """`JSON(record)` as one line (`one_line_json`), as a module function (picklable by
    reference, unlike the encoder)."""
    return one_line_json(JSON(record))
