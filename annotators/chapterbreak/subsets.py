"""ChapterBreak's cause and dialogue subsets (paper Appendix A, Table 4), same-book negatives.

- cause: the suffix starts a sentence that begins with "because", "due to" or "owing to";
- dialogue: the suffix starts a paragraph with a quotation mark.
The boundary is the start of that sentence/paragraph inside a chapter body (never a chapter
opening); prefix = the book's text before it; gold = 128 tokens from it; negatives = 128
tokens from 5 later positions of the same kind in the same book, starting at or after the
gold's end (so none overlaps or equals it), drawn with `rng_for(seed, book_id, kind, offset)`.
At most `subset_per_chapter` boundaries per chapter, chosen with the same seeded rng.
"""
from __future__ import annotations

import bisect
import re

from annotators.chapterbreak.examples import BookChapter, BookText, ExampleConfig, example_rows
from annotators.chapterbreak.records import Negative
from annotators.core.ids import rng_for

_CAUSE = re.compile(r"[\"\u201c\u2018']?(?:Because|Due to|Owing to|BECAUSE|DUE TO|OWING TO)\b")
_SENTENCE_END = re.compile(r"(?:[.!?][\"'\u201d\u2019)\]]*|\n)\s*$")
_DIALOGUE = re.compile(r"(?<=\n\n)[\"\u201c\u2018']")


def _body_ranges(book: BookText) -> list[tuple[int, int, int]]:
    """(chapter, body start, body end) offsets in the joined book text."""
    out = []
    for i, ch in enumerate(book.chapters):
        head = len(ch.heading) + 2 if ch.heading else 0
        out.append((i, book.starts[i] + head, book.ends[i]))
    return out


def cause_positions(book: BookText) -> list[int]:
    """Offsets where a sentence opens with because / due to / owing to."""
    out = []
    for _, start, end in _body_ranges(book):
        for m in _CAUSE.finditer(book.text, start, end):
            before = book.text[max(start, m.start() - 12):m.start()]
            if m.start() > start and _SENTENCE_END.search(before):
                out.append(m.start())
    return out


def dialogue_positions(book: BookText) -> list[int]:
    """Offsets of paragraphs (after a blank line) that open with a quotation mark."""
    out = []
    for _, start, end in _body_ranges(book):
        out.extend(m.start() for m in _DIALOGUE.finditer(book.text, start + 1, end))
    return out


def subset_examples(book_id: str, source: str, chapters: list[BookChapter], kind: str, *,
                    seed: int, config: ExampleConfig = ExampleConfig()) -> list[dict]:
    """Example rows of one subset ("cause" or "dialogue") for one book (may be empty)."""
    book = BookText(chapters, config.tokenizer)
    positions = cause_positions(book) if kind == "cause" else dialogue_positions(book)
    window = config.suffix_tokens * 64  # characters surely holding 128 tokens
    heads = {p: book.tok.head(book.text[p:p + window], config.suffix_tokens) for p in positions}

    def later(p: int) -> list[int]:
        first = bisect.bisect_left(positions, p + len(heads[p]))
        return [q for q in positions[first:] if heads[q] != heads[p]]

    usable: dict[int, list[int]] = {}
    for p in positions:
        if len(positions) - bisect.bisect_left(positions, p + len(heads[p])) >= config.n_negatives:
            usable.setdefault(book.chapter_at(p), []).append(p)
    rows = []
    for chapter in sorted(usable):
        picks = rng_for(seed, book_id, kind, "pick", chapter).sample(
            usable[chapter], min(config.subset_per_chapter, len(usable[chapter])))
        for p in sorted(picks):
            pool = later(p)
            if len(pool) < config.n_negatives:
                continue
            negs = rng_for(seed, book_id, kind, p).sample(pool, config.n_negatives)
            drawn = [Negative(book_id, book.chapter_at(q), heads[q]) for q in negs]
            rows.extend(example_rows(book, book_id, source, kind, chapter, p, heads[p], drawn, seed, config))
    return rows
