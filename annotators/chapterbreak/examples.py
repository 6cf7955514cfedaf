"""ChapterBreak suffix-identification examples from one book's chapters (paper section 2).

At every boundary between chapter k and k+1 with at least 5 chapters after k+1:
prefix = the book's text up to the end of chapter k, cut from the left to at most N tokens
(for every N in `prefix_lengths`, one row each); gold = the first 128 tokens of chapter k+1
with its heading; negatives = the first 128 tokens of 5 chapters drawn with
`rng_for(seed, book_id, k+1)` from the chapters after k+1 ("future chapter beginnings
sampled from the same narrative"), each heading's number rewritten to the gold's ("Chapter
VII" -> "Chapter III", section 2). Appendix F's out-of-book negatives and Appendix A's cause
and dialogue subsets are options (`annotators.chapterbreak.subsets`).
The prefix holds only chapter text (chapters 0..k), never the front matter: a contents list
there would name the gold's title.
"""
from __future__ import annotations

import dataclasses
import re

from annotators.chapterbreak.headings import CHAPTER_PHRASE
from annotators.chapterbreak.records import Negative, PoolOpening
from annotators.chapterbreak.token_index import TokenIndex
from annotators.core.ids import rng_for, stable_id
from annotators.core.outcome import Drop
from annotators.text.tokenizers import get_tokenizer

DEFAULT_TOKENIZER = "words_punct_v1"  # annotators.text.tokenizers; the name written to every row


def _field(default, help_text: str, **meta):
    """A Config field with its flag's help (pipelines.engine.add_config_flags)."""
    return dataclasses.field(default=default, metadata={"help": help_text, **meta})


@dataclasses.dataclass(frozen=True)
class ExampleConfig:
    """Example settings; defaults are ChapterBreak's (section 2, Appendix A and F)."""

    prefix_lengths: tuple[int, ...] = _field((8192,), "prefix lengths in tokens, comma list, e.g. "
                                             "256,512,1024,2048,4096,8192 (§2: up to 8K; Fig. 2)")
    suffix_tokens: int = _field(128, "tokens of the gold and negative suffixes (§2)")
    n_negatives: int = _field(5, "negatives per example (§2)")
    min_later_chapters: int = _field(5, "chapters needed after the gold (negatives come from them)")
    negatives_from: str = _field("future", "negatives from later chapters (§2) or other books (App. F)",
                                 choices=("future", "out_of_book"))
    rewrite_headings: bool = _field(True, "rewrite the negatives' chapter numbers to the gold's (§2)")
    tokenizer: str = _field(DEFAULT_TOKENIZER, "length unit (annotators.text.tokenizers; the paper names none)")
    subsets: tuple[str, ...] = _field((), "comma list of cause,dialogue (App. A)")
    subset_per_chapter: int = _field(1, "subset examples drawn per chapter (seeded)")


@dataclasses.dataclass(frozen=True)
class BookChapter:
    """The parts of a chapter examples need: heading as printed, its numeral, and body."""

    index: int
    heading: str
    numeral: str
    body: str

    @property
    def opening(self) -> str:
        return "\n\n".join(p for p in (self.heading, self.body) if p)


def rewrite_heading(opening: str, heading: str, numeral: str, gold_numeral: str) -> str:
    """A negative's opening with its heading's chapter number replaced by the gold's numeral.

    An arabic chapter number repeated in the heading's title ("Chapter 5: The 5th Day") is
    rewritten too (digit runs equal to it: "Chapter 2: The 2th Day"), since it would tell
    the negative's position; roman and word numerals are rewritten in the "chapter" phrase
    only, so a title's "I" or "One" is never touched.
    """
    if not heading or not numeral or not gold_numeral or numeral == gold_numeral:
        return opening
    match = CHAPTER_PHRASE.search(heading)
    if match and match.group("num") == numeral:
        start, end = match.span("num")
    else:
        found = re.search(rf"(?<!\w){re.escape(numeral)}(?!\w)", heading)
        if not found:
            return opening
        start, end = found.span()
    new = heading[:start] + gold_numeral + heading[end:]
    if numeral.isdigit() and gold_numeral.isdigit():
        tail = new[start + len(gold_numeral):]
        tail = re.sub(rf"(?<!\d){re.escape(numeral)}(?!\d)", gold_numeral, tail)
        new = new[:start + len(gold_numeral)] + tail
    return new + opening[len(heading):]


