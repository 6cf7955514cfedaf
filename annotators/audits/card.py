"""CARD.md of the audit jobs: the generic accounting card, the definitions, the paper's table,
and the reject reasons each job can give."""

from __future__ import annotations

from collections.abc import Callable

from annotators.audits import bias, overlap
from annotators.audits.bias_report import table13_markdown
from annotators.audits.overlap_report import table14_markdown
from annotators.audits.reasons import BIAS_REASONS, OVERLAP_REASONS
from annotators.core.card import default_card
from annotators.core.figures import Figure
from annotators.core.reasons import reasons_markdown


def overlap_card(config: overlap.OverlapConfig) -> Callable[[dict], str]:
    """The overlap card for `config` (its n): LOT Table 14 and the n-gram definition."""

    def card(stats: dict) -> str:
        definition = (overlap.__doc__ or "").split("Definition", 1)[-1]
        return "\n".join(
            [
                default_card(stats),
                f"## {config.n}-gram overlap definition",
                "",
                "Definition" + definition,
                table14_markdown(stats["overlap"], config.n),
                reasons_markdown(OVERLAP_REASONS),
            ]
        )

    return card


def bias_card(stats: dict) -> str:
    """The bias card: LOT Table 13 and how each baseline picks."""
    return "\n".join(
        [
            default_card(stats),
            (bias.__doc__ or "").strip(),
            "",
            table13_markdown(stats["bias"]),
            reasons_markdown(BIAS_REASONS),
        ]
    )


# The overlap audit's histogram: each example's share of 8-grams found in the reference.
OVERLAP_FIGURES = (
    Figure(
        "overlap",
        "8-gram overlap with the reference per example",
        "share of the example's 8-grams in the reference",
        ("examples",),
        "ratio",
        line="split",
        panel="task",
    ),
)
