"""The glge job's CARD.md: the default card, the exact score, every choice the paper left
open, per task and level the training size and test/train target overlap (GLGE paper
section 2.4), and the reject reasons the job can give."""

from __future__ import annotations

from typing import Any

from annotators.core.card import default_card
from annotators.core.figures import Figure
from annotators.core.reasons import reasons_markdown
from annotators.glge.reasons import JOB_REASONS
from schemas.glge import LEVELS

DEFINITION = """\
## GLGE levels (GLGE paper section 2.4)

- **easy**: the original files. **medium**: floor(n/2) training lines, those with the
  smallest `stable_int("glge_medium", seed, task, line_index)` (SHA-256; ties by index).
  **hard**: the floor(n/4) training lines with the lowest Score(y). **medium+**: the
  floor(n/2) lowest ("Medium + low-frequency"). n = number of training lines.
- Chosen training lines keep their original order; each is written with a trailing
  newline. dev and test files (and all of easy) are copied byte for byte.
- **Score(y)** = sum of TF(w) over the tokens w of target y / number of y's tokens, where
  TF(w) = occurrences of w among the tokens of all test targets (`test.tgt`).
- **Tokens** of a target: its text lower-cased, split on whitespace (GLGE tasks) or by
  jieba precise mode (LOT tasks), or with `--tokenizer hf:PATH` into a model's subword
  tokens (its `tokenizer.json`, named in config as `hf:<model type>:<sha256 prefix>`; a
  token is its text without the spaces it carries), keeping tokens that contain a letter or
  digit (`str.isalnum` on some character) and are not in the stop-word list (spaCy's English
  list for GLGE tasks, spaCy's Chinese list for LOT tasks; see config).
- A target with no tokens left has no score and is never chosen for hard or medium+ (so
  those levels can hold fewer lines than the fraction when many targets are empty).
  Equal scores (compared as exact fractions) go to the lower line index.
- A line is the bytes before each `\\n`; a `\\r` before it is kept in the output but not
  scored. Files must be UTF-8; a task with a missing or empty file, undecodable bytes or
  src/tgt line counts that differ is rejected whole (see rejects/) and nothing is written.
- LOT tasks (`lot_plotcom`, `lot_outgen`): val becomes dev; rows in example_id order.
  PlotCom src = story with `<MASK>`, tgt = plot. OutGen src =
  `title#phrase1#...#phraseK<extra_id_1>`, tgt = `<extra_id_1>` + story (LongLM's pair). Line breaks
  inside a field become spaces.
- `levels/`: one row per training line per level (`line_index` 0-based in easy train,
  `score`, `n_tokens`, `low_freq_rank`: 0 = lowest score).
"""


def _length(value: Any) -> str:
    return "-" if value is None else f"{value:.1f}"


def _rate(value: Any) -> str:
    return "-" if value is None else f"{100 * value:.2f}%"


def task_table(task: str, summary: dict[str, Any]) -> list[str]:
    """Rows of the per-level table for one task."""
    sizes = summary["sizes"]
    lines = [
        f"### {task} ({summary['origin']}, {summary['lang']})",
        "",
        f"train {sizes['train']}, dev {sizes['dev']}, test {sizes['test']}; training "
        f"targets without tokens: {summary['unscorable_train_targets']}; levels get harder: "
        f"{'yes' if summary['harder'] else 'NO'}",
        "",
        f"| level | train size | avg source length ({summary.get('length_unit', 'words')}) | avg target "
        f"length | test types in train | type overlap | test tokens in train | token overlap |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for level in LEVELS:
        s = summary["levels"][level]
        lines.append(
            f"| {level} | {s['train_size']} | {_length(s.get('avg_src_len'))} | "
            f"{_length(s.get('avg_tgt_len'))} | {s['shared_types']}/{s['test_types']} | "
            f"{_rate(s['type_overlap'])} | {s['covered_tokens']}/{s['test_tokens']} | "
            f"{_rate(s['token_overlap'])} |"
        )
    return lines + [""]


def glge_section(stats: dict[str, Any]) -> str:
    """Markdown appended to the default card."""
    lines = ["", DEFINITION, "## Levels per task", ""]
    tasks = stats.get("glge") or {}
    if not tasks:
        lines += ["No task was built (see the accounting and rejects/).", ""]
    for task, summary in tasks.items():
        lines += task_table(task, summary)
    return "\n".join(lines)


def glge_card(stats: dict[str, Any]) -> str:
    """The whole CARD.md of a glge run (the job passes this to its JobReport)."""
    return default_card(stats) + glge_section(stats) + "\n" + reasons_markdown(JOB_REASONS)


# The low-frequency score of the training examples each level keeps, per task.
FIGURES = (
    Figure(
        "scores",
        "Low-frequency score per level (train)",
        "low-frequency score",
        ("levels",),
        "score",
        line="level",
        panel="task",
        where=(("split", "train"),),
    ),
)
