"""The evaluate job's CARD.md: the default card, the metrics, which compatibility mode was
used and how the two modes differ, and the reject reasons the job can give."""

from __future__ import annotations

from typing import Any

from annotators.core.card import default_card
from annotators.core.reasons import reasons_markdown
from annotators.evaluate.reasons import JOB_REASONS

MODES = """\
## Compatibility modes

`original` reproduces the official LOT OutGen evaluation script (PEERS.md 1.5), quirks
included; `clean` gives the corrected variants. Accuracy (ClozeT, SenPos, ChapterBreak) is
the same in both modes.

| metric | original | clean |
|---|---|---|
| text for BLEU and distinct | whitespace removed, jieba precise mode with HMM, words joined by single spaces | the same words |
| BLEU-n | macro mean of NLTK's `sentence_bleu` (one reference, weights 1/n), **no smoothing** (`method0`): a zero n-gram precision is the smallest positive float, so that example's BLEU is about 0; no unigram match or an empty story scores 0 | the same, smoothed by Chen & Cherry method 1: a zero n-gram count becomes 0.1 (NLTK `method1`) |
| distinct-n | unique / all n-grams over every candidate, n-grams of the **characters of the space-joined word string** (the spaces are tokens) | n-grams of **jieba words** |
| repetition-n (not in the official report) | share of candidates with an n-gram occurring twice, same characters | same, over words |
| coverage | ROUGE-L recall of each outline phrase against the whole story, both as space-separated characters, as pltrdy `rouge` 1.0.0 computes it: the texts are cut at every `.`, and its ROUGE-L always counts **distinct** tokens (`exclusive=True`, whatever the caller asks): the distinct characters of the union of the LCS it reconstructs for every pair of pieces, over the distinct characters of the phrase (phrase 书书 against story 书: 1.0; 抱着书走出图书馆 against 书走出: 3/7); a phrase with no characters, an empty story, or an LCS reconstruction of 990 steps or more (the library's recursion limit) is **skipped**; phrases come from the outline joined and re-split at `#`; mean over all phrases pooled across examples | LCS of the phrase and the story (characters, whitespace removed) / phrase length; an empty story scores 0; only empty phrases are left out; pooled mean |
| order | per example: phrases ranked by first occurrence in the gold story (missing: -1, ranked first; stable), then read in the candidate's order: each phrase's position is the first occurrence of its longest common substring with the story when that is over 1 character, else -1; score 1 - inversions / pairs i <= j (**diagonal included**, k(k+1)/2 pairs, so never 0); mean over examples | the same ranks; pairs i < j (k(k-1)/2), so a reversed order scores 0 |
| ChapterBreak accuracy | an example is correct when no negative scores strictly higher than the gold (ties count as correct, PEERS.md 2.3), per source and prefix length | same |
| ClozeT / SenPos accuracy | exact match of the labels compared as text (`"1"` and `1` agree) | same |

Where the official script would stop with an error (a division by zero: no n-gram of some
order in any candidate, no phrase left for coverage), the metric is null here and the others
are still reported.

GLGE tasks (PEERS.md 3.5; ProphetNet `GLGE_baselines/script/eval.py`):

| task | original | clean |
|---|---|---|
| personachat | BLEU-1 / BLEU-2: NLTK `sentence_bleu` with `SmoothingFunction().method7`, weights (1,0,0,0) / (0.5,0.5,0,0), tokens = line stripped and split on single spaces, an exception scores 0, macro mean x 100 (NLTK's own function: its method7 changed across NLTK versions, stats.json records the version used); distinct-1/2: inter distinct (unique + 1e-12) / (all + 1e-5) | BLEU smoothed by method 1 (epsilon 0.1) over `str.split()` tokens; distinct without the epsilons |
| coqa | CoQA v1.0 F1 per line (lower-case, punctuation and a/an/the removed; both empty scores 1), mean x 100 | same |
| cnndm, gigaword, xsum, msnews | ROUGE-1 / ROUGE-2 / ROUGE-L `Average_F` x 100 exactly as `ROUGE-1.5.5.pl -c 95 -m -r 1000 -n 2 -a` prints it, re-implemented: its tokens (ASCII lower-case, every character outside [A-Za-z0-9-] a space), its own Porter stemmer on tokens over 3 characters, with the WordNet exception db chosen by `--rouge-wordnet` (default `empty`, the db files2rouge ships, with no keys: GLGE's evaluation dependencies are pltrdy/pyrouge and files2rouge, whose ROUGE-1.5.5 is the one both wrappers then run; `rebuilt`: a token of over 3 characters that is a key of WordNet's exception lists becomes its base form, unstemmed); per document R and P rounded to 5 decimals, F from the rounded values; the reported average is the mean of 1000 bootstrap resamples (perl `srand(i)`, drand48), not the plain mean. Preparation per script: cnndm (`postprocess_cnn_dm.py`): prediction split on `[X_SEP]`, re-tokenised, pieces of 4 tokens or fewer dropped, pieces sharing over 70% of their words with earlier ones dropped, target sentences at ` <S_SEP> `; gigaword (`eval.py --perl`): prediction re-tokenised and every `1` made `#`; both through bs_pyrouge (lower-cased, -lrb- etc. back to brackets); an empty target is left out. xsum, msnews (`files2rouge PRED GOLD`): files2rouge 2.1 takes the prediction as ROUGE's reference and the target as the summary, sentences end at ` .`; an empty line (which stops files2rouge) is left out, as its `-ir -is` flags do. A sentence is cut at its first `<`, as ROUGE reads the html pyrouge writes. Left-out examples are rejects rows (`skipped_by_official_scorer`) | rouge-score 0.1.2's ROUGE-1, ROUGE-2 and ROUGE-L F1 (`RougeScorer`, its default tokens: lower-cased, every run of characters outside [a-z0-9] a break, so punctuation and non-ASCII letters are not tokens; no stemming; `rougeL` over the whole text, not `rougeLsum`), after `<S_SEP>` / `[X_SEP]` are removed, macro mean x 100 |
| squadqg, msqg | BLEU-1..4, METEOR and ROUGE-L x 100 as the Python 2 QG scripts compute them (needs `--source`, the `.src` file): lines are grouped by their source line (squadqg: lower-cased), a group's references are all its targets and its hypothesis is its **last** line's prediction; squadqg re-tokenises predictions (`fix_tokenization`) and lower-cases everything, ASCII letters only as Python 2 does; BLEU: pycocoevalcap 1.2's `Bleu` (its BleuScorer: corpus counts, +1e-15 / +1e-9 in each precision, brevity penalty from the reference closest in length; tokens split at ASCII whitespace only, as Python 2 did); METEOR: meteor-1.5.jar `-l en -norm` (the pycocoevalcap 1.2 jar, run with the machine's Java), corpus score of one EVAL; ROUGE-L: pycocoevalcap's `Rouge` (tokens split on single spaces, best precision and best recall over the references, beta 1.2), mean over groups. Per-example rows score each line's own prediction against its own target (coco ROUGE-L) | sacrebleu's corpus BLEU with its defaults (BLEU-4, 13a tokens, case kept, exponential smoothing; stats.json gives its signature) and rouge-score's ROUGE-L F1 as above, x 100; no METEOR |

Clean GLGE summarisation and QG numbers differ from storybench's before the libraries took over
(ROUGE and BLEU-4 over lower-cased whitespace tokens, no smoothing): punctuation is no longer
a token and BLEU with no 4-gram match is smoothed, not 0. On the test fixtures ROUGE-1 / 2 / L
moved from 56.95 / 28.39 / 46.07 to 60.41 / 30.37 / 49.54 (xsum), 43.31 / 18.64 / 39.76 to
46.19 / 26.67 / 42.85 (cnndm), 59.56 / 30.36 / 56.70 to 78.64 / 50.52 / 75.30 (gigaword);
squadqg ROUGE-L 80.25 to 79.82 with BLEU-4 unchanged (35.08); a question matching its target
only in its `?` (the case differs) has BLEU-4 10.68, was 0. Original-mode numbers did not change.

GLGE predictions and gold are plain text, one example per line (an empty line is an empty
answer, not a rejected line; only the official summarisation scorers leave some out, see
above). The original GLGE numbers equal the official scripts' output on the fixtures and on
3,000-line files (tests/evaluate/test_evaluate_glge_original.py). A ROUGE install whose
WordNet exception db was rebuilt (`buildExeptionDB.pl` over WordNet 2.0's adj, adv, noun and
verb lists: 5,930 keys, a recipe other projects' READMEs give) maps irregular forms
(children -> child) before stemming and gives different numbers (XSum ROUGE-L moves by up to
0.29); `--rouge-wordnet rebuilt` reproduces such an install from lists on this machine
(`--rouge-wordnet-exc PATH`, else ROUGE's, files2rouge's, pyrouge's or NLTK's copy), reading
the files in name order, later ones overwriting a key (perl reads them in directory order, so
best, better, is and testes may map otherwise there). The db used is named above.
Run on Dataflow, the QG tasks' original mode needs Java on the workers.

Predictions and gold meet by line (prediction line N and gold example N; a table's rows of
the split in example_id order) or by id (`example_id` or `id`). Every line keeps its number:
a blank or broken line is rejected and never shifts the lines after it. A gold example with
no prediction and a prediction with no gold are rejects rows; the metrics cover the matched
examples (`n` in the metrics table), and the job exits 2 unless `--allow-partial`. A
prediction or gold line over 256 KB is an `over_size_limit` rejects row (its size in the
detail), and so is a GLGE summarisation or QG pair whose ROUGE-L table (the official scorer's,
or rouge-score's in clean mode, over the tokens each reads) would pass 4,000,000 word pairs:
every metric's work per example stays bounded.
"""


