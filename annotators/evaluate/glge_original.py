"""GLGE's official summarisation and question-generation scoring, quirks included
(PEERS.md 3.5; ProphetNet GLGE_baselines `script/eval.py` and the scripts it calls).

Summarisation (ROUGE-1.5.5 itself is `rouge155`):
- cnndm (`postprocess_cnn_dm.py` + UniLM's bs_pyrouge): the prediction is split on
  `[X_SEP]`; each piece is re-tokenised (`fix_tokenization`, brackets as -LRB-/-RRB-...),
  pieces of 4 tokens or fewer are dropped, and a piece sharing more than 70% of its word set
  with the pieces before it is dropped; the kept pieces are the candidate's sentences. The
  target's " <S_SEP> " separates its sentences. An empty target is skipped.
- gigaword (`evaluate/gigaword/eval.py --perl` + bs_pyrouge): the prediction is
  re-tokenised (brackets as -lrb-..., `&`, `<`, `>` as html entities, `[UNK]` as UNK) and
  every "1" becomes "#"; one sentence each. An empty target is skipped.
- bs_pyrouge lower-cases each html file (Python's `str.lower`) and maps -lrb- ... back to
  brackets and `` / '' to '"' before ROUGE reads it.
- xsum, msnews (`files2rouge PRED GOLD`): files2rouge >= 2.1 takes its first argument as the
  reference, so the prediction is ROUGE's model and the target its peer (F is the same either
  way for ROUGE-1/2, not always for the summary-level ROUGE-L). Sentences end at " ." (the
  text is split on " ." and " .\\n" put back). An empty line stops files2rouge; here it is a
  rejects row, which is what files2rouge's `-ir -is` flags do.

Question generation (`qg/eval_on_unilm_qg.py` for squadqg, `qg/eval.py` for msqg; the coco
caption scorers):
- squadqg lower-cases sources and targets and re-tokenises then lower-cases predictions
  (`fix_tokenization` as gigaword's); msqg takes every line as it is.
- Examples are grouped by their source line: a group's targets are all its targets (several
  references), and its prediction is the group's last one (a dict overwritten line by line).
- BLEU-4: pycocoevalcap's `Bleu` (its `BleuScorer`, option "closest": corpus counts, +1e-15 /
  +1e-9 in every precision, brevity penalty from the reference length closest to each
  hypothesis), called here on the scripts' Python 2 tokens.
- METEOR: meteor-1.5.jar (`-l en -norm`, the corpus score of one EVAL over every group).
- ROUGE-L: pycocoevalcap's `Rouge` (tokens split on single spaces, the best precision and the
  best recall over the references, beta 1.2), averaged over groups.
"""

from __future__ import annotations

import contextlib
import io
import re
import string
from collections.abc import Sequence

from annotators.evaluate import rouge155

SUMMARY_FILES2ROUGE = ("xsum", "msnews")
SUMMARY_BS_PYROUGE = ("cnndm", "gigaword")

_UPPER_BRACKETS = {"(": "-LRB-", ")": "-RRB-", "[": "-LSB-", "]": "-RSB-", "{": "-LCB-", "}": "-RCB-"}
_LOWER_BRACKETS = {
    "(": "-lrb-",
    ")": "-rrb-",
    "[": "-lsb-",
    "]": "-rsb-",
    "{": "-lcb-",
    "}": "-rcb-",
    "[UNK]": "UNK",
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
}


class _Kind:
    """The constants of one text type: str (the Python 3 scripts) or bytes (the Python 2 QG
    scripts, whose str is bytes: ASCII-only lower/split/isdigit/isupper, lengths in bytes)."""

    def __init__(self, conv, upper_table: dict, lower_table: dict):
        self.c = conv
        self.upper = {conv(k): conv(v) for k, v in upper_table.items()}
        self.lower = {conv(k): conv(v) for k, v in lower_table.items()}
        self.punct = conv(string.punctuation)
        self.digits_comma = set(conv("0123456789,"))


_STR = _Kind(str, _UPPER_BRACKETS, _LOWER_BRACKETS)
_BYTES = _Kind(lambda t: t.encode("ascii"), _UPPER_BRACKETS, _LOWER_BRACKETS)


