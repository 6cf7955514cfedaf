"""The evaluate job's settings (issue 16); flags come from `EvalConfig` (add_config_flags)."""
from __future__ import annotations

import dataclasses

from annotators.evaluate.glge_metrics import GLGE_TASKS, QG_TASKS

LOT_TASKS = ("clozet", "senpos", "plotcom", "outgen")
TASKS = LOT_TASKS + ("chapterbreak",) + GLGE_TASKS
ACCURACY_TASKS = ("clozet", "senpos")
GENERATION_TASKS = ("plotcom", "outgen")
# The field holding the answer, in predictions and gold alike (PEERS.md 1.2: predictions are
# "the same format as test.jsonl" with the model's answer in label, plot or story).
ANSWER_FIELD = {"clozet": "label", "senpos": "label", "plotcom": "plot", "outgen": "story",
                "chapterbreak": "scores", **{t: "text" for t in GLGE_TASKS}}


def _field(default, text: str, choices=None):
    meta = {"help": text}
    if choices:
        meta["choices"] = choices
    return dataclasses.field(default=default, metadata=meta)


@dataclasses.dataclass(frozen=True)
class EvalConfig:
    task: str = _field("outgen", "the task the predictions answer (LOT, chapterbreak or a GLGE task)", TASKS)
    compat: str = _field("original", "original: the official scripts' numbers, quirks included "
                         "(PEERS.md 1.5); clean: the corrected variants (see CARD.md)", ("original", "clean"))
    align: str = _field("line", "how predictions meet gold examples: line (prediction line N <-> gold "
                        "example N, as the official script) or id (their `example_id` or `id` fields); "
                        "chapterbreak always aligns by id", ("line", "id"))
    split: str = _field("test", "the split taken from a gold table (a gold .jsonl file is taken whole)")
    source: str = _field("", "GLGE question generation: the source file ({split}.src, one line per gold "
                         "line); --compat original needs it, as the official script groups examples by "
                         "their source sentence")

    def effective_align(self) -> str:
        """chapterbreak always aligns by id, GLGE's plain-text lines always by line."""
        if self.task == "chapterbreak":
            return "id"
        return "line" if self.task in GLGE_TASKS else self.align

    def problem(self) -> str | None:
        """Why this combination cannot run, or None."""
        if self.source and self.task not in QG_TASKS:
            return f"--source is read for GLGE question generation only, not for {self.task}"
        if self.task in QG_TASKS and self.compat == "original":
            if not self.source:
                return (f"--compat original for {self.task} needs --source (the {self.split}.src file): "
                        "the official script groups examples by their source sentence")
            from annotators.evaluate import meteor

            missing = meteor.problem()
            if missing:
                return f"--compat original for {self.task} reports METEOR: {missing}"
        return None
