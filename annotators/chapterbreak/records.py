"""Typed records that travel between ChapterBreak's steps (instead of positional tuples).

Books themselves stay plain dicts with named keys (`books.py`); these are the small records
the job builds around them: the out-of-book pool (Appendix F), one drawn negative, and the
per-book and per-boundary facts behind the paper's Tables 3-4 (`card.dataset_stats`).
"""

from __future__ import annotations

from typing import NamedTuple


class PoolOpening(NamedTuple):
    """One chapter opening offered to other books as an out-of-book negative (Appendix F).

    Field order is the pool's sort order: by book, then chapter (deterministic draws).
    """

    book_id: str
    chapter_index: int
    heading: str
    numeral: str
    opening: str  # heading as printed + the body's first `suffix_tokens` tokens or so


class Negative(NamedTuple):
    """One negative suffix of an example: where it comes from and its text."""

    book_id: str
    chapter_index: int
    text: str


class BookStat(NamedTuple):
    """Table 3 facts of one accepted book, and how many boundaries of each subset kind it
    would give with no per-book cap ((kind, count) pairs; () when no subset is built)."""

    source: str
    book_id: str
    n_chapters: int
    n_words: int
    name: str = ""
    subsets_uncapped: tuple[tuple[str, int], ...] = ()


class BoundaryStat(NamedTuple):
    """Table 4 facts of one boundary (all prefix lengths of it count once)."""

    source: str
    boundary: str
    book_id: str
    boundary_id: str
