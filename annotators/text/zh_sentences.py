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
    return _merge_short_flagged(sentences, [False] * len(sentences), min_han)[0]


def split_sentences(text: str, *, min_han: int = 10) -> list[str]:
    """Sentences of `text` in order; "".join(result) == text with newlines removed."""
    return split_paragraph_sentences(text, min_han=min_han)[0]


def split_paragraph_sentences(text: str, *, min_han: int = 10) -> tuple[list[str], tuple[int, ...]]:
    """(`split_sentences(text)`, the indices of the sentences after the first that begin a
    paragraph of `text`). A short sentence merged into its previous neighbour across a line
    break takes that neighbour's paragraph, so the break disappears with it."""
    pieces: list[str] = []
    starts: list[bool] = []
    for paragraph in text.split("\n"):
        raw = _raw_pieces(paragraph)
        pieces.extend(raw)
        starts.extend([True] + [False] * (len(raw) - 1) if raw else [])
    if min_han > 0:
        pieces, starts = _merge_short_flagged(pieces, starts, min_han)
    return pieces, tuple(i for i, start in enumerate(starts) if start and i > 0)


def _merge_short_flagged(sentences: list[str], starts: list[bool], min_han: int) -> tuple[list[str], list[bool]]:
    """Merge sentences with fewer than `min_han` Han characters into their previous neighbour
    (the first into its next), carrying each sentence's paragraph-start flag (the kept
    neighbour's)."""
    out, flags = list(sentences), list(starts)
    i = 0
    while len(out) > 1 and i < len(out):
        if han_count(out[i]) >= min_han:
            i += 1
            continue
        if i == 0:
            out[0:2], flags[0:2] = [out[0] + out[1]], [flags[0]]
        else:
            out[i - 1 : i + 1], flags[i - 1 : i + 1] = [out[i - 1] + out[i]], [flags[i - 1]]
            i -= 1
    return out, flags
