"""ChapterBreak suffix-identification examples from one book's chapters (paper section 2).

At every boundary between chapter k and k+1 with at least 5 chapters after k+1:
prefix = the book's text up to the end of chapter k, cut from the left to at most N tokens
(for every N in `prefix_lengths`, one row each); gold = the first 128 tokens of chapter k+1
with its heading; negatives = the first 128 tokens of 5 chapters drawn with
`rng_for(seed, book_id, k+1)` from the chapters after k+1 ("future chapter beginnings
sampled from the same narrative"). Section 2 rewrites each negative's chapter number to the
gold's ("Chapter VII" -> "Chapter III"), which leaves the heading's case and title to tell
the gold apart; the default heading mode (`normalize`) gives the gold and every negative the
same heading line, the gold's chapter phrase without titles (`opening_as`). Appendix F's
out-of-book negatives are an option; Appendix A's cause and dialogue subsets
(`annotators.chapterbreak.subsets`) are built from every book.
The prefix holds only chapter text (chapters 0..k), never the front matter: a contents list
there would name the gold's title.
"""

from __future__ import annotations

import bisect
import dataclasses
import re

from annotators.chapterbreak.headings import CHAPTER_PHRASE
from annotators.chapterbreak.records import Negative, PoolOpening
from annotators.chapterbreak.token_index import TokenIndex
from annotators.core.ids import rng_for, stable_id
from annotators.core.outcome import Drop
from annotators.text.cuts import holds_exactly
from annotators.text.tokenizers import PATTERNS, RegexTokenizer, get_tokenizer

DEFAULT_TOKENIZER = "words_punct_v1"  # annotators.text.tokenizers; the name written to every row
HEADING_MODES = ("normalize", "number", "keep", "strip")


def _field(default, help_text: str, **meta):
    """A Config field with its flag's help (pipelines.engine.add_config_flags)."""
    return dataclasses.field(default=default, metadata={"help": help_text, **meta})


@dataclasses.dataclass(frozen=True)
class ExampleConfig:
    """Example settings; defaults are ChapterBreak's (section 2, Appendix A and F)."""

    prefix_lengths: tuple[int, ...] = _field(
        (8192,),
        "prefix lengths in tokens, comma list, e.g. 256,512,1024,2048,4096,8192 (§2: up to 8K; Fig. 2)",
        min=1,
        max=1 << 31,  # 10**20 failed writing the examples table (int64), after the whole run
    )
    suffix_tokens: int = _field(128, "tokens of the gold and negative suffixes (§2)", min=1, max=1 << 31)
    n_negatives: int = _field(5, "negatives per example (§2)", min=1)
    min_later_chapters: int = _field(5, "chapters needed after the gold (negatives come from them)", min=0)
    negatives_from: str = _field(
        "future", "negatives from later chapters (§2) or other books (App. F)", choices=("future", "out_of_book")
    )
    headings: str = _field(
        "normalize",
        "heading lines of the gold and its negatives: normalize = every one "
        "opens with the gold's chapter phrase ('CHAPTER III.'; same case and number, no "
        "titles), so no heading line tells them apart; number = §2 as printed, only the "
        "negatives' numbers rewritten; keep = as printed; strip = no heading lines",
        choices=HEADING_MODES,
    )
    tokenizer: str = _field(
        DEFAULT_TOKENIZER,
        "length unit: words_punct_v1 (offline default) or hf:PATH, the "
        "evaluated model's tokenizer.json (file or folder), to count its tokens "
        "(gpt2:DIR: GPT-2's vocab.json + merges.txt)",
    )
    subsets: tuple[str, ...] = _field(
        ("cause", "dialogue"),
        "Appendix A subsets built from every book, "
        "chapters or not: comma list of cause,dialogue ('none': chapter breaks only)",
    )
    subset_per_book: str = _field(
        "paper",
        "subset examples drawn per book and kind (seeded): paper = Table 4's "
        "examples per work for the book's source and kind (pg19: cause 11, dialogue 69; "
        "ao3: cause 8, dialogue 9), N = at most N, 0 = all",
    )


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
        tail = new[start + len(gold_numeral) :]
        tail = re.sub(rf"(?<!\d){re.escape(numeral)}(?!\d)", gold_numeral, tail)
        new = new[: start + len(gold_numeral)] + tail
    return new + opening[len(heading) :]


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
        # a built-in regex's tokens never hold white space nor look around them, so the
        # first n tokens of "phrase\n\nbody" are the phrase's k and the body's first n - k
        self.separable = isinstance(self.tok, RegexTokenizer) and self.tok.pattern in PATTERNS.values()
        self._heads: dict[tuple[int, int, bool], str | None] = {}

    def head(self, chapter: int, n: int, *, whole: bool) -> str | None:
        """`exact_head` of a chapter's opening (`whole`) or of its body past the heading, at
        `n` tokens: cut once per book, however many boundaries draw the chapter."""
        key = (chapter, n, whole)
        if key not in self._heads:
            ch = self.chapters[chapter]
            text = ch.opening if whole else opening_body(ch.opening, ch.heading)
            self._heads[key] = exact_head(self.tok, text, n)
        return self._heads[key]

    def prefix(self, end: int, n_tokens: int) -> tuple[str, int]:
        start, count = self.index.tail_start(0, end, n_tokens)
        return self.text[start:end], count

    def chapter_at(self, offset: int) -> int:
        return max(0, bisect.bisect_right(self.starts, offset) - 1)


