"""CARD.md for the LOT job: the generic accounting card plus Table 3, outline agreement,
the definitions (LOT paper section 3) and the reject reasons the job can give."""

from __future__ import annotations

from annotators.core.card import default_card
from annotators.core.figures import Figure
from annotators.core.reasons import reasons_markdown
from annotators.lot.reasons import JOB_REASONS
from annotators.lot.stats import table3_markdown

DEFINITIONS = """## How the data was built
- **Stories**: JSON lines (`story` or `text`; optional `id`, `title`, `outline`, `source`, `url`,
  `license`) or a parquet stories table. `story_id` is the input `id`, else a hash of the text.
  Normalisation `{normalize}` (whitespace: spaces next to Chinese deleted, text otherwise
  verbatim; full: also punctuation normalised). Exact duplicate texts (ignoring whitespace)
  and duplicate ids keep the earliest story in input order (file, line); the rest are rejects.
  Texts of any length are read: SenPos cuts windows from them, while ClozeT, PlotCom and
  OutGen take whole stories of at most {max_story_chars} characters (`--max-story-chars`;
  longer ones are their `story_too_long` rejects).
- **Sentences**: a sentence ends after a run of 。！？；… plus closing quotes/brackets (also
  inside quotations); a newline ends a sentence and a paragraph; a sentence with fewer than
  10 Chinese characters merges into its previous neighbour in its paragraph (a paragraph's
  first into its next), never across a paragraph break: a paragraph that is one short
  sentence stays a sentence of its own, so every break survives into SenPos's windows.
  **Words** (Table 3): jieba precise mode, HMM on, whitespace tokens dropped. **Word counts
  of length limits** (SenPos's 500, the stories job's 50-500): the same tokens without
  punctuation (annotators.text.words).
- **One split for every task**: near-duplicate stories (MinHash LSH candidates confirmed by
  a Jaccard of at least {near_threshold} between their 5-character shingle sets) form a group;
  a stable hash of (seed, the group representative's story_id) picks the group's split, with
  the ClozeT weights {clozet_weights} when the group holds an annotated story, else
  {story_weights} (`--splits`). A story, every SenPos window cut from it and every near-duplicate
  of it are in that split in every task (the leak check below reads the written examples).
- **ClozeT**: from annotations {{story_id, right_index, wrong}}; the right sentence is never the
  first; the wrong candidate must differ from it and be 1/2-2x its length; candidates in seeded
  random order; `label` "0" means plot0 is right. Placeholder `<mask>`.
- **SenPos**: "paragraphs with less than 500 words" (LOT 3.2) from texts of any length: the
  text is cut at its paragraph breaks, paragraphs of 500+ words are cut at sentence ends, and
  pieces too small for an example join the pieces after them while under 500 words; one
  example per window. One sentence of >= 10 Chinese characters, never the window's first or
  last, is removed (seeded); every position between two remaining adjacent sentences is a
  `[MASK]`; `label` is 1-based over the `[MASK]`s. Val/test are exported to
  `review/senpos_<split>.jsonl` and imported back with `--senpos-reviews`.
- **PlotCom**: train removes one seeded non-first sentence (`<MASK>`) from train-split stories
  whose group holds no ClozeT story; val/test: {plotcom_eval}
- **OutGen**: any story with an outline phrase: title, outline (<= 8 RAKE phrases of <= 8 jieba
  words, verbatim substrings of the story, distinct, shuffled with the seed; outline source
  `{outline_from}`, method `{outline_method}`), story. `posrake` is the LOT shared-task
  extractor's method: `jieba.posseg` words, phrases delimited by its stop-word and delimiter
  lists and by POS tags m, x, uj, ul, mq, u, f; RAKE degree/frequency scores; phrases scoring
  above 1, one contained in another merged, at most 8; phrases of the opening clause ranked
  after the others ({outline_opening}); an outline left short filled up to 8 ({outline_fill}).
  `rake`: rake-nltk scores over HMM-off
  jieba tokens with storybench's rules. A story without a title: {title_from}
- **Exports** per task: `<group>.jsonl` in LongLM's original fields and conventions and, for
  ClozeT, SenPos and OutGen, `<group>.source`/`<group>.target` as the public LongLM baselines
  read them (OutGen `title#phrase1#...<extra_id_1>` / `<extra_id_1>story`; ClozeT and SenPos
  the pointer-classifier format: candidates or positions marked `<extra_id_k>`, a final
  `<mask>` query, the answer's sentinel appended in the target). A group is a split, except
  that **SenPos val/test examples nobody has reviewed go to `<split>.unreviewed.*`**:
  `senpos/val.jsonl` and `senpos/test.jsonl` only ever hold human-reviewed examples, as the
  paper's did (the parquet table's `reviewed` column says the same per row).
"""

