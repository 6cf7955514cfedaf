"""Character shingles in numpy: exact shingle sets for Jaccard, and the one-permutation MinHash.

Both work on a text's code points without whitespace (`shingles`: the n-grams, or the whole
text when it has n characters or fewer), a few array operations per text. `oph_of_codes`
hashes every shingle once (a polynomial, `shingle_hashes`: one `np.correlate`) and mixes the
hashes (splitmix64) into a one-permutation signature, the bytes LSH band keys hash.
`ShingleSet` packs each distinct shingle's code points into exact keys and orders them by a
hash of the key, so two sets' shared count is exact whatever the hashes do.
(annotators.core.near_dup uses both.)
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

# constants as 0-d arrays: numpy combines them with an array faster than scalars
_MIX = tuple(np.array(c, dtype=np.uint64) for c in (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB))
_SHIFTS = tuple(np.array(s, dtype=np.uint64) for s in (30, 27, 31))
_PRIME = 1000003


def shingles(text: str, n: int) -> set[str]:
    """Character n-grams of the text without whitespace (the whole text if shorter)."""
    chars = "".join(text.split())
    if len(chars) <= n:
        return {chars} if chars else set()
    return {chars[i : i + n] for i in range(len(chars) - n + 1)}


def jaccard(a: set[str], b: set[str]) -> float:
    """|a & b| / |a | b| (1.0 for two empty sets); the union's size is counted, not built."""
    if not (a or b):
        return 1.0
    common = len(a & b) if len(a) <= len(b) else len(b & a)
    return common / (len(a) + len(b) - common)


def code_points(text: str) -> np.ndarray:
    """The code points of the text without whitespace (uint32; lone surrogates included)."""
    chars = "".join(text.split())
    return np.frombuffer(chars.encode("utf-32-le", "surrogatepass"), dtype="<u4")


@functools.lru_cache(maxsize=64)
def _weights(n: int) -> np.ndarray:
    return np.array([pow(_PRIME, n - 1 - j, 1 << 64) for j in range(n)], dtype=np.uint64)


def shingle_hashes(codes: np.ndarray, n: int) -> np.ndarray:
    """sum_j codes[i + j] * 1000003 ** (n - 1 - j) mod 2**64 of every window of n codes
    (uint64), or of the whole sequence when it is shorter (one value, 0 for no codes)."""
    codes = np.asarray(codes, dtype=np.uint64)
    if n < 1:
        raise ValueError(f"a shingle needs at least one character, not {n}")
    if len(codes) < n:
        if not len(codes):
            return np.zeros(1, dtype=np.uint64)
        n = len(codes)
    return np.correlate(codes, _weights(n), "valid")  # integer dot products: wrap mod 2**64


def _mix(h: np.ndarray, seed: int) -> np.ndarray:
    """A 64-bit finaliser (splitmix64) of `h` xor the seed, in a new array: every bit depends
    on every bit (unsigned array arithmetic wraps without a warning)."""
    h = h ^ np.array(seed & 0xFFFFFFFFFFFFFFFF, dtype=np.uint64)
    h += _MIX[0]
    h ^= h >> _SHIFTS[0]
    h *= _MIX[1]
    h ^= h >> _SHIFTS[1]
    h *= _MIX[2]
    h ^= h >> _SHIFTS[2]
    return h