def heading_phrase(heading: str, numeral: str) -> str:
    """The chapter phrase of a heading's first line, as printed up to its numeral and a
    period right after it: "CHAPTER 73. Stubb and Flask..." -> "CHAPTER 73.", "Chapter IV"
    -> "Chapter IV", "IV. The Mail" -> "IV.", "Chapter 4: The Storm" -> "Chapter 4"; "" when
    the heading has no numbered phrase."""
    first = heading.split("\n", 1)[0].strip()
    match = CHAPTER_PHRASE.search(first)
    if match and not first[: match.start()].strip("_* "):
        start, end = match.start(), match.end("num")
    elif numeral and first.strip("_* ").startswith(numeral):
        start = first.index(numeral)
        end = start + len(numeral)
    else:
        return ""
    return first[start:end] + ("." if first[end : end + 1] == "." else "")


def opening_as(
    text: str, heading: str, numeral: str, gold_heading: str, gold_numeral: str, mode: str, is_gold: bool = False
) -> str:
    """A chapter opening (heading + blank line + body, or the body alone) as the suffix of an
    example whose gold chapter has `gold_heading`/`gold_numeral`, by heading mode:
    normalize: the gold's heading phrase + the body (no titles; nothing when the gold has no
    numbered heading); number: §2, a negative's chapter number rewritten to the gold's;
    keep: as printed; strip: the body alone."""
    if mode == "keep" or (mode == "number" and is_gold):
        return text
    if mode == "number":
        return rewrite_heading(text, heading, numeral, gold_numeral)
    body = opening_body(text, heading)
    phrase = heading_phrase(gold_heading, gold_numeral) if mode == "normalize" else ""
    return f"{phrase}\n\n{body}" if phrase else body


def opening_body(text: str, heading: str) -> str:
    """A chapter opening past its heading line(s) and the blank line after them."""
    return text[len(heading) :].lstrip("\n") if heading and text.startswith(heading) else text


def suffix(book: BookText, chapter: int, gold: int, config: ExampleConfig) -> str | None:
    """The first `suffix_tokens` tokens of chapter `chapter` as a suffix of gold chapter `gold`
    (all of it when shorter); None where no verbatim cut holds exactly that many (`exact_head`)."""
    ch, g = book.chapters[chapter], book.chapters[gold]
    text = opening_as(
        ch.opening, ch.heading, ch.numeral, g.heading, g.numeral, config.headings, is_gold=chapter == gold
    )
    return exact_head(book.tok, text, config.suffix_tokens)


def suffix_fn(book: BookText, gold: int, config: ExampleConfig):
    """j -> `suffix(book, j, gold, config)`. With a built-in regex tokenizer (`separable`) and
    a heading mode that puts the same text before every chapter's body (normalize: the gold's
    phrase; strip: nothing; keep: the chapter's own opening), each chapter's head is cut once
    per book (`BookText.head`) instead of once per boundary: a book of 6,000 chapters cut 18
    million suffixes, each reading its whole chapter (15 minutes)."""
    n, mode = config.suffix_tokens, config.headings
    if not book.separable or mode == "number":
        return lambda j: suffix(book, j, gold, config)
    if mode == "keep":
        return lambda j: book.head(j, n, whole=True)
    g = book.chapters[gold]
    phrase = heading_phrase(g.heading, g.numeral) if mode == "normalize" else ""
    k = book.tok.count(phrase) if phrase else 0
    if not phrase:
        return lambda j: book.head(j, n, whole=False)

    def fn(j: int) -> str | None:
        body = book.head(j, n - k, whole=False) if k < n else None
        return f"{phrase}\n\n{body}" if body else suffix(book, j, gold, config)  # no body token: as cut whole

    return fn


