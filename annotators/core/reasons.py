"""The one catalogue of reject reasons: one code per failure, across all jobs.

Every `Drop(reason)` a step returns, and every reason a job writes to `rejects/`, is a code
listed here: the shared codes below (reading, decoding, parsing and deduplicating input,
which every job does the same way) or a benchmark's own codes in
`annotators/<benchmark>/reasons.py` (`REASONS`). A code means one thing everywhere;
`catalogue()` refuses a code defined twice. Each job's card lists the reasons it can give
(`reasons_markdown`).
"""

from __future__ import annotations

import importlib

BENCHMARKS = ("stories", "lot", "chapterbreak", "glge", "storium", "audits", "evaluate")

SHARED = {
    # reading files and lines
    "unreadable_file": "the file could not be opened or its container (parquet, gzip, zip) could not be read",
    "binary_file": "the input is binary data (NUL or control bytes), not text",
    "undecodable": "no supported encoding (UTF-8, GB18030, Big5, cp1252) decodes the bytes",
    "not_utf8": "input that must be UTF-8 (a layout copied byte for byte, an audit's text) is not valid UTF-8",
    "empty_file": "the file holds no records",
    "blank_line": "an empty line in a JSON-lines file",
    "malformed_json": "the line or file is not valid JSON",
    "not_an_object": "the JSON value is not an object",
    "missing_field": "a required field is absent or empty",
    "bad_field_type": "a field has the wrong type",
    "unknown_split": "a row's split is not one of train, val, test",
    # cleaning Chinese stories (the stories and LOT jobs apply the same checks)
    "empty_after_cleaning": "nothing of the text is left after cleaning (links, e-mails, boilerplate, spaces)",
    "not_chinese": "too few of the text's non-space characters are Han characters (below the job's threshold)",
    # deduplication (the earliest record in input order is kept)
    "duplicate_id": "another record with the same id came earlier in input order",
    "exact_duplicate": "another record with the same normalised text came earlier in input order",
    "near_duplicate": "a near-duplicate (MinHash LSH cluster) of a record kept earlier",
    "over_size_limit": "the record is over the job's documented per-record size or work limit "
    "(the detail gives its size and the limit)",
    "encoding": "the bytes are text in a legacy charset the input must not use (the detail names the detected charset)",
    "utf16": "the file is UTF-16 or UTF-32 text (a byte-order mark or every other byte NUL); save it as UTF-8",
    "not_a_file": "the input path is a folder (or another non-file), not a file",
    "truncated_file": "a compressed file or archive ends early or is corrupt; the records before "
    "the break are kept (the detail says how far reading got)",
    "line_too_long": "a line of over 64 MiB (a JSON array written on one line, a dump with no newlines) is no "
    "record; it was read past, keeping its size and first bytes (the detail)",
    # the engine
    "internal_error": "the step raised an exception on this record (a bug to report; the job went on)",
}


def catalogue() -> dict[str, str]:
    """Every reason code -> its meaning: SHARED plus each benchmark's REASONS."""
    merged = dict(SHARED)
    for name in BENCHMARKS:
        module = importlib.import_module(f"annotators.{name}.reasons")
        for code, meaning in module.REASONS.items():
            if code in merged and merged[code] != meaning:
                raise ValueError(f"reason {code!r} of annotators.{name} is already defined: {merged[code]!r}")
            merged[code] = meaning
    return merged


def meaning(code: str) -> str:
    """The catalogue's meaning of a code; a `http_<status>` code stands for any HTTP status."""
    known = catalogue()
    if code in known:
        return known[code]
    if code.startswith("http_") and code[5:].isdigit():
        return known["http_status"]
    raise KeyError(f"reason {code!r} is not in the catalogue (annotators.core.reasons)")


def reasons_markdown(codes) -> str:
    """The card section listing the reasons a job can give, with their meanings."""
    lines = ["## Reject reasons this job can give", "", "| reason | meaning |", "|---|---|"]
    lines += [f"| `{code}` | {meaning(code)} |" for code in sorted(set(codes))]
    return "\n".join(lines) + "\n"
