"""Chinese sentence splitting (SPEC "LOT"; LOT's own repo has none, PEERS.md 1.1).

A sentence ends after a run of 。！？；… and any closing quotes/brackets that follow
(so 他说：“好。”然后… splits after ”). Terminators inside a quotation end sentences too:
quote-aware splitting was tried and let one unbalanced “ swallow whole real LOT stories.
Newlines always end a sentence. A sentence with
fewer than `min_han` Chinese characters is merged into its previous neighbour (the first
one into its next), until none is short or one sentence is left.
"""
from __future__ import annotations

from annotators.text.zh_clean import han_count

TERMINATORS = "。！？；…!?;"
CLOSERS = "”’」』）)】》\"'"


def _raw_pieces(paragraph: str) -> list[str]:
    """Split one paragraph after each run of terminators and the closers that follow it."""
    pieces: list[str] = []
    start, i, n = 0, 0, len(paragraph)
    while i < n:
        if paragraph[i] not in TERMINATORS:
            i += 1
            continue
        while i < n and paragraph[i] in TERMINATORS:
            i += 1
        while i < n and paragraph[i] in CLOSERS:
            i += 1
        pieces.append(paragraph[start:i])
        start = i
    if start < n:
        pieces.append(paragraph[start:])
    return [p for p in pieces if p.strip()]


def merge_short(sentences: list[str], min_han: int = 10) -> list[str]:
    """Merge sentences with fewer than `min_han` Han characters into a neighbour."""
    out = list(sentences)
    i = 0
    while len(out) > 1 and i < len(out):
        if han_count(out[i]) >= min_han:
            i += 1
            continue
        if i == 0:
            out[0:2] = [out[0] + out[1]]
        else:
            out[i - 1 : i + 1] = [out[i - 1] + out[i]]
            i -= 1
    return out


def split_sentences(text: str, *, min_han: int = 10) -> list[str]:
    """Sentences of `text` in order; "".join(result) == text with newlines removed."""
    pieces: list[str] = []
    for paragraph in text.split("\n"):
        pieces.extend(_raw_pieces(paragraph))
    return merge_short(pieces, min_han) if min_han > 0 else pieces
