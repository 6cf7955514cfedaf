"""LOT generation metrics (PlotCom, OutGen): the official OutGen evaluation and clean variants.

`original` reproduces the official OutGen eval.py (PEERS.md 1.5) with its quirks:

- text for BLEU and distinct: all whitespace removed, jieba precise mode (HMM on), words
  joined by single spaces (`joined_words`);
- BLEU-n: NLTK's sentence BLEU of that text split on spaces, one reference, weights 1/n
  each, NO smoothing (method0: a zero n-gram precision counts as the smallest positive float,
  so BLEU ~ 0), macro mean over examples; an empty candidate scores 0;
- distinct-n / repetition-n: n-grams over the CHARACTERS of the space-joined string (the
  spaces are tokens);
- coverage: ROUGE-L recall of each outline phrase (reference) against the whole story
  (hypothesis), both as space-separated characters, as pltrdy `rouge` 1.0.0 computes it:
  pieces split at ".", and its ROUGE-L forces `exclusive=True`, so recall = DISTINCT
  characters of the union of the reconstructed per-piece LCS / DISTINCT characters of the
  phrase (phrase 书书 against story 书: 1.0); a phrase the library raises on (empty phrase
  or story, reconstruction too deep) is skipped; mean over all phrases pooled across
  examples;
- order: 1 - inversions over pairs i <= j (diagonal included), mean over examples.

`clean`: NLTK's BLEU with Chen & Cherry smoothing method 1 (epsilon 0.1 on zero precisions),
distinct/repetition over jieba WORD n-grams, coverage = plain character LCS recall of every
phrase (an empty story scores 0, nothing skipped, no "." splitting), order over pairs i < j.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from annotators.core.lcs import lcs_length as core_lcs_length
from annotators.text import zh_tokens

ORDERS = (1, 2, 3, 4)
COMPAT = ("original", "clean")
# pltrdy rouge rebuilds the LCS recursively (one Python frame per step); under the official
# script's call stack CPython's default limit of 1000 frames is hit when the walk from
# (len(phrase), len(piece)) to the table's edge takes this many steps or more, and the
# phrase is then skipped by the script's bare `except`.
RECURSION_STEPS = 990


# ----------------------------------------------------------------------------- text
def strip_spaces(text: str) -> str:
    """All whitespace removed (`"".join(text.split())`)."""
    return "".join(text.split())


def joined_words(text: str) -> str:
    """The official preprocessing: no whitespace, jieba words joined by single spaces."""
    return " ".join(zh_tokens.load().lcut(strip_spaces(text), HMM=True))


# ----------------------------------------------------------------------------- BLEU
def _weights(n: int) -> tuple[float, ...]:
    return tuple(1 / n for _ in range(n))


def _smoothing(smoothing: str):
    """NLTK's smoothing: "none" is method0 (a zero precision becomes the smallest float),
    "epsilon" is method1 (a zero count becomes 0.1, Chen & Cherry 2014)."""
    from nltk.translate.bleu_score import SmoothingFunction

    functions = SmoothingFunction(epsilon=0.1)
    return functions.method0 if smoothing == "none" else functions.method1


def _nltk_bleu(candidate: Sequence[str], reference: Sequence[str], weights, smoothing: str):
    """NLTK's sentence_bleu with one reference; its warning on a zero count is silenced (the
    official script prints it; here it would repeat once per example)."""
    import warnings

    from nltk.translate.bleu_score import sentence_bleu as nltk_sentence_bleu

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return nltk_sentence_bleu(
            [list(reference)], list(candidate), weights=weights, smoothing_function=_smoothing(smoothing)
        )


def sentence_bleu(candidate: Sequence[str], reference: Sequence[str], n: int, smoothing: str = "none") -> float:
    """BLEU-n of one candidate against one reference: NLTK's `sentence_bleu`, uniform weights
    1/n, smoothing "none" (method0) or "epsilon" (method1). No unigram match, or an empty
    candidate, gives 0."""
    return float(_nltk_bleu(candidate, reference, _weights(n), smoothing))


def bleu_scores(candidate_text: str, reference_text: str, compat: str) -> dict[str, float]:
    """bleu-1..4 of one example from its space-joined word strings (one NLTK call, its list of
    weights: the same values as four calls)."""
    cand, ref = candidate_text.split(), reference_text.split()
    smoothing = "none" if compat == "original" else "epsilon"
    values = _nltk_bleu(cand, ref, [_weights(n) for n in ORDERS], smoothing)
    return {f"bleu-{n}": float(v) for n, v in zip(ORDERS, values)}


# ----------------------------------------------------------------------------- distinct
def units(joined: str, compat: str) -> list[str]:
    """What distinct-n counts n-grams of: characters of the space-joined string (original)
    or the words (clean)."""
    return list(joined) if compat == "original" else joined.split()


def distinct_counts(joined: str, compat: str) -> dict[int, list[tuple]]:
    """Per n, the candidate's n-grams (as tuples) in order."""
    seq = units(joined, compat)
    return {n: [tuple(seq[i : i + n]) for i in range(len(seq) - n + 1)] for n in ORDERS}


