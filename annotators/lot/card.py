"""CARD.md for the LOT job: the generic accounting card plus Table 3, outline agreement,
the definitions (LOT paper section 3) and the reject reasons the job can give."""
from __future__ import annotations

from annotators.lot.stats import table3_markdown
from annotators.core.card import default_card
from annotators.core.reasons import reasons_markdown
from annotators.lot.reasons import JOB_REASONS

DEFINITIONS = """## How the data was built
- **Stories**: JSON lines (`story` or `text`; optional `id`, `title`, `outline`, `source`, `url`,
  `license`) or a parquet stories table. `story_id` is the input `id`, else a hash of the text.
  Normalisation `{normalize}` (whitespace: spaces next to Chinese deleted, text otherwise
  verbatim; full: also punctuation normalised). Exact duplicate texts (ignoring whitespace)
  and duplicate ids keep the earliest story in input order (file, line); the rest are rejects.
- **Sentences**: a sentence ends after a run of 。！？；… plus closing quotes/brackets (also
  inside quotations); a newline ends a sentence; a sentence with fewer than 10 Chinese characters merges into its previous neighbour (the first into the
  next). **Words**: jieba precise mode, HMM on, whitespace tokens dropped.
- **Splits** are by story: a stable hash of (seed, story_id) against the task's weights
  (defaults: LOT Table 3 sizes). A story is in exactly one split of a task.
- **ClozeT**: from annotations {{story_id, right_index, wrong}}; the right sentence is never the
  first; the wrong candidate must differ from it and be 1/2-2x its length; candidates in seeded
  random order; `label` "0" means plot0 is right. Placeholder `<mask>`.
- **SenPos**: stories under 500 words (jieba tokens, punctuation included); one sentence of
  >= 10 Chinese characters, never the first or last, removed (seeded); every position between two
  remaining adjacent sentences is a `[MASK]`; `label` is 1-based over the `[MASK]`s. Val/test are
  exported to `review/` and imported back with `--senpos-reviews`.
- **PlotCom**: train removes one seeded non-first sentence (`<MASK>`) from stories that are not
  ClozeT stories; val/test are the ClozeT val/test stories with the right candidate as `plot`.
- **OutGen**: title, outline (<= 8 RAKE phrases of <= 8 jieba words, verbatim substrings of the
  story, distinct, shuffled with the seed; outline source `{outline_from}`, method
  `{outline_method}`), story. `posrake` is the LOT shared-task extractor's method: `jieba.posseg`
  words, phrases delimited by its stop-word and delimiter lists and by POS tags m, x, uj, ul,
  mq, u, f; RAKE degree/frequency scores; phrases scoring above 1, one contained in another
  merged, at most 8. `rake`: rake-nltk scores over HMM-off jieba tokens with storybench's rules.
- JSONL exports `<task>/<split>.jsonl` use LongLM's original fields and conventions.
"""


def lot_card(stats: dict) -> str:
    """The job's CARD.md text from its stats.json (the job only passes this to JobReport)."""
    agree = stats.get("outline_agreement", {})
    lines = [default_card(stats), "## LOT Table 3 (computed on this output)", "",
             table3_markdown(stats.get("table3", {})), "",
             "## Outline agreement with input outlines", ""]
    if agree.get("stories_with_input_outline"):
        lines.append(f"On {agree['stories_with_input_outline']} stories that came with an outline, "
                     f"the built outlines share {agree['shared_phrases']} of {agree['predicted_phrases']} "
                     f"phrases with the input's {agree['input_phrases']}: precision {agree['precision']}, "
                     f"recall {agree['recall']}, F1 {agree['f1']} (exact phrase match).")
    else:
        lines.append("No input story came with an outline, so agreement was not measured.")
    cfg = stats.get("config", {})
    lines += ["", DEFINITIONS.format(normalize=cfg.get("story", {}).get("normalize", "?"),
                                     outline_from=cfg.get("outline_from", "?"),
                                     outline_method=cfg.get("outline_method", "rake")),
              reasons_markdown(JOB_REASONS)]
    return "\n".join(lines)
