"""Agreement of our OutGen outlines with LOT's official ones (phrase P/R/F1).

Reads ../shared/data/lot/outgen_val_sample.jsonl (161 {"story", "outline"} records) and
scores `annotators.lot.outline.ranked_phrases` (top `max_phrases`, order ignored) against
the official outlines: all stories, the first half (where the rules were tuned) and the
second half (held out). Usage: `python -m bench.outline_agreement [PATH]`.
"""

from __future__ import annotations

import json
import pathlib
import sys

from annotators.lot.outline import OutlineConfig, outline_scores, ranked_phrases
from bench.common import REAL

DEFAULT_SAMPLE = REAL  # bench.common: ../shared/data or STORYBENCH_SHARED_DATA


def load_sample(path: pathlib.Path = DEFAULT_SAMPLE) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def agreement(records: list[dict], config: OutlineConfig = OutlineConfig()) -> dict[str, dict]:
    """Scores for "all", "tune" (first half, rounded down) and "heldout" (the rest)."""
    predicted = [ranked_phrases(r["story"], config=config)[: config.max_phrases] for r in records]
    official = [r["outline"] for r in records]
    half = len(records) // 2
    return {
        "all": outline_scores(predicted, official),
        "tune": outline_scores(predicted[:half], official[:half]),
        "heldout": outline_scores(predicted[half:], official[half:]),
    }


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    path = pathlib.Path(argv[0]) if argv else DEFAULT_SAMPLE
    for name, s in agreement(load_sample(path)).items():
        print(
            f"{name:8s} stories={s['stories']:4d} precision={s['precision']:.3f} "
            f"recall={s['recall']:.3f} f1={s['f1']:.3f} ({s['matched']}/{s['predicted']} of {s['official']})"
        )


if __name__ == "__main__":
    main()
