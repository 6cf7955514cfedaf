"""Longest common subsequence length in bounded time (issue 28).

`lcs_length(a, b)` is the exact LCS length of two token sequences, computed by rapidfuzz's
bit-parallel algorithm (O(len(a) * len(b) / 64) machine words, in C) on integer codes: each
distinct token gets the number of its first appearance, so equality is exact (no hash of a
string decides it) and the result is the same number the textbook dynamic programme gives.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from rapidfuzz.distance import LCSseq


def token_codes(a: Sequence[Hashable], b: Sequence[Hashable]) -> tuple[list[int], list[int]]:
    """The two sequences as small integers, equal exactly where the tokens are equal."""
    codes: dict = {}
    return ([codes.setdefault(t, len(codes)) for t in a], [codes.setdefault(t, len(codes)) for t in b])


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Length of the longest common subsequence of `a` and `b` (0 when either is empty)."""
    if not a or not b:
        return 0
    x, y = token_codes(a, b)
    return int(LCSseq.similarity(x, y))
