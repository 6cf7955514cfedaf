"""The story-and-token balanced train/validation/test split (paper section 2, "8:1:1 with
respect to both the number of stories and tokens"; original: PEERS.md 4.2, storium-gpt2
data/preprocess/__init__.py `split_dataset`).

Definition: a story's size is the number of whitespace-separated words over the
`description` of all its entries. Stories are taken by size, largest first; each goes to the
split whose assigned words divided by its ratio is smallest. This is longest-processing-time
scheduling, a pure function of the whole list, so arrival order never matters, and a split
with ratio 0 never receives a story (the original divides by it and fails).

Ties (`split_ties`): "original" (default) orders stories by (words, entries, scenes, input
path), all descending, as the original's `sorted(..., reverse=True)`, and picks the split as
its heap does: `heapq` over the splits in descending ratio order, keyed by words / (ratio /
sum of ratios) in floating point, so equal keys go where the heap's layout puts them.
"story_id" orders ties by smaller `story_id` and picks train, then validation, then test,
with exact fractions (storybench before issue 30).
"""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Iterable
from fractions import Fraction
from typing import NamedTuple

from schemas.storium import SPLITS


@dataclasses.dataclass(frozen=True)
class SplitConfig:
    ratios: tuple = dataclasses.field(
        default=(8, 1, 1),
        metadata={"help": "train,validation,test ratios by stories and words (paper section 2: 8:1:1)"},
    )
    split_ties: str = dataclasses.field(
        default="original",
        metadata={
            "help": "ties in size: by entries, scenes and input path, descending, the split picked as the "
            "original's heap does ('original'), or by story_id, train first ('story_id')",
            "choices": ("original", "story_id"),
        },
    )


class StorySize(NamedTuple):
    story_id: str
    words: int
    entries: int = 0  # entries over all scenes, as listed in the file
    scenes: int = 0
    input_id: str = ""  # the file's path relative to the input folder


def parse_ratios(text: str) -> tuple:
    """'8,1,1' -> (8, 1, 1); numbers may be decimals; at least one must be positive."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != len(SPLITS):
        raise ValueError(f"--ratios needs {len(SPLITS)} numbers, got {text!r}")
    values = tuple(Fraction(p) for p in parts)
    if any(v < 0 for v in values) or not any(v > 0 for v in values):
        raise ValueError(f"--ratios must be non-negative with one positive, got {text!r}")
    return tuple(int(v) if v.denominator == 1 else float(v) for v in values)


class _HeapSplit:
    """One split in the original's heap: compared by its key alone, as its `Split.__lt__`."""

    def __init__(self, index: int, share: float):
        self.index, self.share, self.words = index, share, 0

    def __lt__(self, other: _HeapSplit) -> bool:
        return self.words / self.share < other.words / other.share


def _assign_original(sizes: list[StorySize], ratios: list) -> list[int]:
    total = float(sum(ratios))
    heap = sorted(
        (_HeapSplit(i, float(r) / total) for i, r in enumerate(ratios) if r > 0), key=lambda s: s.share, reverse=True
    )  # stable, as the original's sorted()
    order = sorted(
        sizes, key=lambda s: (s.words, s.entries, s.scenes, s.input_id, s.story_id), reverse=True
    )  # story_id: only when paths are equal (direct calls)
    targets = []
    for size in order:
        best = heapq.heappop(heap)
        best.words += size.words
        heapq.heappush(heap, best)
        targets.append((size.story_id, best.index))
    return targets


def _assign_by_id(sizes: list[StorySize], ratios: list) -> list:
    fractions = [Fraction(str(r)) for r in ratios]
    open_splits = [i for i, r in enumerate(fractions) if r > 0]
    assigned = [0] * len(SPLITS)
    targets = []
    for size in sorted(sizes, key=lambda s: (-s.words, s.story_id)):
        target = min(open_splits, key=lambda i: (Fraction(assigned[i]) / fractions[i], i))
        assigned[target] += size.words
        targets.append((size.story_id, target))
    return targets


def assign_splits(sizes: Iterable[tuple], config: SplitConfig = SplitConfig()) -> dict[str, str]:
    """story_id -> split for every StorySize (or (story_id, words) pair), by the definition above."""
    sizes = [StorySize(*s) for s in sizes]
    assign = _assign_original if config.split_ties == "original" else _assign_by_id
    return {story_id: SPLITS[i] for story_id, i in assign(sizes, list(config.ratios))}


def split_report(sizes: Iterable[tuple], assignment: dict[str, str], config: SplitConfig = SplitConfig()) -> dict:
    """Per split: stories and words, their shares, and the target share (for the card)."""
    sizes = {s.story_id: s.words for s in (StorySize(*t) for t in sizes)}
    n_stories, n_words = len(sizes), sum(sizes.values())
    total_ratio = sum(Fraction(str(r)) for r in config.ratios)
    report = {}
    for name, ratio in zip(SPLITS, config.ratios):
        ids = [s for s, split in assignment.items() if split == name]
        words = sum(sizes[s] for s in ids)
        report[name] = {
            "stories": len(ids),
            "words": words,
            "story_share": round(len(ids) / n_stories, 6) if n_stories else 0.0,
            "word_share": round(words / n_words, 6) if n_words else 0.0,
            "target_share": round(float(Fraction(str(ratio)) / total_ratio), 6),
        }
    return report