PLOTCOM_EVAL = {
    "leak-free": "the ClozeT val/test examples, in their own split, the right candidate as `plot` "
    "(`--plotcom-eval leak-free`, the default: no PlotCom example shares a story with "
    "another split).",
    "paper": "sampled as the paper did from all ClozeT examples, train included (929 of 1,232: "
    "each with probability 929/1232, then 465:464 into val:test; `--plotcom-eval paper`). "
    "This puts ClozeT training stories into PlotCom val/test: see the leak check.",
}
OUTLINE_FILL = {
    "longest": "with the longest other phrases, none inside or around a chosen one, as LOT Table 3's "
    "8.00 phrases and the official outlines' fill show: `--outline-fill longest`, the default",
    "none": "not done: `--outline-fill none`, outlines may hold fewer than 8 phrases",
}
OUTLINE_OPENING = {
    "last": "`--outline-opening last`, the default: LOT's official outlines rarely take them",
    "scored": "not done: `--outline-opening scored`, score order",
}
TITLE_FROM = {
    "none": "its title stays empty (`--title-from none`, the default; counted below).",
    "first-sentence": "its first sentence, closing punctuation removed, becomes the title and "
    "the story stays whole (`--title-from first-sentence`).",
}


def _leaks(stats: dict) -> list[str]:
    leaks = stats.get("leaks") or {}
    if not leaks:
        return []
    cfg = stats.get("config", {})
    lines = [
        "## Leak check (read from the written examples)",
        "",
        "| check | count |",
        "|---|---:|",
        f"| stories with examples | {leaks.get('stories', 0)} |",
        f"| near-duplicate groups (2+ stories) | {leaks.get('groups', 0)} |",
        f"| stories in two splits (any tasks) | {leaks['stories_in_two_splits']} |",
        f"| near-duplicate groups in two splits | {leaks['near_duplicate_groups_in_two_splits']} |",
        f"| PlotCom training stories whose group holds a ClozeT story | {leaks['plotcom_train_clozet_stories']} |",
        "",
    ]
    total = sum(
        leaks[k]
        for k in ("stories_in_two_splits", "near_duplicate_groups_in_two_splits", "plotcom_train_clozet_stories")
    )
    if total == 0:
        lines.append("No leak: every story, window and near-duplicate is in one split across all tasks.")
    elif cfg.get("plotcom_eval") == "paper":
        lines.append(
            f"{leaks['stories_in_two_splits']} stories are in two splits because `--plotcom-eval paper` "
            "samples PlotCom val/test from all ClozeT examples as LOT did (ClozeT train stories "
            f"become PlotCom val/test). Examples: {', '.join(leaks['examples']['stories_in_two_splits'])}."
        )
    else:
        lines.append(f"**{total} leaks**; examples: {leaks['examples']}.")
    return lines + [""]


def _titles(stats: dict) -> list[str]:
    titles = stats.get("outgen_titles")
    if titles is None:
        return []
    untitled = titles.get("none", 0) + titles.get("first_sentence", 0)
    return [
        "## OutGen titles",
        "",
        f"{titles.get('input', 0)} OutGen stories came with a title; {untitled} did not "
        f"({titles.get('first_sentence', 0)} took their first sentence as the title, "
        f"{titles.get('none', 0)} kept an empty title).",
        "",
    ]


