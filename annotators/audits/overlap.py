"""8-gram overlap between test examples and a reference corpus (LOT section 5.6, Table 14).

Definition (stated in the job's card; tests recompute it independently):
- tokens of a text field: the placeholders `<mask>`, `[MASK]`, `<MASK>` are removed, then
  `[t for t in jieba.lcut(field, HMM=True) if t.strip()]` (or a whitespace / regex
  tokenizer for English);
- an example's 8-grams are the contiguous 8-grams of each text field separately (no 8-gram
  crosses two fields; each outline phrase is its own field), counted with multiplicity;
- the reference is the *set* of its 8-grams; per example n = #8-grams, o = #of them in the
  reference, ratio = o / n (0 when n = 0).
An n-gram is its tokens joined by "\\x1f", which no tokenizer keeps inside a token (Python
treats it as whitespace), so joined keys never collide.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from schemas.lot import CLOZET_MASK, PLOTCOM_MASK, SENPOS_MASK

GRAM_SEP = "\x1f"
PLACEHOLDERS = (CLOZET_MASK, SENPOS_MASK, PLOTCOM_MASK)
TOKENIZERS = ("jieba", "whitespace", "regex")
# The audit's tokenizer names (its --tokenizer values) -> annotators.text.tokenizers names.
TOKENIZER_SPECS = {"jieba": "jieba", "whitespace": "whitespace_v1", "regex": "word_punct_chars"}


@dataclasses.dataclass(frozen=True)
class OverlapConfig:
    n: int = dataclasses.field(
        default=8,
        metadata={  # LOT 5.6 (after Radford et al., 2019)
            "help": "n-gram length: LOT 5.6 reports the percentage of 8-grams",
            "min": 1,
        },
    )
    tokenizer: str = dataclasses.field(
        default="jieba",
        metadata={  # LOT 5.6: "the jieba tokenizer"
            "help": "jieba (LOT 5.6), whitespace or regex (word runs and single other characters)",
            "choices": TOKENIZERS,
        },
    )
    over_threshold: float = 0.1  # LOT Table 14 "# Exam >10%", Tables 15-16 "w/o Overlap"
    placeholders: tuple[str, ...] = PLACEHOLDERS  # LOT task placeholders, never text


@dataclasses.dataclass(frozen=True)
class ExampleGrams:
    """The 8-grams of one test example (with multiplicity), before scoring."""

    task: str
    split: str
    example_id: str
    grams: tuple[str, ...]
    input_id: str = ""  # "file:line": where a repeated example_id is told apart (steps.unique_example_id)


def strip_placeholders(text: str, placeholders: Sequence[str] = PLACEHOLDERS) -> str:
    for mark in placeholders:
        text = text.replace(mark, "")
    return text


def make_tokenizer(name: str) -> Callable[[str], list[str]]:
    """A function text -> non-whitespace tokens (annotators.text.tokenizers); jieba loads once."""
    if name not in TOKENIZER_SPECS:
        raise ValueError(f"unknown tokenizer {name!r}; choose one of {TOKENIZERS}")
    from annotators.text.tokenizers import get_tokenizer

    return get_tokenizer(TOKENIZER_SPECS[name]).tokens


def field_texts(record: dict, fields: Sequence[str]) -> list[str]:
    """The texts of `fields` present in `record`; a list field gives one text per item."""
    texts: list[str] = []
    for field in fields:
        value = record.get(field)
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, (list, tuple)):
            texts.extend(v for v in value if isinstance(v, str))
    return texts


def ngrams(tokens: Sequence[str], n: int) -> list[str]:
    """Contiguous n-grams of one token sequence, as joined keys, in order."""
    return [GRAM_SEP.join(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def field_tokens(texts: Iterable[str], tokenize: Callable[[str], list[str]], config: OverlapConfig) -> list[list[str]]:
    return [tokenize(strip_placeholders(t, config.placeholders)) for t in texts]


def example_ngrams(
    texts: Iterable[str], tokenize: Callable[[str], list[str]], config: OverlapConfig
) -> tuple[str, ...]:
    """All n-grams of an example's fields, field by field, with multiplicity."""
    grams: list[str] = []
    for tokens in field_tokens(texts, tokenize, config):
        grams.extend(ngrams(tokens, config.n))
    return tuple(grams)


def matched_ngrams(token_lists: Iterable[Sequence[str]], wanted: frozenset | set, n: int) -> list[str]:
    """Distinct n-grams of a reference document that are in `wanted`, sorted.

    Only these leave the worker, so the shuffle is bounded by the test side, not the
    reference (SPEC "Audits": references as large as 120 GB).
    """
    if not wanted:
        return []
    found: set[str] = set()
    for tokens in token_lists:
        for i in range(len(tokens) - n + 1):
            gram = GRAM_SEP.join(tokens[i : i + n])
            if gram in wanted:
                found.add(gram)
    return sorted(found)


