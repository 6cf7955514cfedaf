"""Tokenizers for context packing; each gives character spans so segments can be cut.

`regex` (default): runs of word characters or runs of other non-space characters, the
word-and-punctuation split of storium-gpt2's edit analysis (PEERS.md 4.4). `gpt2:DIR`: a
byte-level BPE over the user's own GPT-2 files in DIR (`vocab.json` + `merges.txt`, or
OpenAI's `encoder.json` + `vocab.bpe`), as the original model used (paper section 3.1);
nothing is downloaded. A BPE piece that splits a multi-byte character is widened to the
whole character, so a cut never breaks a character.
"""
from __future__ import annotations

import functools
import json
import os
import re
from typing import Protocol

from annotators.text.bpe import Gpt2Tokenizer, _byte_to_unicode, _gpt2_files  # noqa: F401

_WORD_PUNCT = r"\w+|[^\w\s]+"


class Tokenizer(Protocol):
    name: str

    def spans(self, text: str) -> list[tuple[int, int]]: ...


class RegexTokenizer:
    """Word-and-punctuation tokens; the default, needs no files."""

    def __init__(self, pattern: str = _WORD_PUNCT):
        self.name = f"regex:{pattern}"
        self._re = re.compile(pattern)

    def spans(self, text: str) -> list[tuple[int, int]]:
        return [m.span() for m in self._re.finditer(text)]


@functools.lru_cache(maxsize=8)
def make_tokenizer(spec: str = "regex") -> Tokenizer:
    """'regex' or 'gpt2:/path/to/folder'; cached per worker process."""
    if spec == "regex":
        return RegexTokenizer()
    if spec.startswith("gpt2:"):
        return Gpt2Tokenizer(spec[len("gpt2:"):])
    raise ValueError(f"unknown tokenizer {spec!r} (use 'regex' or 'gpt2:DIR')")