def exact_head(tok, text: str, n: int) -> str | None:
    """The verbatim head of `text` that holds exactly `n` tokens of `tok` as a text of its own
    (all of `text` when it holds fewer), or None: with a subword tokenizer the count can jump
    past `n` at one character (a blank line that a byte-level BPE splits before a word but keeps
    as one token at a text's end; a character of several byte tokens), and a suffix one token
    short of its rivals would favour it under a summed log-likelihood. Such a gold's boundary
    is skipped and such a chapter is never drawn as a negative; a context-free tokenizer
    (the default) always cuts exactly."""
    head, count = tok.head_counted(text, n)
    return head if holds_exactly(text, len(head), count, n) else None


def chapter_examples(
    book_id: str,
    source: str,
    chapters: list[BookChapter],
    *,
    seed: int,
    config: ExampleConfig = ExampleConfig(),
    pool=None,
    book: BookText | None = None,
) -> list[dict] | Drop:
    """All chapter-boundary example rows of one book, or Drop(no_usable_boundary)."""
    book = book or BookText(chapters, config.tokenizer)
    book.index.tails(
        [
            (0, book.ends[gold - 1], n)
            for gold in range(1, len(chapters))
            for n in config.prefix_lengths
            if config.negatives_from != "future" or len(chapters) - gold - 1 >= config.min_later_chapters
        ]
    )
    rows, short, no_gold, few = [], 0, 0, 0
    for gold in range(1, len(chapters)):
        later = list(range(gold + 1, len(chapters)))
        if len(later) < config.min_later_chapters and config.negatives_from == "future":
            short = len(chapters) - gold
            break
        suffix_of = suffix_fn(book, gold, config)
        gold_text = suffix_of(gold)
        if gold_text is None:  # no verbatim gold of exactly suffix_tokens tokens
            no_gold += 1
            continue
        rng = rng_for(seed, book_id, "chapter", gold)
        if config.negatives_from == "out_of_book":
            negs = _out_of_book(pool or [], book_id, gold_text, chapters[gold], rng, config)
        else:
            cands = [Negative(book_id, j, suffix_of(j)) for j in later]
            cands = [c for c in cands if c.text is not None and c.text != gold_text]
            negs = rng.sample(cands, config.n_negatives) if len(cands) >= config.n_negatives else None
        if not negs:
            few += 1
            continue
        rows.extend(
            example_rows(book, book_id, source, "chapter", gold, book.ends[gold - 1], gold_text, negs, seed, config)
        )
    if not rows:
        where = "later chapters" if config.negatives_from == "future" else "other books' openings"
        return Drop(
            "no_usable_boundary",
            f"{len(chapters)} chapters, {max(len(chapters) - 1, 0)} boundaries: {short} with fewer than "
            f"{config.min_later_chapters} chapters after the gold, {no_gold} without a gold of exactly "
            f"{config.suffix_tokens} tokens, {few} without {config.n_negatives} usable negatives ({where})",
        )
    return rows


def _out_of_book(pool: list[PoolOpening], book_id, gold_text, gold: BookChapter, rng, config) -> list[Negative] | None:
    """Appendix F: negatives are chapter beginnings of other books (pool sorted by id)."""
    others = [p for p in pool if p.book_id != book_id]
    if len(others) < config.n_negatives:
        return None
    out = []
    for other in rng.sample(others, config.n_negatives):
        text = opening_as(other.opening, other.heading, other.numeral, gold.heading, gold.numeral, config.headings)
        head = exact_head(get_tokenizer(config.tokenizer), text, config.suffix_tokens)
        out.append(Negative(other.book_id, other.chapter_index, head))
    return out if all(n.text is not None and n.text != gold_text for n in out) else None


def example_rows(
    book: BookText,
    book_id: str,
    source: str,
    boundary: str,
    gold_chapter: int,
    cut: int,
    gold_text: str,
    negs: list[Negative],
    seed: int,
    config: ExampleConfig,
) -> list[dict]:
    """The `examples` rows of one boundary: one per prefix length, sharing `boundary_id`."""
    boundary_id = stable_id("cbb", book_id, boundary, cut, seed)
    rows = []
    for length in sorted(set(config.prefix_lengths)):
        prefix, count = book.prefix(cut, length)
        rows.append(
            {
                "example_id": stable_id("cb", boundary_id, length),
                "boundary_id": boundary_id,
                "book_id": book_id,
                "source": source,
                "boundary": boundary,
                "chapter_index": gold_chapter,
                "prefix": prefix,
                "gold": gold_text,
                "negatives": [n.text for n in negs],
                "negative_chapter_indices": [n.chapter_index for n in negs],
                "negative_book_ids": [n.book_id for n in negs],
                "prefix_tokens": count,
                "prefix_length": length,
                "gold_tokens": book.tok.count(gold_text),
                "tokenizer": book.tok.name,
                "cut_offset": cut,
                "seed": seed,
                "heading_normalization": config.headings,
            }
        )
    return rows
