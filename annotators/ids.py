"""Stable ids and per-record randomness.

Every id and every sampled choice derives from a SHA-256 of its parts (and the job seed),
never from Python's `hash()` (salted per process), global `random`, or arrival order, so
outputs are identical on any runner and worker count.
"""
from __future__ import annotations

import hashlib
import random

_SEP = "\x1f"


def stable_hash(*parts: object) -> str:
    """Hex SHA-256 of the parts, joined with a unit separator (str() of each part)."""
    joined = _SEP.join(str(p) for p in parts)
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()


def stable_int(*parts: object) -> int:
    """A 64-bit integer from `stable_hash`: for bucketing and shard assignment."""
    return int(stable_hash(*parts)[:16], 16)


def stable_id(prefix: str, *parts: object, length: int = 16) -> str:
    """A short readable id such as `story-1a2b...` from the record's content parts."""
    return f"{prefix}-{stable_hash(prefix, *parts)[:length]}"


def rng_for(seed: int, *parts: object) -> random.Random:
    """A private `random.Random` seeded by (job seed, record identity)."""
    return random.Random(stable_int("rng", seed, *parts))


def unit_interval(seed: int, *parts: object) -> float:
    """A deterministic pseudo-random number in [0, 1) for (seed, parts)."""
    return stable_int("unit", seed, *parts) / float(1 << 64)