def has_repetition(grams: Sequence[tuple]) -> bool:
    return len(set(grams)) < len(grams)


def corpus_distinct(all_grams: Iterable[dict[int, list[tuple]]]) -> dict[str, float | None]:
    """distinct-n = unique n-grams / all n-grams over every candidate; repetition-n = share
    of candidates with an n-gram occurring twice. None when there is nothing to count."""
    unique: dict[int, set] = {n: set() for n in ORDERS}
    total = {n: 0 for n in ORDERS}
    repeated = {n: 0 for n in ORDERS}
    count = 0
    for grams in all_grams:
        count += 1
        for n in ORDERS:
            unique[n].update(grams[n])
            total[n] += len(grams[n])
            repeated[n] += has_repetition(grams[n])
    out: dict[str, float | None] = {}
    for n in ORDERS:
        out[f"distinct-{n}"] = len(unique[n]) / total[n] if total[n] else None
        out[f"repetition-{n}"] = repeated[n] / count if count else None
    return out


# ----------------------------------------------------------------------------- coverage
def lcs_table(x: Sequence, y: Sequence) -> list[list[int]]:
    table = [[0] * (len(y) + 1) for _ in range(len(x) + 1)]
    for i in range(1, len(x) + 1):
        row, prev, xi = table[i], table[i - 1], x[i - 1]
        for j in range(1, len(y) + 1):
            row[j] = prev[j - 1] + 1 if xi == y[j - 1] else max(prev[j], row[j - 1])
    return table


def lcs_length(x: Sequence, y: Sequence) -> int:
    """The LCS length lcs_table's corner holds, computed in bounded time (annotators.core.lcs)."""
    return core_lcs_length(x, y)


def recon_lcs(x: Sequence, y: Sequence, table: list[list[int]]) -> tuple[list, int]:
    """The LCS the library reconstructs (walking back from (len x, len y): a match goes
    diagonally, else up when the cell above is strictly greater, else left) and the walk's
    steps. Which LCS is found matters: only its distinct tokens count."""
    i, j, steps, tokens = len(x), len(y), 0, []
    while i > 0 and j > 0:
        if x[i - 1] == y[j - 1]:
            tokens.append(x[i - 1])
            i, j = i - 1, j - 1
        elif table[i - 1][j] > table[i][j - 1]:
            i -= 1
        else:
            j -= 1
        steps += 1
    return tokens, steps


def rouge_pieces(text: str) -> list[list[str]]:
    """pltrdy rouge's input: the text as space-separated characters, split at "." into
    pieces (empty pieces dropped before re-joining), each piece split on single spaces."""
    spaced = " ".join(strip_spaces(text))
    return [" ".join(p.split()).split(" ") for p in spaced.split(".") if len(p) > 0]