def fix_tokenization(text, upper: bool = False):
    """The scripts' detokeniser of BERT-tokenised output: quotes to `` and '', n't / 's / 'd /
    'll joined, "..." joined, "3 , 000" -> "3,000", "3 . 03" -> "3.03", "U . N ." -> "U.N.",
    word-internal "-" joined, brackets to -LRB- (upper: cnndm's table) or -lrb- (the table
    with [UNK], & < > of gigaword and squadqg). `text` is str, or bytes for the Python 2
    scripts' semantics."""
    k = _BYTES if isinstance(text, bytes) else _STR
    c = k.c
    table = k.upper if upper else k.lower
    quote, apos, dot, comma, dash = c('"'), c("'"), c("."), c(","), c("-")
    toks = text.split()
    out: list = []
    double_open = single_open = False
    after_dash = False
    i, n = 0, len(toks)
    while i < n:
        tok = toks[i]
        joined_dash = False
        nxt = toks[i + 1] if i + 1 < n else None
        if tok in table:
            out.append(table[tok])
            i += 1
        elif tok == quote:
            out.append(c("''") if double_open else c("``"))
            double_open = not double_open
            i += 1
        elif tok == apos and out and out[-1].endswith(c("n")) and nxt == c("t"):
            out[-1] = out[-1][:-1]
            out.append(c("n't"))
            i += 2
        elif tok == apos and nxt in (c("s"), c("d"), c("ll")):
            out.append(apos + nxt)
            i += 2
        elif tok == apos:
            out.append(apos if single_open else c("`"))
            single_open = not single_open
            i += 1
        elif tok == dot and i < n - 2 and toks[i + 1] == dot and toks[i + 2] == dot:
            out.append(c("..."))
            i += 3
        elif tok == comma and out and set(out[-1]) <= k.digits_comma and nxt is not None and set(nxt) <= k.digits_comma:
            out[-1] += comma + nxt
            i += 2
        elif tok == dot and out and out[-1].isdigit() and nxt is not None and nxt.isdigit():
            out[-1] += dot + nxt
            i += 2
        elif (
            tok == dot
            and out
            and len(out[-1]) == 1
            and out[-1].isupper()
            and i < n - 2
            and len(toks[i + 1]) == 1
            and toks[i + 1].isupper()
            and toks[i + 2] == dot
        ):
            j = i + 3
            while j + 2 < n and len(toks[j + 1]) == 1 and toks[j + 1].isupper() and toks[j + 2] == dot:
                j += 2
            out[-1] += c("").join(toks[i:j])
            i += 2  # as the scripts: only two tokens are consumed, the rest are seen again
        elif tok == dash:
            if nxt == dash:
                out.append(c("--"))
                i += 2
            elif i == n - 1 or i == 0:
                out.append(dash)
                i += 1
            elif out[-1] not in k.punct and nxt[:1] not in k.punct:
                out[-1] += dash
                i += 1
                joined_dash = True
            else:
                out.append(dash)
                i += 1
        elif after_dash and out and tok[:1] not in k.punct:
            out[-1] += tok
            i += 1
        else:
            out.append(tok)
            i += 1
        after_dash = joined_dash
    return c(" ").join(out)


# ----------------------------------------------------------------------------- summarisation
def cnndm_candidate(prediction: str, duplicate_rate: float = 0.7) -> list[str]:
    """`postprocess_cnn_dm.py`'s candidate sentences of one prediction line."""
    kept: list[str] = []
    for piece in prediction.strip().split("[X_SEP]"):
        sentence = fix_tokenization(piece, upper=True)
        # (the script also drops a piece whose token F1 with a kept one is > 1.0: never true)
        if len(sentence.split()) <= 4:
            continue
        kept.append(sentence)
    if duplicate_rate < 1:
        seen: set[str] = set()
        out = []
        for sentence in kept:
            words = set(sentence.lower().split())
            if len(words & seen) / len(words) <= duplicate_rate:
                out.append(sentence)
            seen |= words
        kept = out
    return kept


_BS_REMAP = {"-lrb-": "(", "-rrb-": ")", "-lcb-": "{", "-rcb-": "}", "-lsb-": "[", "-rsb-": "]", "``": '"', "''": '"'}
_BS_CLEAN = re.compile(r"-lrb-|-rrb-|-lcb-|-rcb-|-lsb-|-rsb-|``|''")


def bs_pyrouge_text(text: str) -> str:
    """What bs_pyrouge writes for ROUGE: the html lower-cased, -lrb- ... and `` '' mapped back."""
    return _BS_CLEAN.sub(lambda m: _BS_REMAP[m.group()], text.lower())


