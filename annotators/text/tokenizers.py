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
- `hf:PATH`: the evaluated model's own tokenizer, a Hugging Face `tokenizer.json` (the file or
  a folder holding one), read offline with the `tokenizers` library (annotators.text.hf).
- `gpt2:DIR`: an alias of `hf:` on GPT-2's own `vocab.json` + `merges.txt` in DIR, built with
  the same library (the same tokenizer, and name, as the converted `tokenizer.json`).

`head`/`tail` cut through annotators.text.cuts: a subword tokenizer's cut is re-encoded on its
own and holds at most the asked tokens (exactly that many wherever a cut can).
"""

from __future__ import annotations

import functools
import itertools
import re
from typing import Protocol

from annotators.text.cuts import Cut, Offsets, fit_heads, fit_tails

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
    context_free = True  # a cut at token offsets re-tokenises to the same tokens (annotators.text.cuts)

    def spans(self, text: str) -> list[tuple[int, int]]:
        raise NotImplementedError

    def tokens(self, text: str) -> list[str]:
        return [text[s:e] for s, e in self.spans(text)]

    def count(self, text: str) -> int:
        return len(self.spans(text))

    def counts(self, texts: list[str]) -> list[int]:
        return [self.count(t) for t in texts]

    def tokens_many(self, texts: list[str]) -> list[list[str]]:
        return [self.tokens(t) for t in texts]

    def window_spans(self, text: str, n: int) -> list[tuple[int, int]]:
        """Spans of enough of `text`'s start to find its first `n` tokens (here: all of it)."""
        return self.spans(text)

    def head(self, text: str, n: int) -> str:
        """The shortest prefix of `text` holding its first `n` tokens (all of it if fewer);
        for a subword tokenizer, the longest prefix at a token end that holds at most `n`."""
        return self.head_counted(text, n)[0]

    def head_counted(self, text: str, n: int) -> tuple[str, int]:
        """(`head(text, n)`, its own token count): fewer than `n` where `text` is shorter, or
        where a subword tokenizer's count jumps past `n` at one character (annotators.text.cuts)."""
        end, count = fit_heads(self, [Cut(text, Offsets.of(self.window_spans(text, n)), 0, n)])[0]
        return text[:end], count

    def tail(self, text: str, n: int) -> str:
        """The shortest suffix of `text` holding its last `n` tokens (all of it if fewer);
        for a subword tokenizer, the longest suffix at a token start that holds at most `n`."""
        start, _ = fit_tails(self, [Cut(text, Offsets.of(self.spans(text)), len(text), n)])[0]
        return text[start:]


class RegexTokenizer(SpanTokenizer):
    """Tokens are the matches of one regular expression."""

    def __init__(self, name: str, pattern: str):
        self.name, self.pattern = name, pattern
        self._re = re.compile(pattern)

    def spans(self, text: str) -> list[tuple[int, int]]:
        return [m.span() for m in self._re.finditer(text)]

    def window_spans(self, text: str, n: int) -> list[tuple[int, int]]:
        """The spans of the first `n + 2` tokens (all when fewer): a regular expression's
        matches come left to right, the same as the whole text's, so a chapter's head reads
        only its start (ChapterBreak cuts a suffix of every later chapter at every boundary)."""
        return [m.span() for m in itertools.islice(self._re.finditer(text), n + 2)]

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
    if spec.startswith(("hf:", "gpt2:")):
        from annotators.text import hf

        kind, path = spec.split(":", 1)
        if not path:
            raise ValueError(f"{kind}: needs a path ({kind}:PATH)")
        return hf.load_hf(path) if kind == "hf" else hf.load_gpt2(path)
    known = sorted(PATTERNS) + ["jieba", "jieba_nohmm", "hf:PATH", "gpt2:DIR"]
    raise ValueError(f"unknown tokenizer {spec!r}; known: {known}")
