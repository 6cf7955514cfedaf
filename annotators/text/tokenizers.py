"""The one tokenizer interface every job uses, and the named tokenizers behind it.

A tokenizer has a `name` (written into rows and cards) and `spans(text)`, the character
offsets of its tokens; `tokens`, `count`, `head` and `tail` follow from the spans, so cutting
by tokens keeps the original text verbatim (`head(text, n)` is a prefix of `text`).

Named tokenizers (`get_tokenizer(spec)`):
- `words_punct_v1`: word runs (inner apostrophes kept: "don't") and each other non-space
  character alone; ChapterBreak's default length unit.
- `word_punct_chars`: word runs and each other non-space character alone (overlap audit).
- `word_punct_runs`: word runs and runs of other non-space characters (STORIUM's default).
- `whitespace_v1`: maximal non-space runs (the same tokens as `str.split()`).
- `jieba`, `jieba_nohmm`: jieba precise mode with HMM on / off, whitespace tokens dropped.
- `gpt2:DIR`: byte-level BPE from a local GPT-2/RoBERTa `vocab.json` + `merges.txt`.
"""
from __future__ import annotations

import functools
import re
from typing import Protocol

PATTERNS = {
    "words_punct_v1": r"\w+(?:['\u2019]\w+)*|[^\w\s]",
    "word_punct_chars": r"\w+|[^\w\s]",
    "word_punct_runs": r"\w+|[^\w\s]+",
    "whitespace_v1": r"\S+",
}


class Tokenizer(Protocol):
    name: str

    def spans(self, text: str) -> list[tuple[int, int]]: ...


class SpanTokenizer:
    """What every tokenizer derives from its spans: tokens, counts and token-bounded cuts."""

    name = "spans"

    def spans(self, text: str) -> list[tuple[int, int]]:
        raise NotImplementedError

    def tokens(self, text: str) -> list[str]:
        return [text[s:e] for s, e in self.spans(text)]

    def count(self, text: str) -> int:
        return len(self.spans(text))

    def head(self, text: str, n: int) -> str:
        """The shortest prefix of `text` holding its first `n` tokens (all of it if fewer)."""
        spans = self.spans(text)
        return text[:spans[min(n, len(spans)) - 1][1]] if spans and n > 0 else ""

    def tail(self, text: str, n: int) -> str:
        """The shortest suffix of `text` holding its last `n` tokens (all of it if fewer)."""
        spans = self.spans(text)
        if not spans or n <= 0:
            return ""
        return text[spans[max(0, len(spans) - n)][0]:]


class RegexTokenizer(SpanTokenizer):
    """Tokens are the matches of one regular expression."""

    def __init__(self, name: str, pattern: str):
        self.name, self.pattern = name, pattern
        self._re = re.compile(pattern)

    def spans(self, text: str) -> list[tuple[int, int]]:
        return [m.span() for m in self._re.finditer(text)]

    def tokens(self, text: str) -> list[str]:
        return [m.group() for m in self._re.finditer(text)]

    def count(self, text: str) -> int:
        return sum(1 for _ in self._re.finditer(text))


class JiebaTokenizer(SpanTokenizer):
    """jieba precise mode (HMM on or off), whitespace tokens dropped; loads once per process."""

    def __init__(self, hmm: bool = True):
        self.hmm = hmm
        self.name = "jieba" if hmm else "jieba_nohmm"

    def tokens(self, text: str) -> list[str]:
        from annotators.text.zh_tokens import load

        return [t for t in load().lcut(text, HMM=self.hmm) if t.strip()]

    def spans(self, text: str) -> list[tuple[int, int]]:
        from annotators.text.zh_tokens import load

        return [(s, e) for t, s, e in load().tokenize(text, HMM=self.hmm) if t.strip()]


@functools.lru_cache(maxsize=16)
def get_tokenizer(spec: str) -> SpanTokenizer:
    """A named tokenizer (see the module docstring), cached per process."""
    if spec in PATTERNS:
        return RegexTokenizer(spec, PATTERNS[spec])
    if spec in ("jieba", "jieba_nohmm"):
        return JiebaTokenizer(hmm=spec == "jieba")
    if spec.startswith("gpt2:"):
        from annotators.text.bpe import Gpt2Tokenizer

        return Gpt2Tokenizer(spec[len("gpt2:"):])
    known = sorted(PATTERNS) + ["jieba", "jieba_nohmm", "gpt2:DIR"]
    raise ValueError(f"unknown tokenizer {spec!r}; known: {known}")
