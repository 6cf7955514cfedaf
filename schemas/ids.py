"""The stable id scheme every table's `*_id` follows (part of the output contract).

An id is a prefix plus the start of a SHA-256 of its parts: never Python's `hash()` (salted
per process) or arrival order, so ids are identical on any runner and worker count.
"""

from __future__ import annotations

import hashlib

_SEP = "\x1f"


def _sha256(parts: tuple) -> hashlib._Hash:
    return hashlib.sha256(_SEP.join(map(str, parts)).encode("utf-8"))


def stable_hash(*parts: object) -> str:
    """Hex SHA-256 of the parts, joined with a unit separator (str() of each part)."""
    return _sha256(parts).hexdigest()


def stable_digest(*parts: object) -> bytes:
    """`stable_hash` as the digest's bytes (its hex digits are these bytes in order)."""
    return _sha256(parts).digest()


def stable_id(prefix: str, *parts: object, length: int = 16) -> str:
    """A short readable id such as `story-1a2b...` from the record's content parts."""
    return f"{prefix}-{stable_hash(prefix, *parts)[:length]}"
