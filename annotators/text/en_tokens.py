"""Named English tokenizers that count ChapterBreak's prefix and suffix lengths.

ChapterBreak (paper section 2) measures prefixes (up to 8K) and suffixes (128) in tokens but
never names the tokenizer (reference/PEERS.md 2.3). storybench counts with a named,
dependency-free regex tokenizer and records the name in every example row and the card.
Cutting is by character offsets of tokens, so the original text (spacing, line breaks) is
kept verbatim: `head(text, n)` is a prefix of `text`, `tail(text, n)` a suffix.
"""
from __future__ import annotations

import bisect
import dataclasses
import re

# name -> pattern. "words_punct_v1": runs of word characters (with inner apostrophes, so
# "don't" is one token) and every other non-space character alone.
PATTERNS = {
    "words_punct_v1": r"\w+(?:['\u2019]\w+)*|[^\w\s]",
    "whitespace_v1": r"\S+",
}
DEFAULT_TOKENIZER = "words_punct_v1"


@dataclasses.dataclass(frozen=True)
class Tokenizer:
    """A regex tokenizer identified by `name` (the name goes into every output row)."""

    name: str
    pattern: str

    def spans(self, text: str) -> list[tuple[int, int]]:
        return [m.span() for m in re.finditer(self.pattern, text)]

    def count(self, text: str) -> int:
        return sum(1 for _ in re.finditer(self.pattern, text))

    def head(self, text: str, n: int) -> str:
        """The shortest prefix of `text` holding its first `n` tokens (all of it if fewer)."""
        end = 0
        for i, m in enumerate(re.finditer(self.pattern, text)):
            if i == n:
                break
            end = m.end()
        return text[:end]

    def tail(self, text: str, n: int) -> str:
        """The shortest suffix of `text` holding its last `n` tokens (all of it if fewer)."""
        starts = [m.start() for m in re.finditer(self.pattern, text)]
        if len(starts) <= n:
            return text[starts[0]:] if starts else ""
        return text[starts[len(starts) - n]:]


def get_tokenizer(name: str = DEFAULT_TOKENIZER) -> Tokenizer:
    if name not in PATTERNS:
        raise ValueError(f"unknown tokenizer {name!r}; known: {sorted(PATTERNS)}")
    return Tokenizer(name, PATTERNS[name])


class TokenIndex:
    """Token start/end offsets of one long text, for many left-cuts without re-tokenising.

    A book is tokenised once; `tail_start(end, n)` gives where a prefix ending at character
    `end` must start to hold at most `n` tokens (prefix = text[start:end]).
    """

    def __init__(self, tokenizer: Tokenizer, text: str):
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
