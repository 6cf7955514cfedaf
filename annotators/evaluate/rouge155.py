"""ROUGE-1.5.5 as GLGE's official summarisation scorers run it (PEERS.md 3.5), in Python.

GLGE scores cnndm and gigaword through UniLM's `bs_pyrouge` and xsum and msnews through
`files2rouge`; both write each summary as a SEE html file (one sentence per line) and call
`ROUGE-1.5.5.pl -e data -c 95 -m -r 1000 -n 2 -a`. What that perl script does, reproduced here:

- Reading: a sentence is the text of its html line up to the first `<`; an empty one is
  skipped. Text is lower-cased (ASCII only), every `-` is spaced out, and every character
  outside [A-Za-z0-9-] becomes a space. Tokens that do not start with [a-z0-9$] (the lone
  dashes) are dropped; `-m` stems tokens longer than 3 characters with the script's own
  Porter stemmer (`porter_stem`). The WordNet exception database `-m` consults first (a
  token found there becomes its base form, unstemmed) is by default the one files2rouge
  ships, which is empty (12 KB, no keys), so no exceptions apply: GLGE's evaluation
  dependencies are pltrdy/pyrouge and files2rouge, and that is their ROUGE. A rebuilt db
  (`wordnet_exc`) is passed as `exceptions`.
- ROUGE-N (N = 1, 2): the summary's sentences are joined, so n-grams cross sentence ends;
  hits are clipped counts. ROUGE-L: the union LCS of each model (reference) sentence against
  every peer (system) sentence, marked by the script's back-tracking, with hits clipped by
  the unigram counts of both sides.
- Per document: recall and precision rounded to 5 decimals ("%7.5f"), then
  F = P*R / (0.5*P + 0.5*R) from the rounded values, rounded again.
- The reported `Average_F` is not the plain mean: it is the mean of 1000 bootstrap
  resamples (perl `srand(i)` for resample i, indices `int(rand(n))` over the evaluations in
  perl's string order of their ids), averaged after sorting, rounded to 5 decimals. Perl's
  generator is drand48, reproduced exactly (`perl_resample_indices`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence

ALPHA = 0.5
RESAMPLES = 1000

# ----------------------------------------------------------------------------- the Porter stemmer
# ROUGE-1.5.5's own copy of Porter's perl stemmer, including its 2004 change to step 4 (the
# -ement/-ment/-ent rules run one after another, so "accidental" -> "accid"): not NLTK's.
_c = "[^aeiou]"
_v = "[aeiouy]"
_C = f"{_c}[^aeiouy]*"
_V = f"{_v}[aeiou]*"
_MGR0 = re.compile(f"^({_C})?{_V}{_C}")
_MEQ1 = re.compile(f"^({_C})?{_V}{_C}({_V})?$")
_MGR1 = re.compile(f"^({_C})?{_V}{_C}{_V}{_C}")
_VOWEL_IN = re.compile(f"^({_C})?{_v}")
_CVC = re.compile(f"^{_C}{_v}[^aeiouwxy]$")
_STEP2 = {
    "ational": "ate",
    "tional": "tion",
    "enci": "ence",
    "anci": "ance",
    "izer": "ize",
    "bli": "ble",
    "alli": "al",
    "entli": "ent",
    "eli": "e",
    "ousli": "ous",
    "ization": "ize",
    "ation": "ate",
    "ator": "ate",
    "alism": "al",
    "iveness": "ive",
    "fulness": "ful",
    "ousness": "ous",
    "aliti": "al",
    "iviti": "ive",
    "biliti": "ble",
    "logi": "log",
}
_STEP3 = {"icate": "ic", "ative": "", "alize": "al", "iciti": "ic", "ical": "ic", "ful": "", "ness": ""}
_STEP2_RE = re.compile(
    "(ational|tional|enci|anci|izer|bli|alli|entli|eli|ousli|ization|ation|"
    "ator|alism|iveness|fulness|ousness|aliti|iviti|biliti|logi)$"
)
_STEP3_RE = re.compile("(icate|ative|alize|iciti|ical|ful|ness)$")
_STEP4_RE = re.compile("(al|ance|ence|er|ic|able|ible|ant|ement|ou|ism|ate|iti|ous|ive|ize)$")


def porter_stem(w: str) -> str:
    """One lower-case token stemmed as ROUGE-1.5.5's `stem` does (leftmost suffix matches,
    as perl's regexes)."""
    if len(w) < 3:
        return w
    first_y = w[0] == "y"
    if first_y:
        w = "Y" + w[1:]
    # step 1a
    m = re.search("(ss|i)es$", w)
    if m:
        w = w[: m.start()] + m.group(1)
    else:
        m = re.search("([^s])s$", w)
        if m:
            w = w[: m.start()] + m.group(1)
    # step 1b
    m = re.search("eed$", w)
    if m:
        if _MGR0.search(w[: m.start()]):
            w = w[:-1]
    else:
        m = re.search("(ed|ing)$", w)
        if m:
            stem = w[: m.start()]
            if _VOWEL_IN.search(stem):
                w = stem
                if re.search("(at|bl|iz)$", w):
                    w += "e"
                elif re.search(r"([^aeiouylsz])\1$", w):
                    w = w[:-1]
                elif _CVC.search(w):
                    w += "e"
    # step 1c
    if w.endswith("y"):
        stem = w[:-1]
        if _VOWEL_IN.search(stem):
            w = stem + "i"
    # steps 2 and 3
    for pattern, table in ((_STEP2_RE, _STEP2), (_STEP3_RE, _STEP3)):
        m = pattern.search(w)
        if m:
            stem = w[: m.start()]
            if _MGR0.search(stem):
                w = stem + table[m.group(1)]
    # step 4 (the script's version: three separate rules, then -sion/-tion)
    m = _STEP4_RE.search(w)
    if m and _MGR1.search(w[: m.start()]):
        w = w[: m.start()]
    if w.endswith("ment") and _MGR1.search(w[:-4]):
        w = w[:-4]
    if w.endswith("ent"):
        if _MGR1.search(w[:-3]):
            w = w[:-3]
    else:
        m = re.search("(s|t)(ion)$", w)
        if m:
            stem = w[: m.start()] + m.group(1)
            if _MGR1.search(stem):
                w = stem
    # step 5
    if w.endswith("e"):
        stem = w[:-1]
        if _MGR1.search(stem) or (_MEQ1.search(stem) and not _CVC.search(stem)):
            w = stem
    if w.endswith("ll") and _MGR1.search(w):
        w = w[:-1]
    if first_y:
        w = "y" + w[1:]
    return w


