"""Sentence BLEU-n for the bias baselines (LOT section 5.5, Table 13 "BLEU-1/2").

Papineni et al. (2002) with one reference and uniform weights: clipped n-gram precisions
p_1..p_n, geometric mean, brevity penalty exp(1 - r/c) when the hypothesis is shorter.
No smoothing (as the LOT evaluation, PEERS.md 1.5): if any order has no match, or the
hypothesis is empty, BLEU is exactly 0 (NLTK would return a tiny positive number instead;
exact 0 makes such candidates tie, and ties go to the lowest index).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence


def ngram_counts(tokens: Sequence[str], n: int) -> Counter:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def modified_precision(hypothesis: Sequence[str], reference: Sequence[str], n: int) -> tuple[int, int]:
    """(clipped matches, hypothesis n-gram count) for order n."""
    hyp, ref = ngram_counts(hypothesis, n), ngram_counts(reference, n)
    matches = sum(min(count, ref[gram]) for gram, count in hyp.items())
    return matches, max(0, len(hypothesis) - n + 1)


def sentence_bleu(hypothesis: Sequence[str], reference: Sequence[str], max_n: int) -> float:
    """BLEU-`max_n` of one hypothesis against one reference (token lists)."""
    c, r = len(hypothesis), len(reference)
    if c == 0:
        return 0.0
    log_sum = 0.0
    for n in range(1, max_n + 1):
        matches, total = modified_precision(hypothesis, reference, n)
        if matches == 0 or total == 0:
            return 0.0
        log_sum += math.log(matches / total) / max_n
    brevity = 1.0 if c > r else math.exp(1 - r / c)
    return brevity * math.exp(log_sum)
