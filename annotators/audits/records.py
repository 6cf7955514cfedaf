"""Reading audit inputs: which files are text, which records are usable, and why not.

Pure checks shared by the overlap and bias jobs. Known-bad inputs they turn into reasons
instead of crashes (codes from the catalogue, annotators.core.reasons): binary files
(`binary_file`), UTF-16 files (`utf16`), files in a legacy charset (`encoding`, with the
charset detected), a line that is not UTF-8 (`not_utf8`, that line only: audits read UTF-8
text, as the LOT tables and common corpora are), a file that cannot be read
(`unreadable_file`) or breaks mid-way (`truncated_file`), broken JSON
lines (`malformed_json`, `not_an_object`), examples missing a text field or an id
(`missing_field`), a field of the wrong type (`bad_field_type`), an unknown split
(`unknown_split`), a reference record with no text field (`no_text_fields`), and empty splits
(`empty_split`).
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence
from typing import Any, NamedTuple

from annotators.core.jsonl import json_object
from annotators.core.outcome import Drop
from annotators.core.sniff import legacy_file_reason, not_text_reason
from schemas.lot import SPLITS

JSONL_EXTS = (".jsonl", ".json", ".ndjson")
PARQUET_EXTS = (".parquet",)
COMPRESSED_EXTS = (".gz", ".bz2", ".zst", ".deflate")
# Fields a JSON-lines or parquet reference contributes when none are named (`--reference-fields`).
REFERENCE_FIELDS = ("title", "text", "story", "content", "outline", "plot", "plot0", "plot1", "sentence")
SNIFF_BYTES = 1 << 16


class AuditSource(NamedTuple):
    """One input file of an audit: its path, the task it belongs to, its stable name."""

    path: str
    task: str
    name: str


class RawRecord(NamedTuple):
    """One record as read: input id "name:line", task, file kind, and raw line bytes, a
    parquet row dict, or a Drop for a file that broke mid-way."""

    input_id: str
    task: str
    kind: str
    payload: Any


def file_kind(path: str) -> str:
    """ "parquet", "jsonl" or "text" from the name (a .gz/.bz2 suffix is looked through)."""
    name = path.lower()
    for ext in COMPRESSED_EXTS:
        if name.endswith(ext):
            name = name[: -len(ext)]
    if name.endswith(PARQUET_EXTS):
        return "parquet"
    if name.endswith(JSONL_EXTS):
        return "jsonl"
    return "text"


def sniff_text(head: bytes) -> Drop | None:
    """None when the first bytes of a file can be read line by line as UTF-8 text, else a
    Drop naming why not: UTF-16 (`utf16`), NUL bytes (`binary_file`), a legacy charset
    throughout (`encoding`). A few lines that are not UTF-8 are rejected one by one
    (`decode_line`), never the whole file."""
    whole = legacy_file_reason(head)
    if whole is not None:
        return whole
    if b"\x00" in head:
        return Drop("binary_file", "NUL bytes in the first 64 KiB (a binary file?)")
    return None


def decode_line(raw: bytes) -> str | Drop:
    try:
        return raw.decode("utf-8-sig" if raw.startswith(codecs.BOM_UTF8) else "utf-8")
    except UnicodeDecodeError:
        return not_text_reason(raw)


def parse_record(kind: str, raw: bytes) -> dict | Drop:
    """A text line becomes {"text": line}; a JSON line must be a JSON object."""
    text = decode_line(raw)
    if isinstance(text, Drop) or kind == "text":
        return text if isinstance(text, Drop) else {"text": text}
    return json_object(text)


def reference_fields_of(record: dict, fields: Sequence[str]) -> list[str] | Drop:
    """The names of `fields` that `record` holds as text (str or list of str)."""
    present = [f for f in fields if isinstance(record.get(f), (str, list, tuple))]
    if not present:
        return Drop("no_text_fields", f"none of {list(fields)} in keys {sorted(record)[:10]}")
    return present


def check_example(
    record: dict,
    fields: Sequence[str],
    *,
    list_fields: Sequence[str] = (),
    default_split: str | None = None,
    fallback_id: str | None = None,
) -> tuple[str, str] | Drop:
    """(example_id, split) of a test example whose text fields are all present, else a Drop.

    Without an `example_id` (or `id`) field, `fallback_id` (the input id "file:line") is used
    when given: a user's JSON-lines test file needs no ids.
    """
    example_id = record.get("example_id", record.get("id", fallback_id))
    if example_id is None or str(example_id) == "":
        return Drop("missing_field", "example_id (or id)")
    split = record.get("split") or default_split
    if split not in SPLITS:
        return Drop("unknown_split", f"split {split!r} is not one of {SPLITS}")
    for field in fields:
        value = record.get(field)
        if value is None:  # the keys it has: a story table's "story" where "text" was looked for
            return Drop("missing_field", f"no {field!r} field; its keys: {sorted(record)[:10]}")
        ok = (
            isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
            if field in list_fields
            else isinstance(value, str)
        )
        if not ok:
            return Drop("bad_field_type", f"{field}: {type(value).__name__}")
    return str(example_id), str(split)


def check_split(item: tuple[str, int]) -> list[str] | Drop:
    """A (task/split label, row count) pair: empty splits are reported, never silently 0%."""
    label, count = item
    return Drop("empty_split", f"{label} has no rows") if count == 0 else [label]
