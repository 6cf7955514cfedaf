"""Deleting spaces next to wide characters in linear time (issue 28).

Patterns such as `(?<=[W])S+|S+(?=[W])` try every position of a run of S characters and
read to its end each time: a 64 KB run of spaces between ASCII letters took about a minute.
`delete_in_runs` applies such a pattern only to the runs of S that can hold a match (a W
character inside the run or right beside it), which gives exactly `pattern.sub("", text)`:
the pattern's matches are made of S characters and look one character around them, so a
run with no W in it or beside it never matches. Inside such a run every failed start is
followed by a match to the run's end, so the pattern reads the run a bounded number of times.
"""

from __future__ import annotations

import re


def delete_in_runs(pattern: re.Pattern, text: str, run: re.Pattern, wide: re.Pattern) -> str:
    """`pattern.sub("", text)` for a pattern of the form above; `run` finds maximal runs of
    S (`[S]+`), `wide` one W character (`[W]`)."""
    pieces, last, end = [], 0, len(text)
    for match in run.finditer(text):
        i, j = match.span()
        if not ((i and wide.match(text, i - 1)) or (j < end and wide.match(text, j)) or wide.search(text, i, j)):
            continue
        lo, hi = max(i - 1, 0), min(j + 1, end)
        kept = pattern.sub("", text[lo:hi])  # the neighbours are not S: they stay, at both ends
        pieces.append(text[last:i])
        pieces.append(kept[i - lo : len(kept) - (hi - j)])
        last = j
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def finditer_from_runs(here: re.Pattern, later: re.Pattern, text: str, pos: int = 0, endpos: int | None = None):
    """The matches `here.finditer(text, pos, endpos)` gives, in linear time, for a pattern
    that starts with a possessive run of some class C and can only match from a run's start:
    `later` is the same pattern behind `(?<![C])`. At each search position `here` is tried as
    it is (the position may be inside a run, just after a previous match); past it only the
    starts of runs can begin a match, since a later start in the same run reaches the same
    run end and fails at the same place. Matches are never empty."""
    endpos = len(text) if endpos is None else endpos
    while pos < endpos:
        match = here.match(text, pos, endpos) or later.search(text, pos + 1, endpos)
        if match is None:
            return
        yield match
        pos = match.end()
