"""Token-bounded cuts that hold what they say when the cut text is tokenised on its own.

A head is `text[at:end]`, a tail `text[start:at]`, ending or starting at token offsets, so the
text is kept verbatim. For a context-free tokenizer (the regular expressions: a cut at token
offsets re-tokenises to the same tokens) the offsets decide alone. A subword tokenizer
(annotators.text.hf) can tokenise the cut text differently from the whole (a word cut between
two of its pieces, a space it prepends, the byte pieces of one character), so each cut is
encoded on its own, all first guesses in one batch, and moved by whole tokens until it holds
at most `n` tokens; one that holds fewer is widened while it still holds at most `n`. The
count returned is the cut text's own: a head of a text with `n` or more tokens holds exactly
`n` unless no cut does, where the count jumps past `n` at one character (a character of
several byte tokens; a blank line that a byte-level BPE splits before a word but keeps as one
token at the end of a text).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from typing import NamedTuple

SLACK = 64  # tokens a verified cut may move past its first guess
EDGE = 16  # tokens before a tail's end encoded on their own to improve its first guess


class Offsets(NamedTuple):
    """Token start and end offsets of one text (nondecreasing, as tokenizers give them)."""

    starts: list[int]
    ends: list[int]

    @classmethod
    def of(cls, spans: Sequence[tuple[int, int]]) -> Offsets:
        return cls([s for s, _ in spans], [e for _, e in spans])


class Cut(NamedTuple):
    """The first `n` tokens of `text` from `at` (a head) or the last `n` before `at` and from
    `floor` on (a tail), given the whole text's token `offsets`."""

    text: str
    offsets: Offsets
    at: int
    n: int
    floor: int = 0


_BLANK_TO_END = re.compile(r"\s*\Z")


def holds_exactly(text: str, end: int, count: int, n: int) -> bool:
    """Whether a head of `text` ending at `end`, of `count` tokens (at most `n`), holds exactly
    `n`, or all that is left of `text` but whitespace (a shorter chapter, the book's end).
    False only where the count jumps past `n` at one character, so that no verbatim cut holds
    `n`."""
    return count == n or (count <= n and _BLANK_TO_END.match(text, end) is not None)


def fit_heads(tok, cuts: Sequence[Cut]) -> list[tuple[int, int]]:
    """(end, token count of text[at:end]) per cut: the longest head found holding <= n tokens."""
    if getattr(tok, "context_free", True):
        return [_free_head(c) for c in cuts]
    return _fit(tok, cuts, [_head_choices(c) for c in cuts], lambda c, pos: c.text[c.at : pos], longer=1)


def fit_tails(tok, cuts: Sequence[Cut]) -> list[tuple[int, int]]:
    """(start, token count of text[start:at]) per cut: the longest tail found holding <= n tokens."""
    if getattr(tok, "context_free", True):
        return [_free_tail(c) for c in cuts]
    return _fit(tok, cuts, [_tail_choices(c) for c in cuts], lambda c, pos: c.text[pos : c.at], longer=-1)


def _free_head(cut: Cut) -> tuple[int, int]:
    starts, ends = cut.offsets
    first = bisect.bisect_left(starts, cut.at)
    k = max(0, min(cut.n, len(ends) - first))
    return (ends[first + k - 1], k) if k else (cut.at, 0)


def _free_tail(cut: Cut) -> tuple[int, int]:
    starts, ends = cut.offsets
    last, first = bisect.bisect_right(ends, cut.at), bisect.bisect_left(starts, cut.floor)
    k = max(0, min(cut.n, last - first))
    return (starts[last - k], k) if k else (cut.at, 0)


def _head_choices(cut: Cut) -> tuple[list[int], int]:
    """Distinct token ends after `at` near the guess, and the guess's index among them: the
    end of the `n`th token that ends after `at`."""
    ends = cut.offsets.ends
    first = bisect.bisect_right(ends, cut.at)
    near = ends[first : first + cut.n + SLACK]
    if not near or cut.n <= 0:
        return [], -1
    choices = sorted(set(near))
    return choices, bisect.bisect_left(choices, near[min(cut.n, len(near)) - 1])


def _tail_choices(cut: Cut) -> tuple[list[int], int]:
    """Distinct token starts in [floor, at) of tokens ending by `at`, near the guess, and the
    guess's index among them: the start of the `n`th such token from the end."""
    starts, ends = cut.offsets
    last = bisect.bisect_right(ends, cut.at)
    first = max(bisect.bisect_left(starts, cut.floor), last - cut.n - SLACK)
    near = [s for s in starts[first:last] if cut.floor <= s < cut.at]
    if not near or cut.n <= 0:
        return [], -1
    choices = sorted(set(near))
    return choices, bisect.bisect_left(choices, near[max(0, len(near) - cut.n)])


def _fit(tok, cuts, found, piece, longer: int) -> list[tuple[int, int]]:
    """Count every first guess in one batch, then move the cuts that miss by one token per
    round, each round one batch: a cut over `n` shrinks until it holds at most `n`; a cut
    short of `n` widens while the wider cut still holds at most `n`."""
    found = _shift_guesses(tok, cuts, found, longer)
    moves = {i: _Move(k) for i, (choices, k) in enumerate(found) if choices}
    tries = {i: move.k for i, move in moves.items()}
    while tries:
        counted = tok.counts([piece(cuts[i], found[i][0][k]) for i, k in tries.items()])
        tries = {
            i: nxt
            for (i, k), count in zip(tries.items(), counted)
            if (nxt := moves[i].take(k, count, cuts[i].n, longer, len(found[i][0]))) is not None
        }
    out = []
    for i, cut in enumerate(cuts):
        move = moves.get(i)
        ok = move is not None and move.count is not None and move.count <= cut.n
        out.append((found[i][0][move.k], move.count) if ok else (cut.at, 0))
    return out


def _shift_guesses(tok, cuts, found, longer: int) -> list[tuple[list[int], int]]:
    """Tails' first guesses moved by what cutting at `at` does to the count: the last EDGE
    tokens before `at` are encoded on their own, in one batch, and compared with the whole
    text's (two newlines the whole text splits before a word are one token at a cut's end).
    Heads keep their guesses: most already hold exactly `n`."""
    if longer > 0:
        return found
    windows = {}
    for i, ((choices, _), cut) in enumerate(zip(found, cuts)):
        starts, ends = cut.offsets
        last = bisect.bisect_right(ends, cut.at)
        if choices and cut.at < len(cut.text) and last >= EDGE and starts[last - EDGE] >= cut.floor:
            windows[i] = cut.text[starts[last - EDGE] : cut.at]
    out = list(found)
    for i, count in zip(windows, tok.counts(list(windows.values()))):
        choices, k = found[i]
        out[i] = (choices, min(max(k + count - EDGE, 0), len(choices) - 1))  # more tokens: a later start
    return out


class _Move:
    """Where one cut stands: its index among the choices, what it holds, and the mode
    (guess, then shrink or widen)."""

    def __init__(self, k: int):
        self.k, self.count, self.mode = k, None, "guess"

    def take(self, k: int, count: int, n: int, longer: int, size: int) -> int | None:
        """Take a counted try; the next index to try, or None when the cut is settled."""
        if self.mode == "widen" and count > n:
            return None  # the wider cut holds too many: keep the last one
        self.k, self.count = k, count
        if self.mode == "guess":
            self.mode = "shrink" if count > n else "widen"
        nxt = k - longer if count > n else k + longer if count < n and self.mode == "widen" else None
        return nxt if nxt is not None and 0 <= nxt < size else None
