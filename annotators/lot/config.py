"""The LOT job's run settings, one frozen dataclass whose fields become the job's flags.

Defaults are the paper's: split weights are LOT Table 3's (train, val, test) example counts,
outlines come from RAKE (LOT 3.4). One split serves every task (annotators.lot.splits):
`--clozet-splits` weighs the groups holding annotated stories, `--splits` every other group.
`pipelines.lot` generates its flags from these fields (`pipelines.engine.add_config_flags`),
so each default is written here only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

# Flags of earlier releases that one split per story replaced: each now says what to use.
RETIRED_FLAGS = {"senpos_splits": "--splits", "outgen_splits": "--splits"}


@dataclasses.dataclass(frozen=True)
class LotRunConfig:
    """Seed, outline source, review policy and per-task split weights of one LOT build."""

    seed: int = dataclasses.field(
        default=0, metadata={"help": "seed of every sampled choice (splits, removed sentences, candidate order)"}
    )
    outline_from: str = dataclasses.field(
        default="rake",
        metadata={
            "help": "OutGen outlines: RAKE phrases (LOT 3.4) or the input's own outline",
            "choices": ("rake", "input"),
        },
    )
    outline_method: str = dataclasses.field(
        default="posrake",
        metadata={
            "help": "RAKE outline method: posrake (the LOT shared-task extractor's method: jieba POS "
            "tags and its word lists; phrase F1 0.93 against official outlines) or rake "
            "(rake-nltk scores with storybench's rules; F1 0.79)",
            "choices": ("posrake", "rake"),
        },
    )
    outline_fill: str = dataclasses.field(
        default="longest",
        metadata={
            "help": "posrake outlines with fewer than 8 phrases scoring above 1: longest (filled up to 8 "
            "with the longest other phrases, as LOT Table 3's 8.00 phrases and the official "
            "outlines' fill show) or none (left short, earlier releases)",
            "choices": ("longest", "none"),
        },
    )
    outline_opening: str = dataclasses.field(
        default="last",
        metadata={
            "help": "posrake phrases starting in the story's opening clause: last (ranked after the others, "
            "as LOT's official outlines rarely take them) or scored (score order, earlier releases)",
            "choices": ("last", "scored"),
        },
    )
    official_outgen: str = dataclasses.field(
        default="",
        metadata={
            "help": "official LOT OutGen lines ({story, outline[, title]}, e.g. ../shared/data/lot/"
            "outgen_val_sample.jsonl): measured like the build for the card's Table 3 official-data "
            "column (not given: that column says n/a)"
        },
    )
    senpos_reviewed_only: bool = dataclasses.field(
        default=False, metadata={"help": "drop SenPos val/test examples that have no review"}
    )
    splits: tuple[float, float, float] = dataclasses.field(
        default=(21456.0, 1042.0, 1592.0),
        metadata={
            "help": "train,val,test weights of the one split every task shares, for stories whose "
            "near-duplicate group has no ClozeT annotation; the default is LOT Table 3's SenPos "
            "and OutGen examples together (20,000+1,456 / 800+242 / 863+729)"
        },
    )
    clozet_splits: tuple[float, float, float] = dataclasses.field(
        default=(644.0, 294.0, 294.0),
        metadata={
            "help": "train,val,test weights for groups holding a story with ClozeT annotations (its "
            "split is every task's split for those stories); the default is LOT Table 3's ClozeT sizes"
        },
    )
    plotcom_eval: str = dataclasses.field(
        default="leak-free",
        metadata={
            "help": "PlotCom val/test: leak-free (from ClozeT val/test stories, same split) or paper "
            "(929 of the 1,232 ClozeT examples sampled from every split as LOT did; the card "
            "states the overlap with ClozeT train this creates)",
            "choices": ("leak-free", "paper"),
        },
    )
    title_from: str = dataclasses.field(
        default="none",
        metadata={
            "help": "OutGen title of a story without one: none (empty; the card counts them) or "
            "first-sentence (its first sentence, the story left whole)",
            "choices": ("none", "first-sentence"),
        },
    )

    def split_weights(self) -> dict[str, tuple[float, float, float]]:
        """{flag name: (train, val, test) weights} of the split flags."""
        return {"splits": self.splits, "clozet-splits": self.clozet_splits}


def proportions_problem(weights: Sequence[float]) -> str | None:
    """Why split weights are unusable (not three, negative, all zero), or None."""
    if len(weights) != 3 or min(weights) < 0 or sum(weights) <= 0:
        return f"expected three non-negative weights, got {','.join(map(str, weights))!r}"
    return None


def config_record(run_cfg: LotRunConfig, story_cfg, near_dup) -> dict:
    """The stats.json / CARD.md `config` of a LOT build (keys and order as before the flags
    were generated): the story settings, the task builders' settings and the run's."""
    from annotators.lot.clozet import ClozeTConfig
    from annotators.lot.senpos import SenPosConfig

    return {
        "story": vars(story_cfg),
        "clozet": vars(ClozeTConfig()),
        "senpos": vars(SenPosConfig()),
        "splits": {"stories": list(run_cfg.splits), "clozet_stories": list(run_cfg.clozet_splits)},
        "plotcom_eval": run_cfg.plotcom_eval,
        "title_from": run_cfg.title_from,
        "near_duplicates": vars(near_dup),
        "outline_from": run_cfg.outline_from,
        "outline_method": run_cfg.outline_method,
        "outline_fill": run_cfg.outline_fill,
        "outline_opening": run_cfg.outline_opening,
        "senpos_reviewed_only": run_cfg.senpos_reviewed_only,
        "official_outgen": run_cfg.official_outgen,
    }
