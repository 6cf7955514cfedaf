"""One JSON-lines record: a JSON object, or the reason it is not one (from the catalogue)."""

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


def json_object(text: str) -> dict | Drop:
    """The JSON object `text` holds; `malformed_json` or `not_an_object` otherwise."""
    try:
        value = loads(text)
    except (ValueError, RecursionError) as exc:  # RecursionError: JSON nested too deeply
        return Drop("malformed_json", str(exc)[:200])
    if not isinstance(value, dict):
        return Drop("not_an_object", f"a JSON {type(value).__name__}, not an object")
    return value