def _value(v: Any) -> str:
    return "-" if v is None else f"{v:.4f}"


def _wordnet_lines(db: dict | None) -> list[str]:
    """The ROUGE-1.5.5 WordNet exception db of a summarisation run, named."""
    if not db:
        return []
    line = f"- ROUGE-1.5.5 WordNet exception db (`--rouge-wordnet`): **{db['choice']}**, {db['source']}"
    if db["choice"] != "empty":
        line += (
            f"; {db['keys']:,} keys from {len(db['files'])} list(s) (WordNet 2.0's give 5,930), "
            f"sha256 of its sorted key/value lines `{db['sha256'][:16]}`"
        )
    return [line]


def metrics_section(stats: dict[str, Any]) -> str:
    config = stats.get("config", {})
    lines = [
        "",
        "## Evaluation",
        "",
        f"- task: `{config.get('task')}`",
        f"- compatibility mode: **{config.get('compat')}**",
        f"- alignment: by {config.get('align')}; gold format: {config.get('gold_format')}"
        + (f", split `{config.get('split')}`" if config.get("gold_format") == "table" else ""),
    ]
    libraries = config.get("metric_libraries") or {}
    if libraries:
        lines.append("- metric libraries: " + ", ".join(f"{name} {v}" for name, v in sorted(libraries.items())))
    lines += _wordnet_lines(config.get("rouge_wordnet_db")) + [""]
    metrics = stats.get("metrics") or []
    if metrics:
        lines += ["| group | metric | value | n |", "|---|---|---:|---:|"]
        lines += [f"| {r['group']} | {r['metric']} | {_value(r['value'])} | {r['n']} |" for r in metrics]
    return "\n".join(lines + [""])


def evaluate_card(stats: dict[str, Any]) -> str:
    return default_card(stats) + metrics_section(stats) + "\n" + MODES + "\n" + reasons_markdown(JOB_REASONS)
