"""Byte-level BPE over the user's own GPT-2 or RoBERTa files, with character spans.

`vocab.json` + `merges.txt` (or OpenAI's `encoder.json` + `vocab.bpe`) in a local folder, as
the original models used; nothing is downloaded. A BPE piece that splits a multi-byte
character is widened to the whole character, so a cut never breaks a character.
"""
from __future__ import annotations

import functools
import json
import os

from annotators.text.tokenizers import SpanTokenizer

_GPT2_PRETOKEN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


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


class Gpt2Tokenizer(SpanTokenizer):
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
