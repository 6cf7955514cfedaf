"""Bias baselines for ClozeT and SenPos (LOT section 5.5, Table 13).

Each baseline picks a candidate index (0-based: ClozeT plot0/plot1, SenPos the k-th
`[MASK]`); ties always go to the lowest index. Words are the non-whitespace jieba tokens
of the overlap definition (punctuation included, placeholders removed). "Adjacent
sentences" of a position are the last sentence before it and the first after it (the SPEC
sentence rule of annotators.text.zh_sentences, as LOT built the segments); an empty side is left out.
Known-bad inputs: a ClozeT story without exactly one `<mask>`, a label that is not a valid
candidate, a SenPos story without `[MASK]`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from annotators.audits import classifier as cc
from annotators.audits.bleu import sentence_bleu
from annotators.audits.discourse_markers import completes_pair
from annotators.core.ids import rng_for
from annotators.core.outcome import Drop
from annotators.text.zh_sentences import split_sentences
from schemas.lot import CLOZET_MASK, SENPOS_MASK

CONTEXT_BASELINES = ("length", "bleu1", "bleu2", "sentiment", "discourse_markers")


@dataclasses.dataclass(frozen=True)
class BiasConfig:
    seed: int = dataclasses.field(
        default=0,
        metadata={  # per example id, never arrival order
            "help": "seeds the discourse-marker baseline's random choice among eligible candidates"
        },
    )
    bleu_orders: tuple[int, ...] = (1, 2)  # LOT Table 13 "BLEU-1/2"


@dataclasses.dataclass(frozen=True)
class BiasItem:
    """A parsed example: gold index, candidate count, what the candidate-only model sees,
    and the predictions of the context baselines (empty for train examples)."""

    task: str
    split: str
    example_id: str
    gold: int
    n_candidates: int
    seen: tuple[tuple[str, ...], ...]  # ClozeT: each candidate's words; SenPos: (sentence,)
    preds: tuple[tuple[str, int], ...] = ()


def argbest(scores: Sequence[float | None], lower: bool = False) -> int:
    """Index of the best score (max, or min with `lower`); None is worst; ties: lowest."""
    best, best_i = None, 0
    for i, s in enumerate(scores):
        if s is not None and (best is None or (s < best if lower else s > best)):
            best, best_i = s, i
    return best_i


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _edge(text: str, last: bool) -> str:
    pieces = split_sentences(text)  # the SPEC sentence rule, as the LOT builder splits
    return (pieces[-1] if last else pieces[0]) if pieces else ""


def discourse_choice(eligible: Sequence[int], n: int, seed: int, example_id: str) -> int:
    """The one eligible candidate; else a seeded random one (of the eligible, or of all)."""
    if len(eligible) == 1:
        return eligible[0]
    rng = rng_for(seed, "discourse_markers", example_id)
    return rng.choice(list(eligible)) if eligible else rng.randrange(n)


def parse(task: str, record: dict) -> tuple[int, int] | Drop:
    """(gold index, number of candidates) of a ClozeT or SenPos row, or a Drop."""
    story = record["story"]
    if task == "clozet":
        if story.count(CLOZET_MASK) != 1:
            return Drop("bad_placeholder", f"{story.count(CLOZET_MASK)} {CLOZET_MASK} in story")
        if str(record["label"]) not in ("0", "1"):
            return Drop("bad_label", f"label {record['label']!r}")
        return int(str(record["label"])), 2
    k = story.count(SENPOS_MASK)
    if k == 0:
        return Drop("no_candidates", f"no {SENPOS_MASK} in story")
    label = record["label"]
    if isinstance(label, bool) or not isinstance(label, int) or not 1 <= label <= k:
        return Drop("bad_label", f"label {label!r} with {k} candidates")
    return label - 1, k


def clozet_preds(
    record: dict, words: Callable, sentiment: Callable, config: BiasConfig, example_id: str
) -> tuple[tuple[str, int], ...]:
    """ClozeT: more words; higher BLEU-n against the context; higher sentiment; a marker pair."""
    prefix, suffix = record["story"].split(CLOZET_MASK)
    cands = [record["plot0"], record["plot1"]]
    toks = [words(c) for c in cands]
    context = words(prefix + suffix)
    before, after = words(_edge(prefix, True)), words(_edge(suffix, False))
    preds = [("length", argbest([len(t) for t in toks]))]
    preds += [(f"bleu{n}", argbest([sentence_bleu(t, context, n) for t in toks])) for n in config.bleu_orders]
    preds.append(("sentiment", argbest([sentiment(c) for c in cands])))
    eligible = [i for i, t in enumerate(toks) if completes_pair(before, t, after)]
    preds.append(("discourse_markers", discourse_choice(eligible, 2, config.seed, example_id)))
    return tuple(preds)


def senpos_preds(
    record: dict, words: Callable, sentiment: Callable, config: BiasConfig, example_id: str
) -> tuple[tuple[str, int], ...]:
    """SenPos: per position, its adjacent sentences against the removed sentence."""
    segments = record["story"].split(SENPOS_MASK)
    sides = [(_edge(segments[i], True), _edge(segments[i + 1], False)) for i in range(len(segments) - 1)]
    adjacent = [[s for s in pair if s.strip()] for pair in sides]
    sent, sent_toks = record["sentence"], words(record["sentence"])
    adj_toks = [[words(s) for s in adj] for adj in adjacent]
    cache: dict[str, float] = {}
    senti = lambda s: cache.setdefault(s, sentiment(s))  # noqa: E731
    dist = lambda m, x: None if m is None else abs(m - x)  # noqa: E731
    preds = [("length", argbest([dist(_mean([len(t) for t in a]), len(sent_toks)) for a in adj_toks], lower=True))]
    preds += [
        (f"bleu{n}", argbest([_mean([sentence_bleu(sent_toks, t, n) for t in a]) for a in adj_toks]))
        for n in config.bleu_orders
    ]
    target = senti(sent)
    preds.append(("sentiment", argbest([dist(_mean([senti(s) for s in a]), target) for a in adjacent], lower=True)))
    eligible = [i for i, (left, right) in enumerate(sides) if completes_pair(words(left), sent_toks, words(right))]
    preds.append(("discourse_markers", discourse_choice(eligible, len(sides), config.seed, example_id)))
    return tuple(preds)


def prepare(
    task: str,
    split: str,
    example_id: str,
    record: dict,
    words: Callable,
    sentiment: Callable,
    config: BiasConfig,
    with_preds: bool,
) -> BiasItem | Drop:
    """Parse a row and run the context baselines (skipped for train rows)."""
    parsed = parse(task, record)
    if isinstance(parsed, Drop):
        return parsed
    gold, n = parsed
    seen = (
        (tuple(words(record["plot0"])), tuple(words(record["plot1"])))
        if task == "clozet"
        else (tuple(words(record["sentence"])),)
    )
    preds = ()
    if with_preds:
        fn = clozet_preds if task == "clozet" else senpos_preds
        preds = fn(record, words, sentiment, config, example_id)
    return BiasItem(task, split, example_id, gold, n, seen, preds)


def majority_label(golds: Sequence[int]) -> int:
    """The most frequent train gold index (ties: the lowest); 0 without training data."""
    counts: dict[int, int] = {}
    for g in golds:
        counts[g] = counts.get(g, 0) + 1
    return min(counts, key=lambda g: (-counts[g], g)) if counts else 0


def train_candidate_only(items: Sequence[BiasItem], config=cc.CandidateOnlyConfig()) -> cc.NaiveBayes:
    """ClozeT: right (1) vs wrong (0) candidates; SenPos: gold position from the sentence."""
    docs = []
    for item in items:
        if item.task == "clozet":
            docs += [(int(i == item.gold), toks) for i, toks in enumerate(item.seen)]
        else:
            docs.append((item.gold, item.seen[0]))
    return cc.train(docs, config)


def candidate_only_pred(item: BiasItem, model: cc.NaiveBayes, max_n: int = 2) -> int:
    if item.task == "clozet":
        scores = []
        for toks in item.seen:
            right, wrong = cc.log_score(model, 1, toks, max_n), cc.log_score(model, 0, toks, max_n)
            scores.append(None if right is None or wrong is None else right - wrong)
        return argbest(scores)
    return argbest([cc.log_score(model, j, item.seen[0], max_n) for j in range(item.n_candidates)])


def load_words() -> Callable[[str], list[str]]:
    """Word tokens of the overlap definition (placeholders removed, jieba, no whitespace)."""
    from annotators.audits.overlap import make_tokenizer, strip_placeholders

    tokenize = make_tokenizer("jieba")
    return lambda text: tokenize(strip_placeholders(text))


def load_sentiment() -> Callable[[str], float]:
    """snownlp's sentiment probability (LOT footnote 5: an off-the-shelf Chinese analyser).

    snownlp divides by zero on an empty string; an empty text scores a neutral 0.5.
    """
    import snownlp

    _ = snownlp.SnowNLP("好").sentiments  # loads the model once, in DoFn.setup
    return lambda text: snownlp.SnowNLP(text).sentiments if text.strip() else 0.5
