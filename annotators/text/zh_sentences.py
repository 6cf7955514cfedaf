"""Chinese sentence splitting (SPEC "LOT"; LOT's own repo has none, PEERS.md 1.1).

A sentence ends after a run of 。！？；… and any closing quotes/brackets that follow
(so 他说：“好。”然后… splits after ”). Terminators inside a quotation end sentences too:
quote-aware splitting was tried and let one unbalanced “ swallow whole real LOT stories.
Newlines always end a sentence and a paragraph. A sentence with fewer than `min_han`
Chinese characters is merged into its previous neighbour in its paragraph (a paragraph's
first into its next), until none is short or the paragraph is one sentence: a merge never
crosses a paragraph break, so a paragraph that is one short sentence (“好。”) stays a
sentence of its own and every break of the text is a sentence boundary.
"""

from __future__ import annotations

import re

from annotators.text.zh_clean import han_count

TERMINATORS = "。！？；…!?;"
CLOSERS = "”’」』）)】》\"'"


# a piece: everything up to a run of terminators and the closers that follow it, or the rest
_PIECE = re.compile(
    "[^{t}]*[{t}]+[{c}]*|[^{t}]+\\Z".format(t="".join(map(re.escape, TERMINATORS)), c="".join(map(re.escape, CLOSERS))),
    re.S,
)


def _raw_pieces(paragraph: str) -> list[str]:
    """Split one paragraph after each run of terminators and the closers that follow it."""
    return [p for p in _PIECE.findall(paragraph) if not p.isspace()]


def merge_short(sentences: list[str], min_han: int = 10) -> list[str]:
    """Merge the sentences of one paragraph that have fewer than `min_han` Han characters
    into their previous neighbour (the first into its next), until none is short or one
    sentence is left.

    One pass with a stack, in linear time (issue 28: merging in place copied the list and the
    growing sentence at every merge, quadratic on a long paragraph of short pieces). Every
    sentence kept before the newest one has `min_han` or more, so a short sentence joins the
    newest kept one; a short first sentence takes the ones after it until it is long enough."""
    parts: list[list[str]] = []
    han: list[int] = []
    for sentence in sentences:
        count = han_count(sentence)
        if parts and (han[-1] < min_han or count < min_han):
            parts[-1].append(sentence)
            han[-1] += count
        else:
            parts.append([sentence])
            han.append(count)
    return ["".join(p) for p in parts]


def split_sentences(text: str, *, min_han: int = 10) -> list[str]:
    """Sentences of `text` in order; "".join(result) == text with newlines removed."""
    return split_paragraph_sentences(text, min_han=min_han)[0]


def split_paragraph_sentences(text: str, *, min_han: int = 10) -> tuple[list[str], tuple[int, ...]]:
    """(`split_sentences(text)`, the indices of the sentences after the first that begin a
    paragraph of `text`). Short sentences merge within their paragraph only, so every
    paragraph of the text (a line holding a sentence) begins a sentence."""
    sentences: list[str] = []
    breaks: list[int] = []
    for paragraph in text.split("\n"):
        raw = _raw_pieces(paragraph)
        if not raw:
            continue
        if sentences:
            breaks.append(len(sentences))
        sentences.extend(merge_short(raw, min_han) if min_han > 0 else raw)
    return sentences, tuple(breaks)
