"""The writers' JSON text: `json.dumps(obj, ensure_ascii=False)` with the C encoder made once.

Why: every table row's shard bucket and every exported JSON line is encoded; building json's
encoder per call cost more than the encoding itself on short rows.
"""

from __future__ import annotations

import json
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


def jsonl_line(record: dict) -> str:
    return JSON(record) + "\n"


def json_text_of(record) -> str:
    """`JSON(record)` as a module function (picklable by reference, unlike the encoder)."""
    return JSON(record)