# ----------------------------------------------------------------------------- reading a summary
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_NOT_TOKEN = re.compile(r"[^A-Za-z0-9\-]")
_STEM_CACHE: dict[str, str] = {}


def see_sentences(text: str) -> list[str]:
    """The sentences ROUGE reads from pyrouge's html of `text` (one sentence per line): each
    line's text up to its first `<`, lower-cased (ASCII); empty ones are skipped."""
    out = []
    for line in text.split("\n"):
        kept = line.split("<", 1)[0]
        if kept:
            out.append(kept.translate(_ASCII_LOWER))
    return out


def tokens(sentence: str, stem: bool = True, exceptions: Mapping[str, str] | None = None) -> list[str]:
    """One sentence's tokens as `createNGram` / `tokenizeText_LCS` keep them; with `stem`, a
    token over 3 characters is its base form in `exceptions` (the WordNet exception db) when
    it is a key there, else its Porter stem (`MorphStem`)."""
    text = _NOT_TOKEN.sub(" ", sentence.replace("-", " - "))
    out = []
    for t in text.split():
        if not ("a" <= t[0] <= "z" or "0" <= t[0] <= "9" or t[0] == "$"):
            continue
        if stem and len(t) > 3:
            s = exceptions.get(t) if exceptions else None
            if s is not None:
                out.append(s)
                continue
            s = _STEM_CACHE.get(t)
            if s is None:
                s = _STEM_CACHE[t] = porter_stem(t)
            t = s
        out.append(t)
    return out


# ----------------------------------------------------------------------------- one document
def _fmt(x: float) -> float:
    """perl's sprintf("%7.5f", x) read back as a number."""
    return float(f"{x:.5f}")


def _rpf(hit: int, model_count: int, peer_count: int) -> tuple[float, float, float]:
    r = _fmt(hit / model_count) if model_count else 0.0
    p = _fmt(hit / peer_count) if peer_count else 0.0
    den = (1 - ALPHA) * p + ALPHA * r
    f = _fmt((p * r) / den) if den > 0 else 0.0
    return r, p, f


def _ngrams(toks: list[str], n: int) -> Counter:
    return Counter(tuple(toks[i : i + n]) for i in range(len(toks) - n + 1))


def _lcs_hits(model: list[str], peer: list[str], mask: list[int]) -> None:
    """`lcs_inner` + `markLCS`: mark the model positions on the script's LCS path."""
    m, n = len(model), len(peer)
    if not m:
        return
    c = [[0] * (n + 1) for _ in range(m + 1)]
    b = [[0] * (n + 1) for _ in range(m + 1)]  # 1 diagonal, 2 up, 3 left
    for i in range(1, m + 1):
        ci, cu, bi, mi = c[i], c[i - 1], b[i], model[i - 1]
        for j in range(1, n + 1):
            if mi == peer[j - 1]:
                ci[j] = cu[j - 1] + 1
                bi[j] = 1
            elif cu[j] >= ci[j - 1]:
                ci[j] = cu[j]
                bi[j] = 2
            else:
                ci[j] = ci[j - 1]
                bi[j] = 3
    i, j = m, n
    while i and j:
        move = b[i][j]
        if move == 1:
            i -= 1
            j -= 1
            mask[i] = 1
        elif move == 2:
            i -= 1
        else:
            j -= 1