def summary_documents(task: str, prediction: str, gold: str) -> tuple[list[str], list[str]] | str:
    """(peer sentences, model sentences) as ROUGE reads them for one example, or the reason
    the official script leaves the example out."""
    if task in SUMMARY_FILES2ROUGE:
        pred, ref = prediction.strip(), gold.strip()
        if not ref:
            return "empty target: files2rouge stops on it (its -ir flag skips the line, as here)"
        if not pred:
            return "empty prediction: files2rouge stops on it (its -is flag skips the line, as here)"

        def sentences(line: str) -> str:
            return " .\n".join(line.split(" ."))

        # files2rouge >= 2.1 reads `files2rouge PRED GOLD` as (reference, summary)
        return rouge155.see_sentences(sentences(ref)), rouge155.see_sentences(sentences(pred))
    if task == "cnndm":
        ref = gold.strip().replace(" <S_SEP> ", "\n")
        if not ref:
            return "empty target: postprocess_cnn_dm.py writes no file for it"
        cand = "\n".join(cnndm_candidate(prediction))
    elif task == "gigaword":
        ref = gold.strip()
        if not ref:
            return "empty target: gigaword/eval.py writes no file for it"
        cand = fix_tokenization(prediction.strip()).replace("1", "#")
    else:
        raise ValueError(f"not a summarisation task: {task}")
    return (rouge155.see_sentences(bs_pyrouge_text(cand)), rouge155.see_sentences(bs_pyrouge_text(ref)))


def summary_file_names(task: str, lines: Sequence[int]) -> list[str]:
    """The file names the official wrapper gives each kept example (0-based line numbers),
    whose sorted order numbers ROUGE's evaluations."""
    prefix = "s." if task in SUMMARY_FILES2ROUGE else "cand."
    return [f"{prefix}{line}.txt" for line in lines]


def summary_averages(task: str, lines: Sequence[int], doc_f: dict[str, Sequence[float]]) -> dict[str, float]:
    """ROUGE's reported Average_F of each metric over the kept examples (`lines`: their
    0-based line numbers; `doc_f`: per metric, each example's F in the same order)."""
    ids = rouge155.pyrouge_ids(summary_file_names(task, lines))
    order = rouge155.perl_order(ids)
    metrics = sorted(doc_f)
    averages = rouge155.bootstrap_averages([[doc_f[m][i] for i in order] for m in metrics])
    return dict(zip(metrics, averages))


# ----------------------------------------------------------------------------- question generation
def qg_texts(task: str, source: str, prediction: str, gold: str) -> tuple[str, str, str]:
    """(group key, hypothesis, reference) as the task's QG script prepares one line. The
    scripts are Python 2, so the text is handled as bytes: only ASCII letters are lower-cased,
    only ASCII whitespace splits or is stripped."""
    if task == "squadqg":
        src, pred, ref = (t.encode("utf-8") for t in (source, prediction, gold))
        texts = (src.strip().lower(), fix_tokenization(pred.strip()).lower(), ref.strip().lower())
        return tuple(t.decode("utf-8") for t in texts)
    return source, prediction, gold


def qg_groups(rows: Sequence[tuple[str, str, str]]) -> list[tuple[str, list[str]]]:
    """(hypothesis, references) per source group, in first-seen order: the last line's
    hypothesis wins, every line's reference counts."""
    hyp: dict[str, str] = {}
    refs: dict[str, list[str]] = {}
    for key, h, r in rows:
        hyp[key] = h
        refs.setdefault(key, []).append(r)
    return [(hyp[k], refs[k]) for k in refs]


def _coco_inputs(groups: Sequence[tuple[str, list[str]]], conv) -> tuple[dict, dict]:
    """The coco scorers' (gts, res) dicts: references and the one hypothesis per group."""
    gts = {i: [conv(r) for r in refs] for i, (_, refs) in enumerate(groups)}
    res = {i: [conv(hyp)] for i, (hyp, _) in enumerate(groups)}
    return gts, res


def _utf8(text: str) -> bytes:
    return text.encode("utf-8")


def coco_bleu(groups: Sequence[tuple[str, list[str]]], n: int = 4) -> list[float]:
    """BLEU-1..n of pycocoevalcap's `Bleu` (its BleuScorer, option "closest"). The texts go in
    as UTF-8 bytes, whose split() breaks at ASCII whitespace only, as the Python 2 scripts'
    str.split() did. The scorer's report on stdout is swallowed; no Java, no network."""
    from pycocoevalcap.bleu.bleu import Bleu

    gts, res = _coco_inputs(groups, _utf8)
    with contextlib.redirect_stdout(io.StringIO()):
        score, _ = Bleu(n).compute_score(gts, res, verbose=0)
    return [float(s) for s in score]


def coco_rouge_l(hyp: str, refs: Sequence[str]) -> float:
    """pycocoevalcap's `Rouge.calc_score` of one hypothesis against its references (tokens
    split on single spaces, the best precision and recall over the references, beta 1.2)."""
    from pycocoevalcap.rouge.rouge import Rouge

    return float(Rouge().calc_score([hyp], list(refs)))


def coco_rouge_l_mean(groups: Sequence[tuple[str, list[str]]]) -> float:
    """pycocoevalcap's `Rouge.compute_score`: numpy's mean of the groups' scores."""
    from pycocoevalcap.rouge.rouge import Rouge

    gts, res = _coco_inputs(groups, str)
    return float(Rouge().compute_score(gts, res)[0])
