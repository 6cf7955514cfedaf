"""Candidate-only classifier for LOT Table 13 ("BERT w/o Context", Schwartz et al., 2017).

A multinomial naive Bayes over jieba unigrams and bigrams of what the model may see
without the context: the candidate sentence (ClozeT: right vs wrong candidate) or the
removed sentence (SenPos: which position). Laplace smoothing; features unseen in training
are ignored. Counts are integers, so the model does not depend on the order of training.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Iterable, Sequence

_SEP = "\x1f"


@dataclasses.dataclass(frozen=True)
class CandidateOnlyConfig:
    alpha: float = 1.0  # Laplace smoothing
    max_n: int = 2  # unigrams and bigrams


@dataclasses.dataclass(frozen=True)
class NaiveBayes:
    classes: tuple[int, ...]
    log_prior: dict
    log_like: dict  # class -> {feature: log P(feature | class)}


def features(tokens: Sequence[str], max_n: int = 2) -> list[str]:
    out: list[str] = []
    for n in range(1, max_n + 1):
        out.extend(_SEP.join(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
    return out


def train(docs: Iterable[tuple[int, Sequence[str]]], config: CandidateOnlyConfig = CandidateOnlyConfig()) -> NaiveBayes:
    """Fit on (class, tokens) pairs."""
    class_docs: Counter = Counter()
    counts: dict[int, Counter] = {}
    for label, tokens in docs:
        class_docs[label] += 1
        counts.setdefault(label, Counter()).update(features(tokens, config.max_n))
    vocab = set().union(*counts.values()) if counts else set()
    total_docs = sum(class_docs.values())
    classes = tuple(sorted(class_docs))
    log_prior = {c: math.log(class_docs[c] / total_docs) for c in classes}
    log_like = {}
    for c in classes:
        denom = sum(counts[c].values()) + config.alpha * len(vocab)
        log_like[c] = {f: math.log((counts[c][f] + config.alpha) / denom) for f in vocab}
    return NaiveBayes(classes, log_prior, log_like)


def log_score(model: NaiveBayes, label: int, tokens: Sequence[str], max_n: int = 2) -> float | None:
    """log P(label) + sum log P(f | label) over known features; None for an unseen class."""
    if label not in model.log_like:
        return None
    like = model.log_like[label]
    return model.log_prior[label] + sum(like[f] for f in features(tokens, max_n) if f in like)
