"""Required fields of LOT's JSON inputs (stories, ClozeT annotations, SenPos reviews).

A field that is absent, null or blank is `missing_field`; one of the wrong JSON type is
`bad_field_type` (the shared codes of annotators.core.reasons), so every input says the
same thing about the same failure.
"""
from __future__ import annotations

from typing import Any

from annotators.core.outcome import Drop

_JSON_TYPE = {str: "a string", int: "an integer", bool: "true or false", dict: "an object", list: "a list"}


def field_problem(obj: dict[str, Any], name: str, types: tuple[type, ...], *,
                  allow_blank: bool = False, allow_bool: bool = True) -> Drop | None:
    """Why `obj[name]` cannot be used (absent or null, blank text, wrong type), or None."""
    value = obj.get(name)
    if value is None or (isinstance(value, str) and str in types and not allow_blank and not value.strip()):
        return Drop("missing_field", f"{name} is missing or empty")
    if not isinstance(value, types) or (not allow_bool and isinstance(value, bool)):
        wanted = " or ".join(_JSON_TYPE.get(t, t.__name__) for t in types)
        return Drop("bad_field_type", f"{name} must be {wanted}, not a JSON {type(value).__name__}")
    return None
