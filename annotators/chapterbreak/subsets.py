"""ChapterBreak's cause and dialogue subsets (paper Appendix A, Table 4), same-book negatives.

Appendix A builds them "as comparisons to the chapter boundary examples" from 45-46 PG-19
books while only 17 give chapter-break examples, so they are not tied to chapter boundaries:
they come from every accepted book, chapters or not (a book without chapter headings is one
body of text), at sentence and paragraph boundaries anywhere in its chapter bodies.

- A boundary is the start of a paragraph (its first non-space character after a blank line)
  or of a sentence inside one: after ".", "!" or "?" (and any closing quotes or brackets)
  and whitespace, before a capital letter or an opening quotation mark; "Mr." and other
  abbreviations and single-letter initials ("J. Smith") end no sentence.
- cause: the suffix's first sentence (from the boundary to the next boundary or the end of
  its paragraph) contains "because", "due to" or "owing to" as words, in any case. Appendix A
  says "the beginning of the suffix contains" them; "beginning" is that first sentence.
- dialogue: the suffix starts with a quotation mark (" \u201c \u2018, or ' before a letter).

Gold = the `suffix_tokens` tokens from the boundary; prefix = the book's text before it (up
to each prefix length); negatives = `n_negatives` later boundaries of the same kind in the
same book whose suffixes start at or after the gold's end (so none overlaps or equals it),
drawn with `rng_for(seed, book_id, kind, offset)`. A boundary is usable when it has that many
later ones. At most a per-book cap of usable boundaries is drawn, with
`rng_for(seed, book_id, kind, "pick")`: by default Table 4's examples per work for the
book's source and kind (`PAPER_PER_BOOK`). The cap is what brings the rule to Table 4's
rates: uncapped it finds several times more per book (`uncapped_count`, in stats.json and
the card).
"""

from __future__ import annotations

import bisect
import re

from annotators.chapterbreak.examples import BookChapter, BookText, ExampleConfig, example_rows
from annotators.chapterbreak.records import Negative
from annotators.core.ids import rng_for
from annotators.text.cuts import holds_exactly
from annotators.text.runs import finditer_from_runs

KINDS = ("cause", "dialogue")
# ChapterBreak Table 4: examples / works per source and kind, rounded (PG19: 506/45 cause,
# 3,165/46 dialogue; AO3: 8,133/965 cause, 8,724/979 dialogue).
PAPER_PER_BOOK = {("pg19", "cause"): 11, ("pg19", "dialogue"): 69, ("ao3", "cause"): 8, ("ao3", "dialogue"): 9}
CUE = re.compile(r"\b(?:because|due\s+to|owing\s+to)\b", re.I)
_OPEN_QUOTE = re.compile(r"[\"\u201c\u2018]|'(?=[A-Za-z])")
# Possessive runs (the classes are disjoint, so nothing given back could help) searched from
# the starts of runs of [.!?] (annotators.text.runs): linear on a long run of dots (issue 28).
_SENTENCE_GAP = re.compile(r"[.!?]++[\"'\u201d\u2019)\]]*+\s++(?=[\"'\u201c\u2018(]?[A-Z])")
_SENTENCE_GAP_AT_RUN = re.compile(r"(?<![.!?])" + _SENTENCE_GAP.pattern)
_PARAGRAPH = re.compile(r"\n[ \t]*\n\s*")
ABBREVIATIONS = frozenset(
    "mr mrs ms messrs mme mlle dr st jr sr rev revd col capt gen lt sgt maj prof hon esq gov "
    "sen rep fr no vol ch chap viz vs etc ft mt".split()
)


def per_book_cap(setting: str, source: str, kind: str) -> int:
    """The most subset examples of `kind` drawn from one book of `source` (0: no cap)."""
    if str(setting) == "paper":
        return PAPER_PER_BOOK.get((source, kind), PAPER_PER_BOOK[("pg19", kind)])
    cap = int(setting)
    if cap < 0:
        raise ValueError(f"subset_per_book must be 'paper' or a count >= 0, not {setting!r}")
    return cap


def _body_ranges(book: BookText) -> list[tuple[int, int]]:
    """(body start, body end) offsets of every chapter body in the joined book text."""
    out = []
    for i, ch in enumerate(book.chapters):
        head = len(ch.heading) + 2 if ch.heading else 0
        out.append((book.starts[i] + head, book.ends[i]))
    return out


def _ends_sentence(text: str, gap_start: int) -> bool:
    """Whether the punctuation at `gap_start` ends a sentence (not "Mr." or an initial)."""
    if text[gap_start] != ".":
        return True
    k = gap_start
    while k > 0 and text[k - 1].isalpha():
        k -= 1
    word = text[k:gap_start]
    return not (word.lower() in ABBREVIATIONS or (len(word) == 1 and word.isupper()))


