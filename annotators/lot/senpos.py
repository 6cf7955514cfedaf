"""SenPos (LOT section 3.2): remove one sentence, mark every candidate position `[MASK]`.

A story under 500 words is the unit (LOT extracted paragraphs under 500 words from novels;
storybench's inputs are already story-sized, and every example must rebuild its whole source
story, so longer stories are rejected rather than cut). The removed sentence is never the first or last and has at least 10 Chinese characters; every
position between two remaining adjacent sentences is a candidate, so the label (1-based over
the `[MASK]`s) of sentence i is i. Val/test examples go out as review tasks and come back
with candidates dropped so that exactly one position fits (`apply_review`).
"""
from __future__ import annotations

import dataclasses
from typing import Any

from annotators.core.ids import rng_for, stable_id
from annotators.lot.records import SenPosBuilt
from annotators.lot.story import PreparedStory, field_problem
from annotators.core.outcome import Drop
from annotators.text.zh_clean import han_count
from schemas.lot import SENPOS_MASK, SenPosExample


@dataclasses.dataclass(frozen=True)
class SenPosConfig:
    """Which stories make a SenPos example and which sentence may be removed (LOT 3.2)."""

    max_words: int = dataclasses.field(default=500, metadata={
        "help": 'LOT 3.2: "paragraphs with less than 500 words" (jieba words)'})
    min_removed_han: int = dataclasses.field(default=10, metadata={
        "help": "SPEC: the removed sentence has at least 10 Chinese characters"})
    min_candidates: int = dataclasses.field(default=2, metadata={
        "help": "fewer candidate positions is no task (LOT averages 6.9-8.1)"})


def build_senpos(story: PreparedStory, split: str, *, seed: int,
                 config: SenPosConfig = SenPosConfig()) -> list[SenPosBuilt] | Drop:
    """[SenPosBuilt(example, story, removed sentence index)] for one story, or Drop."""
    n_words = sum(len(w) for w in story.words)
    if n_words >= config.max_words:
        return Drop("over_500_words", f"{n_words} words >= {config.max_words}")
    n = len(story.sentences)
    eligible = [k for k in range(1, n - 1) if han_count(story.sentences[k]) >= config.min_removed_han]
    if n - 2 < config.min_candidates or not eligible:
        return Drop("no_removable_sentence",
                    f"needs >= {config.min_candidates + 2} sentences with a middle one of "
                    f">= {config.min_removed_han} Chinese characters")
    k = rng_for(seed, "senpos", story.story_id).choice(eligible)
    rest = [s for i, s in enumerate(story.sentences) if i != k]
    ex = SenPosExample(
        example_id=stable_id("senpos", story.story_id, k), story_id=story.story_id, split=split,
        story=SENPOS_MASK.join(rest), sentence=story.sentences[k], label=k, n_candidates=n - 2,
        removed_index=k)
    return [SenPosBuilt(ex, story, k)]


def review_task(example: SenPosExample) -> dict[str, Any]:
    """A human review task: the removed sentence and each candidate with its neighbours."""
    parts = example.story.split(SENPOS_MASK)
    candidates = [{"position": k, "before": parts[k - 1], "after": parts[k]}
                  for k in range(1, len(parts))]
    return {"example_id": example.example_id, "story_id": example.story_id,
            "split": example.split, "sentence": example.sentence, "label": example.label,
            "story": example.story, "candidates": candidates,
            "instructions": "Drop every candidate position where the sentence also fits, "
                            "so that exactly one fits; set accept=false to discard the example.",
            "review": {"accept": True, "drop": []}}


def parse_review(obj: Any) -> dict[str, Any] | Drop:
    """Validate one completed review: {"example_id", "accept", "drop": [positions]}."""
    if not isinstance(obj, dict):
        return Drop("not_an_object", f"a JSON {type(obj).__name__}, not an object")
    problem = field_problem(obj, "example_id", (str,), allow_blank=True)
    if problem is not None:
        return problem
    review = obj.get("review", obj)
    if not isinstance(review, dict):
        return Drop("bad_field_type", "review must be an object {accept, drop}")
    if not isinstance(review.get("accept", True), bool):
        return Drop("bad_field_type", "accept must be true or false")
    drop = review.get("drop", [])
    if not isinstance(drop, list) or not all(isinstance(d, int) and not isinstance(d, bool) for d in drop):
        return Drop("bad_field_type", "drop must be a list of candidate positions")
    return {"example_id": obj["example_id"], "accept": review.get("accept", True),
            "drop": sorted(set(drop)), "reviewer": str(review.get("reviewer", obj.get("reviewer", "")))}


def apply_review(example: SenPosExample, review: dict[str, Any]) -> SenPosExample | Drop:
    """Remove the dropped candidates' markers and renumber the label."""
    if not review["accept"]:
        return Drop("review_rejected", "the reviewer discarded the example")
    if example.label in review["drop"]:
        return Drop("review_dropped_true_position", f"position {example.label} is the answer")
    bad = [d for d in review["drop"] if not 1 <= d <= example.n_candidates]
    if bad:
        return Drop("review_bad_position", f"positions {bad} not in 1..{example.n_candidates}")
    parts = example.story.split(SENPOS_MASK)
    story = parts[0]
    for k in range(1, len(parts)):
        story += ("" if k in review["drop"] else SENPOS_MASK) + parts[k]
    label = sum(1 for k in range(1, example.label + 1) if k not in review["drop"])
    return dataclasses.replace(example, story=story, label=label, reviewed=True,
                               n_candidates=example.n_candidates - len(review["drop"]))
