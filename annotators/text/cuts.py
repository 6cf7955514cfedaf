"""Token-bounded cuts that hold what they say when the cut text is tokenised on its own.

A head is `text[at:end]`, a tail `text[start:at]`, ending or starting at token offsets, so the
text is kept verbatim. For a context-free tokenizer (the regular expressions: a cut at token
offsets re-tokenises to the same tokens) the offsets decide alone. A subword tokenizer
(annotators.text.hf) can tokenise the cut text differently from the whole (a word cut between
two of its pieces, a space it prepends, the byte pieces of one character), so each cut is
encoded on its own, all first guesses in one batch, and moved by whole tokens until it holds
at most `n` tokens; one that holds fewer is widened while it still holds at most `n`. The
count returned is the cut text's own: a head of a text with `n` or more tokens holds exactly
`n` unless no cut at a character boundary does (a character of several byte tokens across
the `n`th token).
"""
from __future__ import annotations

import bisect
from typing import NamedTuple, Sequence

SLACK = 64  # tokens a verified cut may move past its first guess


class Offsets(NamedTuple):
    """Token start and end offsets of one text (nondecreasing, as tokenizers give them)."""

    starts: list[int]
    ends: list[int]

    @classmethod
    def of(cls, spans: Sequence[tuple[int, int]]) -> "Offsets":
        return cls([s for s, _ in spans], [e for _, e in spans])


class Cut(NamedTuple):
    """The first `n` tokens of `text` from `at` (a head) or the last `n` before `at` and from
    `floor` on (a tail), given the whole text's token `offsets`."""

    text: str
    offsets: Offsets
    at: int
    n: int
    floor: int = 0


def fit_heads(tok, cuts: Sequence[Cut]) -> list[tuple[int, int]]:
    """(end, token count of text[at:end]) per cut: the longest head found holding <= n tokens."""
    if getattr(tok, "context_free", True):
        return [_free_head(c) for c in cuts]
    return _fit(tok, cuts, [_head_choices(c) for c in cuts], lambda c, pos: c.text[c.at:pos], longer=1)


def fit_tails(tok, cuts: Sequence[Cut]) -> list[tuple[int, int]]:
    """(start, token count of text[start:at]) per cut: the longest tail found holding <= n tokens."""
    if getattr(tok, "context_free", True):
        return [_free_tail(c) for c in cuts]
    return _fit(tok, cuts, [_tail_choices(c) for c in cuts], lambda c, pos: c.text[pos:c.at], longer=-1)


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
    near = ends[first:first + cut.n + SLACK]
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
    """Count every first guess in one batch, then move the few that miss by whole tokens."""
    todo = [i for i, (choices, _) in enumerate(found) if choices]
    guesses = tok.counts([piece(cuts[i], found[i][0][found[i][1]]) for i in todo])
    counts = dict(zip(todo, guesses))
    out = []
    for i, cut in enumerate(cuts):
        choices, k = found[i]
        settled = _settle(tok, cut, choices, k, counts[i], piece, longer) if choices else None
        out.append(settled or (cut.at, 0))
    return out


def _settle(tok, cut, choices, k, count, piece, longer):
    """From guess `k` (holding `count` tokens): shrink while over `n`, then, only when short of
    `n`, widen while the wider cut still holds at most `n`. None: no cut holds <= n tokens."""
    while count > cut.n:
        k -= longer
        if not 0 <= k < len(choices):
            return None
        count = tok.count(piece(cut, choices[k]))
    while count < cut.n and 0 <= k + longer < len(choices):
        wider = tok.count(piece(cut, choices[k + longer]))
        if wider > cut.n:
            break
        k, count = k + longer, wider
    return choices[k], count