def coverage_original(phrase: str, story: str) -> float | None:
    """ROUGE-L recall of a phrase against a story as the official script gets it from
    pltrdy rouge 1.0.0, whose summary-level ROUGE-L always counts tokens as SETS
    (`exclusive=True`): the distinct tokens of the union of the LCS reconstructed for every
    (phrase piece, story piece) pair, over the distinct tokens of the phrase. None where the
    script's bare `except` skips the phrase."""
    refs, hyps = rouge_pieces(phrase), rouge_pieces(story)
    if not refs or not hyps:
        return None
    union: set = set()
    for ref in refs:
        for hyp in hyps:
            tokens, steps = recon_lcs(ref, hyp, lcs_table(ref, hyp))
            if steps >= RECURSION_STEPS:
                return None
            union.update(tokens)
    return len(union) / len({t for ref in refs for t in ref})


def coverage_clean(phrase: str, story: str) -> float | None:
    """Character LCS of phrase and story / phrase length; None for an empty phrase."""
    p, s = strip_spaces(phrase), strip_spaces(story)
    if not p:
        return None
    return lcs_length(p, s) / len(p)


def coverage_values(outline: Sequence[str], story: str, compat: str) -> list[float]:
    """The example's phrase values that enter the pooled coverage mean."""
    if compat == "original":
        phrases = "#".join(outline).split("#")
        values = [coverage_original(p, story) for p in phrases]
    else:
        values = [coverage_clean(p, story) for p in outline]
    return [v for v in values if v is not None]


# ----------------------------------------------------------------------------- order
def longest_common_substring(x: str, y: str) -> str:
    """The longest common substring, taken from x; ties go to the one ending first in x
    (then first in y), as a row-by-row dynamic programme finds it."""
    best_len, best_end = 0, 0
    prev = [0] * (len(y) + 1)
    for i in range(1, len(x) + 1):
        row = [0] * (len(y) + 1)
        for j in range(1, len(y) + 1):
            if x[i - 1] == y[j - 1]:
                row[j] = prev[j - 1] + 1
                if row[j] > best_len:
                    best_len, best_end = row[j], i
        prev = row
    return x[best_end - best_len : best_end]


def gold_ranks(outline: Sequence[str], gold_story: str, compat: str) -> dict[str, int]:
    """phrase -> rank by first occurrence in the gold story (missing: -1, first); a
    repeated phrase keeps its first place in the dict and its last rank (as the script)."""
    if compat == "original":
        phrases = "#".join(outline).strip().split("#")
        story = gold_story.strip()
        pos = [story.find(p.strip()) for p in phrases]
    else:
        phrases = list(outline)
        pos = [gold_story.find(p) for p in phrases]
    ranks: dict[str, int] = {}
    for rank, index in enumerate(sorted(range(len(phrases)), key=lambda k: pos[k])):
        ranks[phrases[index]] = rank
    return ranks


def inversion_score(ranks: Sequence[int], diagonal: bool) -> float | None:
    """1 - inversions / pairs; pairs i <= j with `diagonal`, else i < j (one item: 1)."""
    k = len(ranks)
    inversions = sum(1 for i in range(k) for j in range(i + 1, k) if ranks[i] > ranks[j])
    pairs = k * (k + 1) // 2 if diagonal else k * (k - 1) // 2
    if pairs == 0:
        return 1.0 if k == 1 else None
    return 1 - inversions / pairs


def order_score(outline: Sequence[str], gold_story: str, story: str, compat: str) -> float | None:
    """The order of one example: gold ranks of the phrases read in candidate order."""
    ranks = gold_ranks(outline, gold_story, compat)
    phrases = list(ranks)[::-1]
    hyp = strip_spaces(story)
    pos = []
    for phrase in phrases:
        common = longest_common_substring(strip_spaces(phrase), hyp)
        pos.append(hyp.find(common) if len(common) > 1 else -1)
    in_candidate = sorted(range(len(phrases)), key=lambda k: pos[k])
    sequence = [ranks[phrases[k]] for k in in_candidate]
    return inversion_score(sequence, diagonal=compat == "original")