def document_scores(
    peer: Sequence[str], model: Sequence[str], stem: bool = True, exceptions: Mapping[str, str] | None = None
) -> dict[str, tuple]:
    """ROUGE-1, ROUGE-2 and ROUGE-L (R, P, F, each rounded as the script does) of one peer
    (system) summary against one model (reference) summary, both given as SEE sentences;
    `exceptions`: the WordNet exception db (None: the empty one files2rouge ships)."""
    peer_sents = [tokens(s, stem, exceptions) for s in peer]
    model_sents = [tokens(s, stem, exceptions) for s in model]
    peer_all = [t for s in peer_sents for t in s]
    model_all = [t for s in model_sents for t in s]
    out = {}
    for n in (1, 2):
        pg, mg = _ngrams(peer_all, n), _ngrams(model_all, n)
        hit = sum((pg & mg).values())
        out[f"rouge-{n}"] = _rpf(hit, sum(mg.values()), sum(pg.values()))
    model_left, peer_left = Counter(model_all), Counter(peer_all)
    hit = base = 0
    for sent in model_sents:
        mask = [0] * len(sent)
        base += len(sent)
        for psent in peer_sents:
            _lcs_hits(sent, psent, mask)
        for j, flag in enumerate(mask):
            tok = sent[j]
            if flag and model_left[tok] > 0 and peer_left[tok] > 0:
                hit += 1
                model_left[tok] -= 1
                peer_left[tok] -= 1
    out["rouge-l"] = _rpf(hit, base, len(peer_all))
    return out


# ----------------------------------------------------------------------------- the reported average
_A, _C48, _MASK = 0x5DEECE66D, 0xB, (1 << 48) - 1


def perl_resample_indices(seed: int, n: int) -> list[int]:
    """`srand(seed)` then n times `int(rand(n))`, as perl >= 5.20 computes them (drand48)."""
    x = ((seed << 16) + 0x330E) & _MASK
    out = []
    for _ in range(n):
        x = (_A * x + _C48) & _MASK
        out.append(int(n * (x / 281474976710656.0)))
    return out


def perl_order(ids: Sequence[int]) -> list[int]:
    """Positions of `ids` (the EVAL ids 1..n pyrouge gave the documents) in the order the
    script averages them: its `sort keys` of "<id>.<peer>" strings."""
    return sorted(range(len(ids)), key=lambda i: f"{ids[i]}.1")


def pyrouge_ids(names: Sequence[str]) -> list[int]:
    """pyrouge's EVAL ids: documents numbered 1..n in sorted order of their file names."""
    order = sorted(range(len(names)), key=lambda i: names[i])
    ids = [0] * len(names)
    for rank, i in enumerate(order, start=1):
        ids[i] = rank
    return ids


def _jump_table(n: int):
    """Coefficients (A_k, C_k), k = 1..n, with x_k = A_k * x_0 + C_k (mod 2**48)."""
    import numpy as np

    a_k, c_k, mult, add = [], [], 1, 0
    for _ in range(n):
        mult, add = (_A * mult) & _MASK, (_A * add + _C48) & _MASK
        a_k.append(mult)
        c_k.append(add)
    return np.array(a_k, dtype=np.uint64), np.array(c_k, dtype=np.uint64)


def bootstrap_averages(columns: Sequence[Sequence[float]], resamples: int = RESAMPLES) -> list[float]:
    """The script's `Average_X` of each column of per-document values (all given in its
    averaging order): each resample draws the same indices for every column, and sums in
    the same left-to-right order as perl does."""
    import numpy as np

    n = len(columns[0]) if columns else 0
    if not n:
        return [0.0 for _ in columns]
    a_k, c_k = _jump_table(n)
    arrays = [np.asarray(col, dtype=np.float64) for col in columns]
    samples = [np.empty(resamples) for _ in columns]
    mask = np.uint64(_MASK)
    for seed in range(resamples):
        x0 = np.uint64(((seed << 16) + 0x330E) & _MASK)
        x = (a_k * x0 + c_k) & mask  # uint64 wraps mod 2**64, which keeps mod 2**48 exact
        idx = (n * (x.astype(np.float64) / 281474976710656.0)).astype(np.int64)
        for k, arr in enumerate(arrays):
            samples[k][seed] = np.cumsum(arr[idx])[-1] / n
    out = []
    for col in samples:
        acc = 0.0
        for s in np.sort(col).tolist():
            acc += s
        out.append(_fmt(acc / resamples))
    return out


def bootstrap_average(values: Sequence[float], resamples: int = RESAMPLES) -> float:
    """`bootstrap_averages` of one column, step by step as the script runs (the reference
    the vectorised version is tested against)."""
    n = len(values)
    if not n:
        return 0.0
    samples = []
    for seed in range(resamples):
        total = None
        for i in perl_resample_indices(seed, n):
            total = values[i] if total is None else total + values[i]
        samples.append(total / n)
    samples.sort()
    acc = 0.0
    for s in samples:
        acc += s
    return _fmt(acc / resamples)
