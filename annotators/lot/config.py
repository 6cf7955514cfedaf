"""The LOT job's run settings, one frozen dataclass whose fields become the job's flags.

Defaults are the paper's: split weights are LOT Table 3's (train, val, test) example counts
per task, outlines come from RAKE (LOT 3.4). `pipelines.lot` generates `--seed`,
`--outline-from`, `--outline-method`, `--senpos-reviewed-only` and `--{clozet,senpos,outgen}-splits` from it
(`pipelines.engine.add_config_flags`), so each default is written here only.
"""
from __future__ import annotations

import dataclasses
from typing import Sequence

SPLIT_TASKS = ("clozet", "senpos", "outgen")  # PlotCom follows ClozeT's stories


def _split_field(task: str, default: tuple[float, float, float]):
    return dataclasses.field(default=default, metadata={
        "help": f"{task} train,val,test weights; the default is LOT Table 3's {task} sizes"})


@dataclasses.dataclass(frozen=True)
class LotRunConfig:
    """Seed, outline source, review policy and per-task split weights of one LOT build."""

    seed: int = dataclasses.field(default=0, metadata={
        "help": "seed of every sampled choice (splits, removed sentences, candidate order)"})
    outline_from: str = dataclasses.field(default="rake", metadata={
        "help": "OutGen outlines: RAKE phrases (LOT 3.4) or the input's own outline",
        "choices": ("rake", "input")})
    outline_method: str = dataclasses.field(default="posrake", metadata={
        "help": "RAKE outline method: posrake (the LOT shared-task extractor's method: jieba POS "
                "tags and its word lists; phrase F1 0.91 against official outlines) or rake "
                "(rake-nltk scores with storybench's rules; F1 0.79)",
        "choices": ("posrake", "rake")})
    senpos_reviewed_only: bool = dataclasses.field(default=False, metadata={
        "help": "drop SenPos val/test examples that have no review"})
    clozet_splits: tuple[float, float, float] = _split_field("ClozeT", (644.0, 294.0, 294.0))
    senpos_splits: tuple[float, float, float] = _split_field("SenPos", (20000.0, 800.0, 863.0))
    outgen_splits: tuple[float, float, float] = _split_field("OutGen", (1456.0, 242.0, 729.0))

    def splits(self) -> dict[str, tuple[float, float, float]]:
        """{task: (train, val, test) weights} for the tasks that draw their own splits."""
        return {task: getattr(self, f"{task}_splits") for task in SPLIT_TASKS}


def proportions_problem(weights: Sequence[float]) -> str | None:
    """Why split weights are unusable (not three, negative, all zero), or None."""
    if len(weights) != 3 or min(weights) < 0 or sum(weights) <= 0:
        return f"expected three non-negative weights, got {','.join(map(str, weights))!r}"
    return None