@functools.lru_cache(maxsize=16)
def _bins(bins: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(shift, each bin's smallest hash, bin numbers, bin positions) for `bins` (a power of
    two) bins."""
    shift = np.array(64 - bins.bit_length() + 1, dtype=np.uint64)
    numbers = np.arange(bins, dtype=np.uint64)
    return shift, numbers << shift, numbers, np.arange(bins)


def oph_of_codes(codes: np.ndarray, n: int, bins: int, seed: int = 1) -> np.ndarray:
    """A one-permutation MinHash signature (`bins` uint64) of the shingles of n consecutive
    codes (characters, word ids; the whole sequence when shorter): each shingle's hash is
    mixed with the seed, its top bits pick one of `bins` (a power of two) bins and each bin
    keeps its smallest value; an empty bin borrows the next non-empty bin's value to its
    right (circularly) plus its distance times 0x9E3779B97F4A7C15, the rotation
    densification of Shrivastava & Li (2014). Two texts' bins agree with probability close
    to their shingle Jaccard, as `bins` permutations would, at the cost of one hash pass.
    (Array methods and operators, not np.* functions: a story's arrays are small, so each
    call's overhead is most of its cost.)"""
    if bins & (bins - 1):
        raise ValueError(f"oph needs a power-of-two number of bins, not {bins}")
    h = _mix(shingle_hashes(codes, n), seed)
    h.sort()  # duplicates do no harm: each bin takes its first (smallest)
    shift, starts, numbers, positions = _bins(bins)
    value = h.take(h.searchsorted(starts), mode="clip")
    full = (value >> shift) == numbers  # a bin past the last hash gets the last, of a lower bin
    if full.all():
        return value
    filled = full.nonzero()[0]
    donor = filled.take(filled.searchsorted(positions), mode="wrap")  # past the last: the first
    distance = ((donor - positions) & (bins - 1)).astype(np.uint64)  # 0 for a filled bin: itself
    return value[donor] + distance * _MIX[0]


def oph_signature(text: str, n: int, bins: int, seed: int = 1) -> np.ndarray:
    """`oph_of_codes` of the text's code points without whitespace (the shingles of `shingles`)."""
    return oph_of_codes(code_points(text), n, bins, seed)


def oph_bytes(text: str, n: int, bins: int, seed: int = 1) -> bytes:
    """`oph_signature` as little-endian bytes (what LSH band keys hash)."""
    return oph_signature(text, n, bins, seed).astype("<u8", copy=False).tobytes()


_PER_WORD = 3  # characters packed in one uint64 of a shingle's exact key: 21 bits each
_KEY_MIX = np.array(0x9E3779B97F4A7C15, dtype=np.uint64)


@functools.lru_cache(maxsize=64)
def _packing(width: int) -> np.ndarray:
    return np.array([1 << (21 * (width - 1 - j)) for j in range(width)], dtype=np.uint64)


class ShingleSet(NamedTuple):
    """`shingles(text, n)` as arrays, one row per distinct shingle: its exact key (each
    character's code point + 1 in 21 bits, `_PER_WORD` to a uint64 word, so equal keys are
    equal strings; a text shorter than n is its one shingle, 0-padded) and a 64-bit hash of
    the key that orders the rows."""

    hashes: np.ndarray  # uint64, sorted, distinct
    words: tuple[np.ndarray, ...]  # the exact keys, one uint64 array per word, row for row

    def strings(self) -> set[str]:
        """The shingles themselves (`shingles(text, n)`)."""
        chars = [
            (word >> np.uint64(21 * shift)) & np.uint64(0x1FFFFF)
            for word in self.words
            for shift in range(_PER_WORD - 1, -1, -1)
        ]
        rows = np.stack(chars, axis=1) if chars else np.zeros((0, 0), dtype=np.uint64)
        return {(row[row > 0] - 1).astype("<u4").tobytes().decode("utf-32-le", "surrogatepass") for row in rows}


def shingle_set(text: str, n: int) -> ShingleSet | set[str]:
    """`shingles(text, n)` for `shingle_jaccard`: a `ShingleSet`, or the set of strings in
    the (never yet seen) case of two different shingles of the text sharing a hash."""
    if n < 1:
        raise ValueError(f"a shingle needs at least one character, not {n}")
    codes = code_points(text).astype(np.uint64) + np.uint64(1)
    if not len(codes):
        return ShingleSet(
            np.zeros(0, dtype=np.uint64), tuple(np.zeros(0, dtype=np.uint64) for _ in range(0, n, _PER_WORD))
        )
    if len(codes) < n:  # the whole text is the one shingle
        codes = np.concatenate((codes, np.zeros(n - len(codes), dtype=np.uint64)))
    m = len(codes) - n + 1
    words = [
        np.correlate(
            codes[start : start + m + min(_PER_WORD, n - start) - 1], _packing(min(_PER_WORD, n - start)), "valid"
        )  # exact: < 2**63
        for start in range(0, n, _PER_WORD)
    ]
    hashes = words[0]
    for word in words[1:]:
        hashes = hashes * _KEY_MIX + word
    order = hashes.argsort()
    hashes, words = hashes[order], [word[order] for word in words]
    repeat = hashes[1:] == hashes[:-1]
    if repeat.any():
        if any((word[1:][repeat] != word[:-1][repeat]).any() for word in words):
            return shingles(text, n)  # two shingles share a hash: count with strings
        keep = np.concatenate(([True], ~repeat))
        hashes, words = hashes[keep], [word[keep] for word in words]
    return ShingleSet(hashes, tuple(words))


def _common(a: ShingleSet, b: ShingleSet) -> int:
    """Shingles two `ShingleSet`s share: the rows of `a` whose exact key equals the key of
    `b`'s row where `a`'s hash would stand (a shingle of both has one hash, held once by
    each set, so it is found there)."""
    if not (len(a.hashes) and len(b.hashes)):
        return 0
    at = b.hashes.searchsorted(a.hashes)
    same = a.words[0] == b.words[0].take(at, mode="clip")
    for word_a, word_b in zip(a.words[1:], b.words[1:]):
        same &= word_a == word_b.take(at, mode="clip")
    return int(np.count_nonzero(same))


def shingle_jaccard(a: ShingleSet | set[str], b: ShingleSet | set[str]) -> float:
    """`jaccard` of two `shingle_set`s (the same counts, so the same float)."""
    if isinstance(a, ShingleSet) and isinstance(b, ShingleSet):
        la, lb = len(a.hashes), len(b.hashes)
        if not (la or lb):
            return 1.0
        common = _common(a, b)
        return common / (la + lb - common)
    return jaccard(*(s.strings() if isinstance(s, ShingleSet) else s for s in (a, b)))
