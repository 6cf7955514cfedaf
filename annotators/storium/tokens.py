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

_WORD_PUNCT = r"\w+|[^\w\s]+"
_GPT2_PRETOKEN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


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


@functools.lru_cache(maxsize=1)
def _byte_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character table."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars, extra = list(keep), 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + extra)
            extra += 1
    return dict(zip(keep, map(chr, chars)))


class Gpt2Tokenizer:
    """Byte-level BPE from local GPT-2 vocabulary files (ranked merges applied greedily)."""

    def __init__(self, folder: str):
        vocab, merges = _gpt2_files(folder)
        with open(vocab, encoding="utf-8") as f:
            self.vocab = json.load(f)
        with open(merges, encoding="utf-8") as f:
            lines = [ln.split() for ln in f.read().splitlines() if ln and not ln.startswith("#version")]
        self.ranks = {tuple(pair): i for i, pair in enumerate(lines) if len(pair) == 2}
        self.name = f"gpt2-bpe:{os.path.basename(os.path.normpath(folder))}"
        import regex  # installed with spaCy's dependencies; needed for \p{L}

        self._re = regex.compile(_GPT2_PRETOKEN)

    @functools.lru_cache(maxsize=65536)
    def bpe(self, word: str) -> tuple[str, ...]:
        parts = list(word)
        while len(parts) > 1:
            pairs = [(self.ranks.get((a, b), len(self.ranks)), i) for i, (a, b) in enumerate(zip(parts, parts[1:]))]
            rank, i = min(pairs)
            if rank == len(self.ranks):
                break
            parts[i:i + 2] = [parts[i] + parts[i + 1]]
        return tuple(parts)

    def spans(self, text: str) -> list[tuple[int, int]]:
        table, out = _byte_to_unicode(), []
        for m in self._re.finditer(text):
            owner = [ci for ci, ch in enumerate(m.group(), start=m.start()) for _ in ch.encode("utf-8")]
            mapped = "".join(table[b] for b in m.group().encode("utf-8"))
            pos = 0
            for piece in self.bpe(mapped):
                out.append((owner[pos], owner[pos + len(piece) - 1] + 1))
                pos += len(piece)
        return out


def _gpt2_files(folder: str) -> tuple[str, str]:
    for vocab, merges in (("vocab.json", "merges.txt"), ("encoder.json", "vocab.bpe")):
        v, m = os.path.join(folder, vocab), os.path.join(folder, merges)
        if os.path.isfile(v) and os.path.isfile(m):
            return v, m
    raise FileNotFoundError(f"no GPT-2 vocabulary (vocab.json + merges.txt) in {folder!r}")


@functools.lru_cache(maxsize=8)
def make_tokenizer(spec: str = "regex") -> Tokenizer:
    """'regex' or 'gpt2:/path/to/folder'; cached per worker process."""
    if spec == "regex":
        return RegexTokenizer()
    if spec.startswith("gpt2:"):
        return Gpt2Tokenizer(spec[len("gpt2:"):])
    raise ValueError(f"unknown tokenizer {spec!r} (use 'regex' or 'gpt2:DIR')")