TABLE3_NOTES = """Columns: **paper** is LOT Table 3; **build** is this output, measured by
annotators.lot.stats (words: jieba precise mode, HMM on, whitespace dropped; sentences as
defined below); **official data** is measured the same way on the official LOT lines given with
`--official-outgen` ({official}). LOT's ClozeT, SenPos and PlotCom files are not reachable (the
THUCloud link is dead, LOT-LongLM issue #8; LongLM's repository ships two ClozeT examples in its
model-input format, too few for a column), so those tasks' official column says n/a.
- **SenPos**: the build applies the rules LOT 3.2 states (a random sentence, never the first or
  last, removed; every position between two adjacent sentences a candidate), so its removed
  sentence is an average one and it has one candidate fewer than sentences. The paper's
  removed sentences are longer than its average sentence (30.48 words against 254.11 / 9.61 =
  26.4) and it has 1.56 candidates fewer than sentences (1.52 in val/test, after review): rules
  the paper does not state (a minimum length of the removed sentence, positions left out)
  would explain it, and with no official SenPos file to test them on, none is applied.
- **OutGen**: outlines are filled up to 8 phrases (`--outline-fill`, see below), as the paper's
  8.00 shows. The official shared-task outlines are filled too but some hold fewer than 8 (their
  extractor stops after 8 picks, counting a phrase a longer one later replaced; some miss
  opening-clause phrases it would pick), so their phrase count sits below the paper's.
"""


def _official_source(stats: dict) -> str:
    path = stats.get("config", {}).get("official_outgen")
    if not path:
        return "not given to this build: the column says n/a"
    official = stats.get("table3_official", {}).get("outgen", {})
    return f"`{path}`, {official.get('# Examples', 0)} lines measured"


def lot_card(stats: dict) -> str:
    """The job's CARD.md text from its stats.json (the job only passes this to JobReport)."""
    agree = stats.get("outline_agreement", {})
    lines = [
        default_card(stats),
        "## LOT Table 3: paper, this build, official data",
        "",
        table3_markdown(stats.get("table3", {}), stats.get("table3_official")),
        "",
        TABLE3_NOTES.format(official=_official_source(stats)),
        *_leaks(stats),
        *_titles(stats),
        "## Outline agreement with input outlines",
        "",
    ]
    if agree.get("stories_with_input_outline"):
        lines.append(
            f"On {agree['stories_with_input_outline']} stories that came with an outline, "
            f"the built outlines share {agree['shared_phrases']} of {agree['predicted_phrases']} "
            f"phrases with the input's {agree['input_phrases']}: precision {agree['precision']}, "
            f"recall {agree['recall']}, F1 {agree['f1']} (exact phrase match)."
        )
    else:
        lines.append("No input story came with an outline, so agreement was not measured.")
    cfg = stats.get("config", {})
    splits = cfg.get("splits", {})
    lines += [
        "",
        DEFINITIONS.format(
            normalize=cfg.get("story", {}).get("normalize", "?"),
            max_story_chars=cfg.get("story", {}).get("max_story_chars", "?"),
            near_threshold=cfg.get("near_duplicates", {}).get("threshold", "?"),
            clozet_weights=",".join(f"{w:g}" for w in splits.get("clozet_stories", [])),
            story_weights=",".join(f"{w:g}" for w in splits.get("stories", [])),
            plotcom_eval=PLOTCOM_EVAL.get(cfg.get("plotcom_eval", "leak-free"), "?"),
            title_from=TITLE_FROM.get(cfg.get("title_from", "none"), "?"),
            outline_from=cfg.get("outline_from", "?"),
            outline_method=cfg.get("outline_method", "rake"),
            outline_fill=OUTLINE_FILL.get(cfg.get("outline_fill", "none"), "?"),
            outline_opening=OUTLINE_OPENING.get(cfg.get("outline_opening", "scored"), "?"),
        ),
        reasons_markdown(JOB_REASONS),
    ]
    return "\n".join(lines)


# What a researcher checks first in a LOT build: how long the stories of each task and split are.
FIGURES = (
    Figure(
        "lot_lengths",
        "Story length per task and split",
        "characters",
        ("clozet", "senpos", "plotcom", "outgen"),
        "chars:story",
        line="split",
    ),
)
