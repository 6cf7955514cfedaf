"""The evaluate job's settings (issue 16); flags come from `EvalConfig` (add_config_flags)."""
from __future__ import annotations

import dataclasses

LOT_TASKS = ("clozet", "senpos", "plotcom", "outgen")
TASKS = LOT_TASKS + ("chapterbreak",)
ACCURACY_TASKS = ("clozet", "senpos")
GENERATION_TASKS = ("plotcom", "outgen")
# The field holding the answer, in predictions and gold alike (PEERS.md 1.2: predictions are
# "the same format as test.jsonl" with the model's answer in label, plot or story).
ANSWER_FIELD = {"clozet": "label", "senpos": "label", "plotcom": "plot", "outgen": "story",
                "chapterbreak": "scores"}


def _field(default, text: str, choices=None):
    meta = {"help": text}
    if choices:
        meta["choices"] = choices
    return dataclasses.field(default=default, metadata=meta)


@dataclasses.dataclass(frozen=True)
class EvalConfig:
    task: str = _field("outgen", "the task the predictions answer", TASKS)
    compat: str = _field("original", "original: the official scripts' numbers, quirks included "
                         "(PEERS.md 1.5); clean: the corrected variants (see CARD.md)", ("original", "clean"))
    align: str = _field("line", "how predictions meet gold examples: line (prediction line N <-> gold "
                        "example N, as the official script) or id (their `example_id` or `id` fields); "
                        "chapterbreak always aligns by id", ("line", "id"))
    split: str = _field("test", "the split taken from a gold table (a gold .jsonl file is taken whole)")

    def effective_align(self) -> str:
        return "id" if self.task == "chapterbreak" else self.align