def boundaries(book: BookText) -> list[tuple[int, int]]:
    """(start, end of its first sentence) of every paragraph and sentence start in the
    book's chapter bodies, in text order; the very start of the book is not one (no prefix)."""
    text, out = book.text, []
    for start, end in _body_ranges(book):
        para_starts = [start] + [m.end() for m in _PARAGRAPH.finditer(text, start, end)]
        for n, p in enumerate(para_starts):
            para_end = para_starts[n + 1] if n + 1 < len(para_starts) else end
            while p < para_end and text[p].isspace():
                p += 1
            if p >= para_end:
                continue
            starts = [p] + [
                m.end()
                for m in finditer_from_runs(_SENTENCE_GAP, _SENTENCE_GAP_AT_RUN, text, p, para_end)
                if _ends_sentence(text, m.start())
            ]
            stop = para_end
            for k, s in enumerate(starts):
                e = starts[k + 1] if k + 1 < len(starts) else stop
                while e > s and text[e - 1].isspace():
                    e -= 1
                if s > 0:
                    out.append((s, e))
    return out


def positions(book: BookText, kind: str, bounds: list[tuple[int, int]] | None = None) -> list[int]:
    """Offsets where a suffix of `kind` ("cause" or "dialogue") may start, in text order
    (`bounds`: the book's `boundaries`, found here when not given)."""
    text = book.text
    bounds = boundaries(book) if bounds is None else bounds
    if kind == "cause":
        return [s for s, e in bounds if CUE.search(text, s, e)]
    if kind == "dialogue":
        return [s for s, _ in bounds if _OPEN_QUOTE.match(text, s)]
    raise ValueError(f"unknown subset {kind!r}; known: {KINDS}")


def _suffixes(
    book: BookText, kind: str, config: ExampleConfig, bounds: list[tuple[int, int]] | None = None
) -> tuple[list[int], dict[int, int]]:
    """(offsets where a suffix of `kind` starts and holds a token, each suffix's end: the end
    of its first `suffix_tokens` tokens). A position whose verbatim suffix cannot hold exactly
    `suffix_tokens` tokens before the book ends (a subword tokenizer's count jumping past it at
    one character: examples.exact_head) is left out, as a gold and as a negative."""
    found = positions(book, kind, bounds)
    heads = book.index.head_counts(found, config.suffix_tokens)  # a subword tokenizer's: one batch
    n, text = config.suffix_tokens, book.text
    keep = [p for p in found if heads[p][0] > p and holds_exactly(text, heads[p][0], heads[p][1], n)]
    return keep, {p: end for p, (end, _) in heads.items()}


def uncapped_count(
    book: BookText, kind: str, config: ExampleConfig = ExampleConfig(), bounds: list[tuple[int, int]] | None = None
) -> int:
    """How many boundaries of `kind` give the book an example with no per-book cap (what
    `--subset-per-book 0` draws): those with `n_negatives` later suffixes of the same kind
    that start after the gold's end and differ from it (`bounds` as for `positions`)."""
    found, ends = _suffixes(book, kind, config, bounds)
    same_text: dict[str, list[int]] = {}
    for q in found:
        same_text.setdefault(book.text[q : ends[q]], []).append(q)
    count = 0
    for p in found:
        twins = same_text[book.text[p : ends[p]]]
        later = len(found) - bisect.bisect_left(found, ends[p])
        later_twins = len(twins) - bisect.bisect_left(twins, ends[p])
        count += later - later_twins >= config.n_negatives
    return count


def subset_examples(
    book_id: str,
    source: str,
    chapters: list[BookChapter],
    kind: str,
    *,
    seed: int,
    config: ExampleConfig = ExampleConfig(),
    book: BookText | None = None,
) -> list[dict]:
    """Example rows of one subset ("cause" or "dialogue") for one book (may be empty)."""
    book = book or BookText(chapters, config.tokenizer)
    found, ends = _suffixes(book, kind, config)

    def later(p: int) -> list[int]:
        return found[bisect.bisect_left(found, ends[p]) :]

    usable = [p for p in found if len(later(p)) >= config.n_negatives]
    cap = per_book_cap(config.subset_per_book, source, kind)
    if cap and len(usable) > cap:
        usable = sorted(rng_for(seed, book_id, kind, "pick").sample(usable, cap))
    book.index.tails([(0, p, n) for p in usable for n in config.prefix_lengths])  # one batch
    rows = []
    for p in usable:
        gold = book.text[p : ends[p]]
        pool = [q for q in later(p) if book.text[q : ends[q]] != gold]
        if len(pool) < config.n_negatives:
            continue
        drawn = [
            Negative(book_id, book.chapter_at(q), book.text[q : ends[q]])
            for q in rng_for(seed, book_id, kind, p).sample(pool, config.n_negatives)
        ]
        rows.extend(example_rows(book, book_id, source, kind, book.chapter_at(p), p, gold, drawn, seed, config))
    return rows