class BookText:
    """The book's chapters joined by blank lines, tokenised once, with chapter offsets."""

    def __init__(self, chapters: list[BookChapter], tokenizer_name: str):
        self.chapters = chapters
        self.tok = get_tokenizer(tokenizer_name)
        parts, self.starts, self.ends, pos = [], [], [], 0
        for ch in chapters:
            text = ch.opening
            self.starts.append(pos)
            self.ends.append(pos + len(text))
            parts.append(text)
            pos += len(text) + 2
        self.text = "\n\n".join(parts)
        self.index = TokenIndex(self.tok, self.text)

    def prefix(self, end: int, n_tokens: int) -> tuple[str, int]:
        start, count = self.index.tail_start(0, end, n_tokens)
        return self.text[start:end], count

    def chapter_at(self, offset: int) -> int:
        return max(i for i, s in enumerate(self.starts) if s <= offset)


def suffix(book: BookText, chapter: int, gold_numeral: str, config: ExampleConfig) -> str:
    ch = book.chapters[chapter]
    text = ch.opening
    if config.rewrite_headings:
        text = rewrite_heading(text, ch.heading, ch.numeral, gold_numeral)
    return book.tok.head(text, config.suffix_tokens)


def chapter_examples(book_id: str, source: str, chapters: list[BookChapter], *, seed: int,
                     config: ExampleConfig = ExampleConfig(), pool=None) -> list[dict] | Drop:
    """All chapter-boundary example rows of one book, or Drop(no_usable_boundary)."""
    book = BookText(chapters, config.tokenizer)
    rows, skipped = [], 0
    for gold in range(1, len(chapters)):
        later = list(range(gold + 1, len(chapters)))
        if len(later) < config.min_later_chapters and config.negatives_from == "future":
            break
        gold_text = book.tok.head(chapters[gold].opening, config.suffix_tokens)
        rng = rng_for(seed, book_id, "chapter", gold)
        if config.negatives_from == "out_of_book":
            negs = _out_of_book(pool or [], book_id, gold_text, chapters[gold].numeral, rng, config)
        else:
            cands = [Negative(book_id, j, suffix(book, j, chapters[gold].numeral, config)) for j in later]
            cands = [c for c in cands if c.text != gold_text]
            negs = rng.sample(cands, config.n_negatives) if len(cands) >= config.n_negatives else None
        if not negs:
            skipped += 1
            continue
        rows.extend(example_rows(book, book_id, source, "chapter", gold, book.ends[gold - 1],
                          gold_text, negs, seed, config))
    if not rows:
        return Drop("no_usable_boundary", f"{len(chapters)} chapters; a boundary needs "
                    f"{config.min_later_chapters} chapters after the gold ({skipped} skipped)")
    return rows


def _out_of_book(pool: list[PoolOpening], book_id, gold_text, gold_numeral, rng, config) -> list[Negative] | None:
    """Appendix F: negatives are chapter beginnings of other books (pool sorted by id)."""
    others = [p for p in pool if p.book_id != book_id]
    if len(others) < config.n_negatives:
        return None
    out = []
    for other in rng.sample(others, config.n_negatives):
        text = other.opening
        if config.rewrite_headings:
            text = rewrite_heading(text, other.heading, other.numeral, gold_numeral)
        head = get_tokenizer(config.tokenizer).head(text, config.suffix_tokens)
        out.append(Negative(other.book_id, other.chapter_index, head))
    return out if all(n.text != gold_text for n in out) else None


def example_rows(book: BookText, book_id: str, source: str, boundary: str, gold_chapter: int, cut: int,
                 gold_text: str, negs: list[Negative], seed: int, config: ExampleConfig) -> list[dict]:
    """The `examples` rows of one boundary: one per prefix length, sharing `boundary_id`."""
    boundary_id = stable_id("cbb", book_id, boundary, cut, seed)
    rows = []
    for length in sorted(set(config.prefix_lengths)):
        prefix, count = book.prefix(cut, length)
        rows.append({
            "example_id": stable_id("cb", boundary_id, length), "boundary_id": boundary_id,
            "book_id": book_id, "source": source, "boundary": boundary,
            "chapter_index": gold_chapter, "prefix": prefix, "gold": gold_text,
            "negatives": [n.text for n in negs],
            "negative_chapter_indices": [n.chapter_index for n in negs],
            "negative_book_ids": [n.book_id for n in negs],
            "prefix_tokens": count, "prefix_length": length,
            "gold_tokens": book.tok.count(gold_text), "tokenizer": config.tokenizer,
            "cut_offset": cut, "seed": seed,
            "heading_normalization": "rewrite_to_gold" if config.rewrite_headings else "none"})
    return rows

