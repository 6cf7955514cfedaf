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
- personachat: BLEU-1/2 = NLTK `sentence_bleu` with Chen & Cherry method 1 smoothing
  (epsilon 0.1), whitespace tokens (`str.split()`), macro x 100; distinct-1/2 without the
  epsilons.
- coqa: the same F1.
- summarisation: rouge-score 0.1.2's ROUGE-1, ROUGE-2 and ROUGE-L F1 (`RougeScorer`, its
  default tokens: lower-cased, runs of characters outside [a-z0-9] are breaks, so punctuation
  and non-ASCII letters are not tokens; no stemming; rougeL over the whole text), after
  `<S_SEP>` / `[X_SEP]` are removed, macro mean x 100.
- question generation: sacrebleu's corpus BLEU with its defaults (BLEU-4, 13a tokens, case
  kept, exponential smoothing) and rouge-score's ROUGE-L F1 as above, x 100.
"""

from __future__ import annotations

import functools
import re
import string
from collections import Counter
from collections.abc import Sequence

from annotators.evaluate.lot_metrics import sentence_bleu

SUMMARY_TASKS = ("cnndm", "gigaword", "xsum", "msnews")
QG_TASKS = ("squadqg", "msqg")
GLGE_TASKS = SUMMARY_TASKS + QG_TASKS + ("coqa", "personachat")


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
            return float(
                nltk_sentence_bleu([ref], hyp, smoothing_function=SmoothingFunction().method7, weights=list(weights))
            )
    except Exception:  # the official script's `except: score = 0`
        return 0.0


def personachat_tokens(line: str, compat: str) -> list[str]:
    return line.strip().split(" ") if compat == "original" else line.split()


def personachat_scores(pred: str, gold: str, compat: str) -> tuple[dict[str, float], dict]:
    hyp, ref = personachat_tokens(pred, compat), personachat_tokens(gold, compat)
    if compat == "original":
        values = {
            "bleu-1": 100 * nltk_method7_bleu(hyp, ref, (1, 0, 0, 0)),
            "bleu-2": 100 * nltk_method7_bleu(hyp, ref, (0.5, 0.5, 0, 0)),
        }
    else:
        values = {
            "bleu-1": 100 * sentence_bleu(hyp, ref, 1, "epsilon"),
            "bleu-2": 100 * sentence_bleu(hyp, ref, 2, "epsilon"),
        }
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
ROUGE_TYPES = {"rouge1": "rouge-1", "rouge2": "rouge-2", "rougeL": "rouge-l"}
_SEPARATOR = re.compile(r"<S_SEP>|\[X_SEP\]", re.IGNORECASE)


def without_separators(text: str) -> str:
    """GLGE's sentence separators (` <S_SEP> ` in targets, `[X_SEP]` in predictions) as spaces."""
    return _SEPARATOR.sub(" ", text)


@functools.lru_cache(maxsize=1)
def _rouge_scorer():
    """rouge-score's scorer (no stemming, the whole text one sequence: rougeL, not rougeLsum)."""
    from rouge_score.rouge_scorer import RougeScorer

    return RougeScorer(list(ROUGE_TYPES), use_stemmer=False)


def rouge_tokens(text: str) -> list[str]:
    """The tokens rouge-score reads (its DefaultTokenizer, no stemming: lower-cased, every run
    of characters outside [a-z0-9] a break), separators removed."""
    from rouge_score.tokenizers import DefaultTokenizer

    return DefaultTokenizer(use_stemmer=False).tokenize(without_separators(text))


def rouge_scores(pred: str, gold: str) -> dict[str, float]:
    """rouge-score's ROUGE-1, ROUGE-2 and ROUGE-L F1 x 100, the gold as its target."""
    scores = _rouge_scorer().score(without_separators(gold), without_separators(pred))
    return {name: 100 * scores[kind].fmeasure for kind, name in ROUGE_TYPES.items()}


def sacrebleu_metric():
    """sacrebleu's BLEU with its defaults (13a tokens, case kept, exponential smoothing)."""
    from sacrebleu.metrics import BLEU

    return BLEU()


def sacrebleu_signature() -> str:
    """sacrebleu's signature of that BLEU, one reference per line (known once it has scored)."""
    metric = sacrebleu_metric()
    metric.corpus_score(["a"], [["a"]])
    return str(metric.get_signature())


def corpus_bleu4(pairs: Sequence[tuple[str, str]]) -> float | None:
    """sacrebleu's corpus BLEU (x 100 already) of (prediction, gold) pairs, one reference each."""
    if not pairs:
        return None
    hyps, refs = [p for p, _ in pairs], [g for _, g in pairs]
    return float(sacrebleu_metric().corpus_score(hyps, [refs]).score)
