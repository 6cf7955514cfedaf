"""CARD.md for the LOT job: the generic accounting card plus Table 3, outline agreement,
the definitions (LOT paper section 3) and the reject reasons the job can give."""
from __future__ import annotations

from annotators.lot.stats import table3_markdown
from annotators.core.card import default_card
from annotators.core.reasons import reasons_markdown
from annotators.lot.reasons import JOB_REASONS
from annotators.core.figures import Figure

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
  above 1, one contained in another merged, at most 8. `rake`: rake-nltk scores over HMM-off
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
TITLE_FROM = {"none": "its title stays empty (`--title-from none`, the default; counted below).",
              "first-sentence": "its first sentence, closing punctuation removed, becomes the title and "
                                "the story stays whole (`--title-from first-sentence`)."}


def _leaks(stats: dict) -> list[str]:
    leaks = stats.get("leaks") or {}
    if not leaks:
        return []
    cfg = stats.get("config", {})
    lines = ["## Leak check (read from the written examples)", "",
             "| check | count |", "|---|---:|",
             f"| stories with examples | {leaks.get('stories', 0)} |",
             f"| near-duplicate groups (2+ stories) | {leaks.get('groups', 0)} |",
             f"| stories in two splits (any tasks) | {leaks['stories_in_two_splits']} |",
             f"| near-duplicate groups in two splits | {leaks['near_duplicate_groups_in_two_splits']} |",
             f"| PlotCom training stories whose group holds a ClozeT story | {leaks['plotcom_train_clozet_stories']} |",
             ""]
    total = sum(leaks[k] for k in ("stories_in_two_splits", "near_duplicate_groups_in_two_splits",
                                   "plotcom_train_clozet_stories"))
    if total == 0:
        lines.append("No leak: every story, window and near-duplicate is in one split across all tasks.")
    elif cfg.get("plotcom_eval") == "paper":
        lines.append(f"{leaks['stories_in_two_splits']} stories are in two splits because `--plotcom-eval paper` "
                     "samples PlotCom val/test from all ClozeT examples as LOT did (ClozeT train stories "
                     f"become PlotCom val/test). Examples: {', '.join(leaks['examples']['stories_in_two_splits'])}.")
    else:
        lines.append(f"**{total} leaks**; examples: {leaks['examples']}.")
    return lines + [""]


def _titles(stats: dict) -> list[str]:
    titles = stats.get("outgen_titles")
    if titles is None:
        return []
    untitled = titles.get("none", 0) + titles.get("first_sentence", 0)
    return ["## OutGen titles", "",
            f"{titles.get('input', 0)} OutGen stories came with a title; {untitled} did not "
            f"({titles.get('first_sentence', 0)} took their first sentence as the title, "
            f"{titles.get('none', 0)} kept an empty title).", ""]


def lot_card(stats: dict) -> str:
    """The job's CARD.md text from its stats.json (the job only passes this to JobReport)."""
    agree = stats.get("outline_agreement", {})
    lines = [default_card(stats), "## LOT Table 3 (computed on this output)", "",
             table3_markdown(stats.get("table3", {})), "", *_leaks(stats), *_titles(stats),
             "## Outline agreement with input outlines", ""]
    if agree.get("stories_with_input_outline"):
        lines.append(f"On {agree['stories_with_input_outline']} stories that came with an outline, "
                     f"the built outlines share {agree['shared_phrases']} of {agree['predicted_phrases']} "
                     f"phrases with the input's {agree['input_phrases']}: precision {agree['precision']}, "
                     f"recall {agree['recall']}, F1 {agree['f1']} (exact phrase match).")
    else:
        lines.append("No input story came with an outline, so agreement was not measured.")
    cfg = stats.get("config", {})
    splits = cfg.get("splits", {})
    lines += ["", DEFINITIONS.format(
        normalize=cfg.get("story", {}).get("normalize", "?"),
        max_story_chars=cfg.get("story", {}).get("max_story_chars", "?"),
        near_threshold=cfg.get("near_duplicates", {}).get("threshold", "?"),
        clozet_weights=",".join(f"{w:g}" for w in splits.get("clozet_stories", [])),
        story_weights=",".join(f"{w:g}" for w in splits.get("stories", [])),
        plotcom_eval=PLOTCOM_EVAL.get(cfg.get("plotcom_eval", "leak-free"), "?"),
        title_from=TITLE_FROM.get(cfg.get("title_from", "none"), "?"),
        outline_from=cfg.get("outline_from", "?"), outline_method=cfg.get("outline_method", "rake")),
        reasons_markdown(JOB_REASONS)]
    return "\n".join(lines)


# What a researcher checks first in a LOT build: how long the stories of each task and split are.
FIGURES = (Figure("lot_lengths", "Story length per task and split", "characters",
                  ("clozet", "senpos", "plotcom", "outgen"), "chars:story", line="split"),)
