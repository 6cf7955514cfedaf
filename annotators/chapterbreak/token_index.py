"""Token offsets of one long book text, for many left-cut prefixes without re-tokenising.

ChapterBreak (paper section 2) cuts every prefix to at most N tokens (N up to 8K) from the
left; a book has one prefix per boundary and length, so the book is tokenised once
(`annotators.text.tokenizers`) and each cut is two binary searches. With a subword tokenizer
(`hf:PATH`) each cut is then encoded on its own, many in one batch (annotators.text.cuts), so
a prefix or suffix holds at most N tokens of that tokenizer as a text of its own.
"""

from __future__ import annotations

from collections.abc import Iterable

from annotators.text.cuts import Cut, Offsets, fit_heads, fit_tails
from annotators.text.tokenizers import SpanTokenizer


class TokenIndex:
    """Token offsets of one text; `tail_start` finds where a <= n-token prefix starts,
    `head_counts` where <= n-token suffixes end; both remember what they found."""

    def __init__(self, tokenizer: SpanTokenizer, text: str):
        self.tok, self.text = tokenizer, text
        self.offsets = Offsets.of(tokenizer.spans(text))
        self.starts, self.ends = self.offsets
        self._tails: dict[tuple[int, int, int], tuple[int, int]] = {}
        self._heads: dict[tuple[int, int], tuple[int, int]] = {}

    def tails(self, wanted: Iterable[tuple[int, int, int]]) -> None:
        """Find (in one batch) the <= n-token prefixes text[start:end] for (begin, end, n)."""
        todo = sorted(set(wanted) - self._tails.keys())
        cuts = [Cut(self.text, self.offsets, end, n, floor=begin) for begin, end, n in todo]
        self._tails.update(zip(todo, fit_tails(self.tok, cuts)))

    def tail_start(self, begin: int, end: int, n: int) -> tuple[int, int]:
        """(start offset, token count) of the longest <= n-token suffix of text[begin:end]."""
        self.tails([(begin, end, n)])
        return self._tails[(begin, end, n)]

    def head_counts(self, begins: Iterable[int], n: int) -> dict[int, tuple[int, int]]:
        """{begin: (end, token count of text[begin:end])} of the <= n-token text[begin:end]
        that starts at each offset (end = begin when no token follows), found in one batch."""
        begins = list(begins)
        todo = sorted(set(begins) - {b for b, m in self._heads if m == n})
        cuts = [Cut(self.text, self.offsets, b, n) for b in todo]
        self._heads.update({(b, n): found for b, found in zip(todo, fit_heads(self.tok, cuts))})
        return {b: self._heads[(b, n)] for b in begins}
