"""Token offsets of one long book text, for many left-cut prefixes without re-tokenising.

ChapterBreak (paper section 2) cuts every prefix to at most N tokens (N up to 8K) from the
left; a book has one prefix per boundary and length, so the book is tokenised once
(`annotators.text.tokenizers`) and each cut is two binary searches.
"""
from __future__ import annotations

import bisect

from annotators.text.tokenizers import SpanTokenizer


class TokenIndex:
    """Token start/end offsets of one text; `tail_start` finds where a <= n-token prefix starts."""

    def __init__(self, tokenizer: SpanTokenizer, text: str):
        spans = tokenizer.spans(text)
        self.starts = [s for s, _ in spans]
        self.ends = [e for _, e in spans]

    def tokens_before(self, end: int) -> int:
        """Number of tokens that end at or before character offset `end`."""
        return bisect.bisect_right(self.ends, end)

    def tail_start(self, begin: int, end: int, n: int) -> tuple[int, int]:
        """(start offset, token count) of the longest <= n-token suffix of text[begin:end]."""
        last = self.tokens_before(end)
        first = bisect.bisect_left(self.starts, begin)
        count = min(n, max(0, last - first))
        if count == 0:
            return end, 0
        return self.starts[last - count], count
