"""The stable id scheme every table's `*_id` follows (part of the output contract).

An id is a prefix plus the start of a SHA-256 of its parts: never Python's `hash()` (salted
per process) or arrival order, so ids are identical on any runner and worker count.
"""

from __future__ import annotations

import hashlib

_SEP = "\x1f"


def stable_digest(*parts: object) -> bytes:
    """SHA-256 of the parts, joined with a unit separator (str() of each part): the bytes
    `stable_hash` writes in hex."""
    return hashlib.sha256(_SEP.join(map(str, parts)).encode("utf-8")).digest()


def stable_hash(*parts: object) -> str:
    """Hex SHA-256 of the parts, joined with a unit separator (str() of each part)."""
    return stable_digest(*parts).hex()


def stable_id(prefix: str, *parts: object, length: int = 16) -> str:
    """A short readable id such as `story-1a2b...` from the record's content parts."""
    return f"{prefix}-{stable_hash(prefix, *parts)[:length]}"