# ---------------------------------------------------------------- the reference prefilter
# A reference text can hold a test n-gram only if its characters, whitespace removed, hold
# the n-gram's tokens joined (whitespace removed: every tokenizer drops whitespace and covers
# every other character). `TestStrings` finds such places without tokenizing: a polynomial
# hash of every window of `k` characters (k: the shortest test string's length, at most
# PREFIX_CHARS) is looked up (in a table of top bits first) among the test strings' first k
# characters, and each hit is checked against the lengths and 64-bit digests of the test
# strings starting there. Hashes
# and digests can only add places (a collision), never miss one, so a text without a place
# has no matched n-gram and needs no tokenizing; a text with one is tokenized and matched as
# before. The outputs are those of tokenizing every text.
PREFIX_CHARS = 16
_BASE = np.uint64(0x100000001B3)  # the FNV-64 prime; any odd multiplier works
_LONG = 63  # test strings this long or longer share the mask's top bit
_SEEN_BITS = 24


def _window_hashes(codes: np.ndarray, k: int) -> np.ndarray:
    """The hash of every k-character window of `codes` (uint64 code points; 2-D: of each row):
    sum of code * BASE ** (k - 1 - j) over the window's positions j, modulo 2 ** 64. A 1-D text
    is hashed by doubling (windows of 1, 2, 4, ... characters joined), in about log2(k) steps."""
    if codes.ndim == 2:
        h = codes[:, 0].copy()
        for j in range(1, k):
            h *= _BASE
            h += codes[:, j]
        return h
    acc, size = None, 0  # hashes of the windows of `size` characters built so far
    piece, width = codes, 1  # hashes of the windows of `width` characters
    while True:
        if k & width:
            if acc is None:
                acc, size = piece, width
            else:
                m = len(codes) - (size + width) + 1
                acc = acc[:m] * (_BASE**width) + piece[size : size + m]
                size += width
        if width * 2 > k:
            return acc
        piece = piece[:-width] * (_BASE**width) + piece[width:]
        width *= 2


def _codes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.uint64)


def _digest(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


class TestStrings:
    """Where a reference text may hold one of a test set's n-grams (see above)."""

    def __init__(self, grams: Iterable[str]):
        strings = sorted({"".join(g.split()) for g in grams} - {""})
        self.k = min(PREFIX_CHARS, min(map(len, strings))) if strings else 0
        if not strings:
            return
        prefixes = _window_hashes(_codes("".join(s[: self.k] for s in strings)).reshape(-1, self.k), self.k)
        bits = np.array([1 << min(len(s), _LONG) for s in strings], dtype=np.uint64)
        order = np.argsort(prefixes, kind="stable")
        prefixes, bits = prefixes[order], bits[order]
        starts = np.flatnonzero(np.r_[True, prefixes[1:] != prefixes[:-1]])
        self._prefixes = prefixes[starts]
        self._masks = np.bitwise_or.reduceat(bits, starts)
        self._long = sorted({len(s) for s in strings if len(s) >= _LONG})
        self._digests = {_digest(s) for s in strings}
        # a first look-up in a table of the prefix hashes' top bits (16 MB): most windows stop there
        self._seen = np.zeros(1 << _SEEN_BITS, dtype=bool)
        self._seen[self._prefixes >> np.uint64(64 - _SEEN_BITS)] = True

    def _lengths(self, mask: int) -> Iterable[int]:
        while mask:
            bit = (mask & -mask).bit_length() - 1
            mask &= mask - 1
            yield from self._long if bit == _LONG else (bit,)

    def may_hold(self, text: str) -> bool:
        """False only when `text` holds none of the test n-grams."""
        if not self.k:
            return False
        chars = "".join(text.split())
        if len(chars) < self.k:
            return False
        hashes = _window_hashes(_codes(chars), self.k)
        starts = np.flatnonzero(self._seen[hashes >> np.uint64(64 - _SEEN_BITS)])
        if not len(starts):
            return False
        hashes = hashes[starts]
        where = np.searchsorted(self._prefixes, hashes)
        where[where == len(self._prefixes)] = 0
        hit = self._prefixes[where] == hashes
        for start, at in zip(starts[hit].tolist(), where[hit].tolist()):
            for length in self._lengths(int(self._masks[at])):
                if start + length <= len(chars) and _digest(chars[start : start + length]) in self._digests:
                    return True
        return False


def score_example(example: ExampleGrams, reference: frozenset | set) -> dict:
    """One row of the examples table: n, o and ratio = o / n (0 when n = 0)."""
    n = len(example.grams)
    o = sum(1 for g in example.grams if g in reference)
    return {
        "task": example.task,
        "split": example.split,
        "example_id": example.example_id,
        "n": n,
        "o": o,
        "ratio": o / n if n else 0.0,
    }


def is_example(row) -> bool:
    """A test example's n-grams (ExampleGrams), not a reference document's matches."""
    return isinstance(row, ExampleGrams)


def score_against(example: ExampleGrams, matched: dict) -> dict:
    """`score_example` against the reference n-grams matched for the example's task."""
    return score_example(example, matched.get(example.task, frozenset()))


def matched_entries(matched) -> list[tuple[str, frozenset]]:
    """(task, n-grams) of one document's MatchedGrams, none when it matched nothing."""
    return [(matched.task, matched.grams)] if matched.grams else []


class UnionSets:
    """The fold of n-gram sets into one frozenset (pipelines.engine.folds)."""

    def create(self) -> set:
        return set()

    def add(self, acc: set, grams: Iterable[str]) -> set:
        acc.update(grams)
        return acc

    def merge(self, accs: Iterable[set]) -> set:
        out: set = set()
        for acc in accs:
            out |= acc
        return out

    def result(self, acc: set) -> frozenset:
        return frozenset(acc)
