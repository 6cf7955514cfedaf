"""GLGE per-task metrics (PEERS.md 3.5; ProphetNet GLGE_baselines `script/eval.py`).

original (the official scripts' numbers):
- personachat: BLEU-1 and BLEU-2 = NLTK `sentence_bleu` with SmoothingFunction().method7 and
  weights (1,0,0,0) / (0.5,0.5,0,0), one reference, tokens = the stripped line split on single
  spaces, an exception scoring 0, macro mean x 100; distinct-1/2 = inter (corpus) distinct
  (unique n-grams + 1e-12) / (n-grams + 1e-5) over the predictions' tokens, as a fraction.
  The BLEU is NLTK's own function (a project dependency): its method7 changed across NLTK
  versions, so the numbers equal the official script run with the same NLTK (stats.json
  records the version).
- coqa: the CoQA v1.0 script's line-by-line F1 (lower-case, punctuation and a/an/the removed,
  whitespace tokens; both empty: 1), mean x 100.
- summarisation (cnndm, gigaword, xsum, msnews): ROUGE-1.5.5 as bs_pyrouge and files2rouge
  run it, with each script's preparation (`rouge155`, `glge_original`).
- question generation (squadqg, msqg): the QG scripts' grouping by source, coco BLEU-4 and
  ROUGE-L, and METEOR 1.5 through its jar (`glge_original`, `meteor`).

clean:
- personachat: BLEU-1/2 as above with Chen & Cherry method 1 smoothing (epsilon 0.1),
  whitespace tokens (`str.split()`), macro x 100; distinct-1/2 without the epsilons.
- coqa: the same F1.
- summarisation: ROUGE-1, ROUGE-2 (clipped n-gram counts) and ROUGE-L (LCS) F1 over
  lower-cased whitespace tokens, `<S_SEP>` / `[X_SEP]` separators removed, no stemming, one
  summary-level sequence, macro mean x 100.
- question generation: corpus BLEU-4 (no smoothing, corpus brevity penalty) and ROUGE-L F1
  as above, x 100.
"""
from __future__ import annotations

import math
import re
import string
from collections import Counter
from typing import Sequence

from annotators.evaluate.lot_metrics import lcs_length, ngram_counts, sentence_bleu

SUMMARY_TASKS = ("cnndm", "gigaword", "xsum", "msnews")
QG_TASKS = ("squadqg", "msqg")
GLGE_TASKS = SUMMARY_TASKS + QG_TASKS + ("coqa", "personachat")
SEPARATORS = {"<s_sep>", "[x_sep]"}


# ----------------------------------------------------------------------------- personachat
def nltk_method7_bleu(hyp: list[str], ref: list[str], weights: Sequence[float]) -> float:
    """The official PersonaChat BLEU of one line: NLTK sentence_bleu with method7; any
    exception scores 0, as the script's bare `except`."""
    import warnings

    from nltk.translate.bleu_score import SmoothingFunction
    from nltk.translate.bleu_score import sentence_bleu as nltk_sentence_bleu

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(nltk_sentence_bleu([ref], hyp, smoothing_function=SmoothingFunction().method7,
                                            weights=list(weights)))
    except Exception:  # the official script's `except: score = 0`
        return 0.0


def personachat_tokens(line: str, compat: str) -> list[str]:
    return line.strip().split(" ") if compat == "original" else line.split()


def personachat_scores(pred: str, gold: str, compat: str) -> tuple[dict[str, float], dict]:
    hyp, ref = personachat_tokens(pred, compat), personachat_tokens(gold, compat)
    if compat == "original":
        values = {"bleu-1": 100 * nltk_method7_bleu(hyp, ref, (1, 0, 0, 0)),
                  "bleu-2": 100 * nltk_method7_bleu(hyp, ref, (0.5, 0.5, 0, 0))}
    else:
        values = {"bleu-1": 100 * sentence_bleu(hyp, ref, 1, "epsilon"),
                  "bleu-2": 100 * sentence_bleu(hyp, ref, 2, "epsilon")}
    grams = {1: [(t,) for t in hyp], 2: list(zip(hyp, hyp[1:]))}
    return values, grams


def inter_distinct(all_grams: Sequence[dict], compat: str) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for n in (1, 2):
        counts = Counter(g for grams in all_grams for g in grams[n])
        total = sum(counts.values())
        if compat == "original":
            out[f"distinct-{n}"] = (len(counts) + 1e-12) / (total + 1e-5)
        else:
            out[f"distinct-{n}"] = len(counts) / total if total else None
    return out


# ----------------------------------------------------------------------------- coqa
def coqa_tokens(text: str) -> list[str]:
    """CoQA v1.0 normalisation: lower-case, ASCII punctuation out, a/an/the out, whitespace."""
    if not text:
        return []
    text = "".join(ch for ch in text.lower() if ch not in string.punctuation)
    text = re.sub(r"\b(a|an|the)\b", " ", text, flags=re.UNICODE)
    return text.split()


def coqa_f1(pred: str, gold: str) -> float:
    p, g = coqa_tokens(pred), coqa_tokens(gold)
    if not p or not g:
        return float(p == g)
    same = sum((Counter(p) & Counter(g)).values())
    if not same:
        return 0.0
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


# ----------------------------------------------------------------------------- ROUGE / BLEU-4 (clean)
def rouge_tokens(text: str) -> list[str]:
    return [t for t in text.lower().split() if t not in SEPARATORS]


def _f1(hit: float, n_pred: int, n_gold: int) -> float:
    if not hit:
        return 0.0
    p, r = hit / n_pred, hit / n_gold
    return 2 * p * r / (p + r)


def rouge_scores(pred: str, gold: str) -> dict[str, float]:
    p, g = rouge_tokens(pred), rouge_tokens(gold)
    out = {}
    for n in (1, 2):
        pc, gc = ngram_counts(p, n), ngram_counts(g, n)
        out[f"rouge-{n}"] = 100 * _f1(sum((pc & gc).values()), sum(pc.values()), sum(gc.values()))
    out["rouge-l"] = 100 * _f1(lcs_length(p, g), len(p), len(g))
    return out


def bleu4_stats(pred: str, gold: str) -> dict:
    """Per-example counts for corpus BLEU-4: clipped matches and totals per n, lengths."""
    p, g = pred.split(), gold.split()
    stats = {"hyp_len": len(p), "ref_len": len(g)}
    for n in (1, 2, 3, 4):
        pc, gc = ngram_counts(p, n), ngram_counts(g, n)
        stats[f"match_{n}"] = sum((pc & gc).values())
        stats[f"total_{n}"] = sum(pc.values())
    return stats


def corpus_bleu4(all_stats: Sequence[dict]) -> float | None:
    if not all_stats:
        return None
    logs = []
    for n in (1, 2, 3, 4):
        match = sum(s[f"match_{n}"] for s in all_stats)
        total = sum(s[f"total_{n}"] for s in all_stats)
        if not match or not total:
            return 0.0
        logs.append(math.log(match / total) / 4)
    c, r = sum(s["hyp_len"] for s in all_stats), sum(s["ref_len"] for s in all_stats)
    bp = 1.0 if c > r else math.exp(1 - r / c)
    return 100 * bp * math.exp(math.fsum(logs))
