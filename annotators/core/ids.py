"""Stable ids and per-record randomness.

Every id and every sampled choice derives from a SHA-256 of its parts (and the job seed),
never from Python's `hash()` (salted per process), global `random`, or arrival order, so
outputs are identical on any runner and worker count.
"""

from __future__ import annotations

import random

from schemas.ids import stable_digest, stable_hash, stable_id

__all__ = ["stable_hash", "stable_id", "stable_int", "rng_for", "unit_interval"]


def stable_int(*parts: object) -> int:
    """A 64-bit integer from `stable_hash` (its first 16 hex digits): for bucketing and shard
    assignment; read from the digest's first 8 bytes, the same number."""
    return int.from_bytes(stable_digest(*parts)[:8], "big")


def rng_for(seed: int, *parts: object) -> random.Random:
    """A private `random.Random` seeded by (job seed, record identity)."""
    return random.Random(stable_int("rng", seed, *parts))


def unit_interval(seed: int, *parts: object) -> float:
    """A deterministic pseudo-random number in [0, 1) for (seed, parts)."""
    return stable_int("unit", seed, *parts) / float(1 << 64)
