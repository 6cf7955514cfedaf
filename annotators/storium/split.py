"""The story-and-token balanced train/validation/test split (paper section 2, "8:1:1 with
respect to both the number of stories and tokens"; original: PEERS.md 4.2).

Definition: a story's size is the number of whitespace-separated words over the
`description` of all its entries. Stories are taken by size, largest first (ties: smaller
`story_id` first); each goes to the split whose assigned words divided by its ratio is
smallest (ties: train, then validation, then test). This is longest-processing-time
scheduling, a pure function of the whole list, so arrival order never matters. Arithmetic
is exact (fractions), and a split with ratio 0 never receives a story.
"""
from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Iterable

from schemas.storium import SPLITS


@dataclasses.dataclass(frozen=True)
class SplitConfig:
    ratios: tuple = dataclasses.field(default=(8, 1, 1), metadata={
        "help": "train,validation,test ratios by stories and words (paper section 2: 8:1:1)"})


def parse_ratios(text: str) -> tuple:
    """'8,1,1' -> (8, 1, 1); numbers may be decimals; at least one must be positive."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != len(SPLITS):
        raise ValueError(f"--ratios needs {len(SPLITS)} numbers, got {text!r}")
    values = tuple(Fraction(p) for p in parts)
    if any(v < 0 for v in values) or not any(v > 0 for v in values):
        raise ValueError(f"--ratios must be non-negative with one positive, got {text!r}")
    return tuple(int(v) if v.denominator == 1 else float(v) for v in values)


def assign_splits(sizes: Iterable[tuple[str, int]], config: SplitConfig = SplitConfig()) -> dict[str, str]:
    """story_id -> split for every (story_id, n_words) pair, by the definition above."""
    ratios = [Fraction(str(r)) for r in config.ratios]
    open_splits = [i for i, r in enumerate(ratios) if r > 0]
    assigned = [0] * len(SPLITS)
    result: dict[str, str] = {}
    for story_id, words in sorted(sizes, key=lambda kv: (-kv[1], kv[0])):
        target = min(open_splits, key=lambda i: (Fraction(assigned[i]) / ratios[i], i))
        assigned[target] += words
        result[story_id] = SPLITS[target]
    return result


def split_report(sizes: Iterable[tuple[str, int]], assignment: dict[str, str],
                 config: SplitConfig = SplitConfig()) -> dict:
    """Per split: stories and words, their shares, and the target share (for the card)."""
    sizes = dict(sizes)
    n_stories, n_words = len(sizes), sum(sizes.values())
    total_ratio = sum(Fraction(str(r)) for r in config.ratios)
    report = {}
    for name, ratio in zip(SPLITS, config.ratios):
        ids = [s for s, split in assignment.items() if split == name]
        words = sum(sizes[s] for s in ids)
        report[name] = {
            "stories": len(ids), "words": words,
            "story_share": round(len(ids) / n_stories, 6) if n_stories else 0.0,
            "word_share": round(words / n_words, 6) if n_words else 0.0,
            "target_share": round(float(Fraction(str(ratio)) / total_ratio), 6),
        }
    return report
