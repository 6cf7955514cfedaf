"""The tokenizer flag of the storium job, a thin layer over annotators.text.tokenizers.

`regex` (default): `word_punct_runs`, runs of word characters or runs of other non-space
characters, the word-and-punctuation split of storium-gpt2's edit analysis (PEERS.md 4.4),
written to rows and cards under its historical name `regex:\\w+|[^\\w\\s]+`. `hf:PATH`: the
evaluated model's own tokenizer, a Hugging Face `tokenizer.json` (file or folder) read offline
(annotators.text.hf); `gpt2:DIR` builds GPT-2's byte-level BPE from its `vocab.json` +
`merges.txt`, the original model's (paper section 3.1); nothing is downloaded.
"""

from __future__ import annotations

import functools

from annotators.text import tokenizers
from annotators.text.tokenizers import PATTERNS, SpanTokenizer, Tokenizer

__all__ = ["RegexTokenizer", "Tokenizer", "make_tokenizer"]


class RegexTokenizer(tokenizers.RegexTokenizer):
    """`word_punct_runs` (or another pattern) named `regex:<pattern>`, as STORIUM rows say."""

    def __init__(self, pattern: str = PATTERNS["word_punct_runs"]):
        super().__init__(f"regex:{pattern}", pattern)


@functools.lru_cache(maxsize=8)
def make_tokenizer(spec: str = "regex") -> SpanTokenizer:
    """'regex', 'hf:PATH' or 'gpt2:DIR'; cached per worker process. ValueError says what is wrong."""
    if spec == "regex":
        return RegexTokenizer()
    if spec.startswith(("hf:", "gpt2:")):
        return tokenizers.get_tokenizer(spec)
    raise ValueError(f"unknown tokenizer {spec!r} (use 'regex', 'hf:PATH' or 'gpt2:DIR')")
