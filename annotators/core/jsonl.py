"""One JSON-lines record: a JSON object, or the reason it is not one (from the catalogue).

A pretty-printed `.json` file (one array or object over many lines) given where JSON lines
are expected fails line by line; `malformed_detail` adds `PRETTY_HINT` to the `malformed_json`
detail of each line that looks like a piece of such a document (`looks_pretty_printed`), and
the job's summary names the file once (pipelines.engine.report).
"""

from __future__ import annotations

import json
import re
from typing import Any

from annotators.core.outcome import Drop

# JSON's escapes of UTF-16 surrogates (\ud800-\udfff): a pair stands for one character, a
# lone one for none (json.loads gives a lone surrogate, which no UTF-8 writer can encode)
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_PAIR = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}")


def loads(text: str) -> Any:
    """`json.loads(text)`, refusing a lone surrogate in a string or key (`\\udc00` without its
    pair): it is not Unicode text, and a job that kept it failed where it wrote it. Raises
    json.JSONDecodeError (a ValueError) at the escape, as for any malformed JSON."""
    value = json.loads(text)
    if _SURROGATE.search(text) is not None and _has_lone_surrogate(value):
        unpaired = _SURROGATE.search(_PAIR.sub(lambda m: " " * len(m.group()), text))
        at = unpaired.start() if unpaired else 0
        escape = f" {unpaired.group()}" if unpaired else ""
        raise json.JSONDecodeError(f"lone surrogate{escape} (a string that is not Unicode text)", text, at)
    return value


def _has_lone_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


PRETTY_MARK = "one JSON document spread over many lines"  # in every hinted detail (the report finds them by it)
PRETTY_HINT = (
    f"this line looks like part of {PRETTY_MARK} (pretty-printed, or an array with an element a line); "
    "the job reads JSON lines (one object per line): convert with `jq -c '.[]' file.json > file.jsonl` "
    "(`jq -c . file.json > file.jsonl` for one object)"
)
# a bracket line ("[", "{", "},", "]"), an indented line, or a line that starts with a key: no
# writer of JSON lines makes one, and every line of json.dumps(..., indent=N) or `jq .` is one
_FRAGMENT = re.compile(r'[\[\]{}]+,?|[ \t].*|"(?:[^"\\]|\\.)*"\s*:.*', re.S)


def looks_pretty_printed(line: str | bytes) -> bool:
    """Whether a line that does not parse looks like a piece of one JSON document printed over
    many lines: a bracket line, an indented line, a `"key": ...` line, or a JSON value with a
    trailing comma (`{...},`: an array written an element a line)."""
    if isinstance(line, (bytes, bytearray)):
        line = bytes(line).decode("utf-8", "replace")
    text = line.lstrip("\ufeff").rstrip()
    if not text:
        return False
    if _FRAGMENT.fullmatch(text):
        return True
    if not text.endswith(","):
        return False
    try:
        json.loads(text[:-1])
    except (ValueError, RecursionError):
        return False
    return True


def pretty_file(input_id: str) -> str:
    """The file of a line's input id (`name:line`)."""
    name, _, number = input_id.rpartition(":")
    return name if name and number.isdigit() else input_id


def pretty_warning(file: str, lines: int) -> str:
    """The job summary's line (and stats.json/card warning) for a file whose lines look like
    one pretty-printed JSON document."""
    stem = file.removesuffix(".json") if file.endswith(".json") else file
    return (
        f"{file}: {lines:,} line(s) rejected as malformed_json look like {PRETTY_MARK} (pretty-printed); "
        f"the job reads JSON lines (one object per line): convert it with `jq -c '.[]' {file} > {stem}.jsonl` "
        f"(`jq -c . {file} > {stem}.jsonl` for one object)"
    )


def malformed_detail(message: str, line: str | bytes) -> str:
    """A `malformed_json` detail: `message`, and PRETTY_HINT when `line` (as read, not
    stripped) looks like a piece of a pretty-printed document."""
    return f"{message}; {PRETTY_HINT}" if looks_pretty_printed(line) else message


def json_object(text: str) -> dict | Drop:
    """The JSON object `text` holds; `malformed_json` or `not_an_object` otherwise."""
    try:
        value = loads(text)
    except (ValueError, RecursionError) as exc:  # RecursionError: JSON nested too deeply
        return Drop("malformed_json", malformed_detail(str(exc)[:200], text))
    if not isinstance(value, dict):
        return Drop("not_an_object", f"a JSON {type(value).__name__}, not an object")
    return value
