"""Paired Chinese discourse markers for the bias baseline of LOT section 5.5 (Table 13).

LOT: "if 'because' occurs in the last sentence before the position of the candidates, this
baseline will choose the candidate that contains 'so'"; in Chinese such markers come in
pairs. A marker matches when it is a whole jieba token of the sentence (so 就 does not
match inside 成就); every marker below is kept whole by jieba's dictionary.
"""

from __future__ import annotations

from collections.abc import Sequence

# 24 pairs (first marker, second marker), LOT 5.5 "We manually define 24 marker pairs".
MARKER_PAIRS: tuple[tuple[str, str], ...] = (
    ("因为", "所以"),
    ("由于", "因此"),
    ("虽然", "但是"),
    ("虽然", "可是"),
    ("尽管", "但是"),
    ("尽管", "还是"),
    ("如果", "就"),
    ("如果", "那么"),
    ("假如", "就"),
    ("要是", "就"),
    ("即使", "也"),
    ("哪怕", "也"),
    ("既然", "就"),
    ("不但", "而且"),
    ("不仅", "而且"),
    ("不仅", "还"),
    ("只要", "就"),
    ("只有", "才"),
    ("除非", "才"),
    ("无论", "都"),
    ("不管", "都"),
    ("一边", "一边"),
    ("首先", "然后"),
    ("一旦", "就"),
)


def completes_pair(
    before: Sequence[str], middle: Sequence[str], after: Sequence[str], pairs: Sequence[tuple[str, str]] = MARKER_PAIRS
) -> bool:
    """True when `middle` (token list) closes a pair opened in `before` or opens one that
    `after` closes."""
    b, m, a = set(before), set(middle), set(after)
    return any((first in b and second in m) or (first in m and second in a) for first, second in pairs)
