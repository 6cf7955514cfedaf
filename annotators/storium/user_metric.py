"""The USER edit metric and ROUGE-L over the same tokens (paper section 4.2 and appendix C).

Definition (PEERS.md 4.4, made exact): tokens are the text lower-cased, every character
outside a-z and 0-9 replaced by a space, split on whitespace. Generated tokens are aligned
against published tokens with `difflib.SequenceMatcher(None, gen, pub, autojunk=False)`;
every "equal" block holding at least one token outside spaCy's English stop words adds its
whole length to `matched`. P = matched/len(gen), R = matched/len(pub), F1 = 2PR/(P+R), each
0 when undefined. `autojunk=True` reproduces the original frontend (`--storium-compat`),
whose junk heuristic ignores tokens over 1% of a published text of 200+ tokens.
"""
from __future__ import annotations

import dataclasses
import difflib
import re
from typing import Sequence

from spacy.lang.en.stop_words import STOP_WORDS

from annotators.core.metrics import prf

_NON_ALNUM = re.compile(r"[^a-z0-9]")


@dataclasses.dataclass(frozen=True)
class UserConfig:
    autojunk: bool = dataclasses.field(default=False, metadata={
        "help": "difflib autojunk heuristic; the original frontend used True (PEERS.md 4.4)"})
    stop_words: frozenset = dataclasses.field(default=frozenset(STOP_WORDS), metadata={
        "help": "blocks made only of these tokens do not count (spaCy's English list)"})


@dataclasses.dataclass(frozen=True)
class Scores:
    precision: float
    recall: float
    f1: float


def user_tokens(text: str) -> list[str]:
    """py-rouge style preprocessing: lower-case, non [a-z0-9] -> space, split."""
    return _NON_ALNUM.sub(" ", text.lower()).split()


def matched_blocks(gen: Sequence[str], pub: Sequence[str],
                   config: UserConfig = UserConfig()) -> list[tuple[int, int]]:
    """(start in gen, length) of every aligned block that counts as a USER match."""
    matcher = difflib.SequenceMatcher(None, list(gen), list(pub), autojunk=config.autojunk)
    kept = []
    for tag, i1, i2, _j1, _j2 in matcher.get_opcodes():
        if tag == "equal" and any(t not in config.stop_words for t in gen[i1:i2]):
            kept.append((i1, i2 - i1))
    return kept


def user_scores(generated: str, published: str, config: UserConfig = UserConfig()) -> Scores:
    """USER precision (the paper's headline number), recall and F1 for one edit."""
    gen, pub = user_tokens(generated), user_tokens(published)
    matched = sum(n for _, n in matched_blocks(gen, pub, config))
    return Scores(*prf(matched, len(gen), len(pub)))


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Longest common subsequence length, O(len(a)*len(b)) time and O(len(b)) memory."""
    if len(a) < len(b):
        a, b = b, a
    row = [0] * (len(b) + 1)
    for x in a:
        prev_diag = 0
        for j, y in enumerate(b, start=1):
            above = row[j]
            row[j] = prev_diag + 1 if x == y else max(row[j], row[j - 1])
            prev_diag = above
    return row[-1]


def rouge_l_scores(generated: str, published: str) -> Scores:
    """ROUGE-L (LCS) on the USER tokens, no stop-word removal, F1 with alpha = 0.5."""
    gen, pub = user_tokens(generated), user_tokens(published)
    return Scores(*prf(lcs_length(gen, pub), len(gen), len(pub)))
