"""One JSON-lines record: a JSON object, or the reason it is not one (from the catalogue)."""

from __future__ import annotations

import json

from annotators.core.outcome import Drop


def json_object(text: str) -> dict | Drop:
    """The JSON object `text` holds; `malformed_json` or `not_an_object` otherwise."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:  # RecursionError: JSON nested too deeply
        return Drop("malformed_json", str(exc)[:200])
    if not isinstance(value, dict):
        return Drop("not_an_object", f"a JSON {type(value).__name__}, not an object")
    return value
