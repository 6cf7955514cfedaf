"""The USER edit metric and ROUGE-L over the same tokens (paper section 4.2 and appendix C).

Definition (PEERS.md 4.4, made exact): tokens are the text lower-cased, every character
outside a-z and 0-9 replaced by a space, split on whitespace. Generated tokens are aligned
against published tokens with `difflib.SequenceMatcher(None, gen, pub, autojunk=False)`;
every "equal" block holding at least one token outside spaCy's English stop words adds its
whole length to `matched`. P = matched/len(gen), R = matched/len(pub), F1 = 2PR/(P+R), each
0 when undefined. `autojunk=True` reproduces the original frontend (`--storium-compat`),
whose junk heuristic ignores tokens over 1% of a published text of 200+ tokens.

Bounded work (issue 28): SequenceMatcher compares every pair of equal tokens in each range it
searches, which is cubic on repetitive edits (`a b a b ...` against `b a c b a c ...`: 500
tokens 1 s, 2,000 tokens 68 s). `matched_blocks` counts those comparisons as it goes and
raises `AlignmentTooCostly` past `MAX_ALIGNMENT_PAIRS` (about a second of work): the edit
becomes an `over_size_limit` rejects row, never a hang. Under the limit the blocks are
difflib's own, unchanged. ROUGE-L's LCS is `annotators.core.lcs` (exact, bit-parallel).
"""

from __future__ import annotations

import bisect
import dataclasses
import difflib
import re
from collections.abc import Sequence

from spacy.lang.en.stop_words import STOP_WORDS

from annotators.core.lcs import lcs_length
from annotators.core.metrics import prf

_NON_ALNUM = re.compile(r"[^a-z0-9]")
MAX_ALIGNMENT_PAIRS = 10_000_000  # equal-token pairs difflib may compare for one edit (about 1 s;
# an ordinary 64 KB edit needs about 9 million, a 2 KB one a few thousand)


class AlignmentTooCostly(ValueError):
    """An edit whose USER alignment would compare more than MAX_ALIGNMENT_PAIRS token pairs."""


class _BoundedMatcher(difflib.SequenceMatcher):
    """SequenceMatcher that charges each longest-match search the equal pairs it can visit
    (tokens of a[alo:ahi] against their positions in b[:bhi]) before running it."""

    def __init__(self, a, b, autojunk: bool, budget: int):
        super().__init__(None, a, b, autojunk=autojunk)
        self._budget = budget
        self._spent = 0
        positions = self.b2j
        self._where = [positions.get(token, ()) for token in a]

    def find_longest_match(self, alo=0, ahi=None, blo=0, bhi=None):
        ahi = len(self.a) if ahi is None else ahi
        bhi = len(self.b) if bhi is None else bhi
        self._spent += sum(bisect.bisect_left(js, bhi) for js in self._where[alo:ahi]) + (ahi - alo)
        if self._spent > self._budget:
            raise AlignmentTooCostly(
                f"aligning {len(self.a)} generated with {len(self.b)} published tokens "
                f"needs more than {self._budget} token comparisons"
            )
        return super().find_longest_match(alo, ahi, blo, bhi)


@dataclasses.dataclass(frozen=True)
class UserConfig:
    autojunk: bool = dataclasses.field(
        default=False, metadata={"help": "difflib autojunk heuristic; the original frontend used True (PEERS.md 4.4)"}
    )
    stop_words: frozenset = dataclasses.field(
        default=frozenset(STOP_WORDS),
        metadata={"help": "blocks made only of these tokens do not count (spaCy's English list)"},
    )


@dataclasses.dataclass(frozen=True)
class Scores:
    precision: float
    recall: float
    f1: float


def user_tokens(text: str) -> list[str]:
    """py-rouge style preprocessing: lower-case, non [a-z0-9] -> space, split."""
    return _NON_ALNUM.sub(" ", text.lower()).split()


def matched_blocks(gen: Sequence[str], pub: Sequence[str], config: UserConfig = UserConfig()) -> list[tuple[int, int]]:
    """(start in gen, length) of every aligned block that counts as a USER match."""
    matcher = _BoundedMatcher(list(gen), list(pub), config.autojunk, MAX_ALIGNMENT_PAIRS)
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


def rouge_l_scores(generated: str, published: str) -> Scores:
    """ROUGE-L (LCS) on the USER tokens, no stop-word removal, F1 with alpha = 0.5."""
    gen, pub = user_tokens(generated), user_tokens(published)
    return Scores(*prf(lcs_length(gen, pub), len(gen), len(pub)))
