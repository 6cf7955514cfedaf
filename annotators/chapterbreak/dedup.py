"""Exact and near-duplicate books: one text from two sources, editions or downloads counts once.

Without this, 8 copies of a book give 8 times its examples, and a copy's chapters can be
drawn as another copy's gold and negatives. Every accepted book gets a `BookKey` (small: no
text), and one global step over the keys (`duplicate_books`) decides which copy of each
group is kept before any example is drawn.

- Text compared: the book's chapter bodies (or its whole text, for a book without
  chapters), case-folded, with curly quotes and dashes made plain, emphasis marks ("_",
  "*") dropped and all whitespace removed, so line wrapping, spacing, licence headers
  (already stripped) and quote style do not matter.
- Exact duplicates: equal SHA-256 of that text.
- Near duplicates (two editions, a copy with a changed preface or a few typos fixed): a
  one-permutation MinHash of the text's word 8-grams (w-shingles, words = runs of letters
  and digits; `NEAR_DUP_BINS` bins, the stories job's one-permutation sketch); books sharing
  an LSH band are candidates, and a pair is a duplicate when the share of equal bins, an
  estimate of their 8-gram Jaccard with a standard error of at most 0.03 at 256 bins, is at
  least `threshold` (default 0.8). Different books share almost no 8-word runs (well under
  0.05 on real books); character n-grams would not do: two texts from one small vocabulary
  share most short character runs.
- Groups are connected components; the copy kept has the most chapters (the better
  formatted copy gives chapter-break examples), then the source order pg19 < ao3, then the
  smallest input id: a rule independent of arrival order.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

from annotators.core.near_dup import bands_rows, id_components, oph_of_codes

NEAR_DUP_BINS = 256
SHINGLE = 8
THRESHOLD = 0.8
_SOURCE_ORDER = {"pg19": 0, "ao3": 1}
_PLAIN = str.maketrans(
    {"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'", "\u2014": "-", "\u2013": "-", "_": None, "*": None}
)
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"[^\W_]+")


@dataclasses.dataclass(frozen=True)
class DedupConfig:
    """Which copies of a book count as one (exact copies always do)."""

    threshold: float = dataclasses.field(
        default=THRESHOLD,
        metadata={
            "help": "estimated word 8-gram Jaccard at which two books are one (two editions); 1.0 = exact copies only",
            "min": 0,
            "max": 1,
        },
    )


class BookKey(NamedTuple):
    """What the duplicate search knows of one accepted book (its text stays behind)."""

    source: str
    input_id: str
    book_id: str
    n_chapters: int
    text_hash: str
    signature: bytes  # NEAR_DUP_BINS little-endian uint64 values


def comparable_text(bodies: Iterable[str]) -> str:
    """The text two copies are compared on (see the module docstring)."""
    return _SPACE.sub("", "\n".join(bodies).casefold().translate(_PLAIN))


def word_codes(text: str) -> np.ndarray:
    """A stable 64-bit code per word (blake2b of the case-folded word), in text order."""
    codes: dict[str, int] = {}
    out = []
    for word in _WORD.findall(text.casefold()):
        code = codes.get(word)
        if code is None:
            code = codes[word] = int.from_bytes(hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest(), "little")
        out.append(code)
    return np.array(out, dtype=np.uint64)


def book_key(book: dict, bodies: list[str]) -> BookKey:
    joined = "\n".join(bodies)
    text = comparable_text([joined])
    sig = oph_of_codes(word_codes(joined), SHINGLE, NEAR_DUP_BINS, seed=1)
    return BookKey(
        book["source"],
        book["input_id"],
        book["book_id"],
        len(book["chapters"]),
        hashlib.sha256(text.encode("utf-8")).hexdigest(),
        sig.astype("<u8").tobytes(),
    )


def keep_order(key: BookKey) -> tuple:
    """Sort key: the first book of a duplicate group is the copy kept."""
    return (-key.n_chapters, _SOURCE_ORDER.get(key.source, 9), key.source, key.input_id)


def similarity(a: BookKey, b: BookKey) -> float:
    """Share of equal MinHash bins (an estimate of the word 8-gram Jaccard); 1.0 for equal texts."""
    if a.text_hash == b.text_hash:
        return 1.0
    x, y = np.frombuffer(a.signature, dtype="<u8"), np.frombuffer(b.signature, dtype="<u8")
    return float(np.mean(x == y))


def duplicate_books(keys: Iterable[BookKey], threshold: float = THRESHOLD) -> dict[str, dict]:
    """input_id -> {"kept": input_id, "kept_book_id", "similarity"} for every copy that is
    not kept, and input_id -> {"duplicates": [input_ids]} for every copy kept over others."""
    keys = sorted(set(keys), key=keep_order)
    by_id = {k.input_id: k for k in keys}
    b, r = bands_rows(threshold, NEAR_DUP_BINS)
    buckets: dict[tuple, list[str]] = {}
    for k in keys:
        buckets.setdefault(("exact", k.text_hash), []).append(k.input_id)
        data = k.signature
        for i in range(b):
            buckets.setdefault((i, data[i * r * 8 : (i + 1) * r * 8]), []).append(k.input_id)
    pairs = set()
    for members in buckets.values():
        for n, x in enumerate(members):
            for y in members[n + 1 :]:
                if (x, y) not in pairs and similarity(by_id[x], by_id[y]) >= threshold:
                    pairs.add((x, y))
    out: dict[str, dict] = {}
    groups: dict[str, list[str]] = {}
    for member, root in id_components(sorted(pairs)).items():
        groups.setdefault(root, []).append(member)
    for members in groups.values():
        members = sorted(members, key=lambda m: keep_order(by_id[m]))
        kept = by_id[members[0]]
        out[kept.input_id] = {"duplicates": members[1:]}
        for m in members[1:]:
            out[m] = {
                "kept": kept.input_id,
                "kept_book_id": kept.book_id,
                "similarity": round(similarity(kept, by_id[m]), 3),
            }
    return out
