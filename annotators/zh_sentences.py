"""Chinese sentence splitting (SPEC "LOT"; LOT's own repo has none, PEERS.md 1.1).

A sentence ends after a run of 。！？；… and any closing quotes/brackets that follow.
A terminator inside a “…” quotation does not end the sentence when the quotation closes
later in the same paragraph (so 他说：“好。走吧！”然后 stays one sentence); an unclosed
quote never swallows the rest of a story. Newlines always end a sentence. A sentence with
fewer than `min_han` Chinese characters is merged into its previous neighbour (the first
one into its next), until none is short or one sentence is left.
"""
from __future__ import annotations

from annotators.zh_clean import han_count

TERMINATORS = "。！？；…!?;"
CLOSERS = "”’」』）)】》\"'"
_OPEN_QUOTES = {"“": "”", "「": "」", "『": "』"}


def _raw_pieces(paragraph: str) -> list[str]:
    """Split one paragraph at terminator runs, honouring closed quotations."""
    pieces: list[str] = []
    start, i, n = 0, 0, len(paragraph)
    open_stack: list[str] = []
    while i < n:
        ch = paragraph[i]
        if ch in _OPEN_QUOTES and paragraph.find(_OPEN_QUOTES[ch], i + 1) != -1:
            open_stack.append(_OPEN_QUOTES[ch])
        elif open_stack and ch == open_stack[-1]:
            open_stack.pop()
        if ch in TERMINATORS:
            j = i + 1
            while j < n and paragraph[j] in TERMINATORS:
                j += 1
            if not open_stack:
                while j < n and paragraph[j] in CLOSERS:
                    j += 1
                pieces.append(paragraph[start:j])
                start = j
            i = j
            continue
        i += 1
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


def split_paragraph_sentences(text: str, *, min_han: int = 10) -> list[list[str]]:
    """Sentences grouped by paragraph (newline-separated), short ones merged per paragraph."""
    groups = [_raw_pieces(p) for p in text.split("\n")]
    return [merge_short(g, min_han) if min_han > 0 else g for g in groups if g]
