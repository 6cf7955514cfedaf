"""ClozeT (LOT section 3.1) from human annotations, and PlotCom (section 3.3).

An annotation names a story, the index of the right sentence (never the first: index 0) in
`split_sentences` order, and a wrong candidate an annotator wrote. `build_clozet` validates
it against the story and puts the two candidates in seeded random order (label "0" means
plot0 is right). PlotCom training examples remove one random non-first sentence; PlotCom
val/test are ClozeT val/test (incomplete story + right candidate).
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from annotators.core import jsonl
from annotators.core.dedup import input_order
from annotators.core.ids import rng_for, stable_id
from annotators.core.outcome import Drop
from annotators.lot.story import PreparedStory, decode_line, field_problem
from schemas.lot import CLOZET_MASK, PLOTCOM_MASK, ClozeTExample, PlotComExample


@dataclasses.dataclass(frozen=True)
class ClozeTConfig:
    """ClozeT annotation checks (LOT appendix, ClozeT guideline)."""

    min_length_ratio: float = dataclasses.field(
        default=0.5, metadata={"help": "LOT appendix: the wrong candidate is at least 1/2 the right sentence's length"}
    )
    max_length_ratio: float = dataclasses.field(
        default=2.0,
        metadata={"help": "LOT appendix: the wrong candidate is at most 2 times the right sentence's length"},
    )


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def parse_annotation(input_id: str, raw: bytes) -> dict[str, Any] | Drop:
    """One JSON line {"story_id", "right_index", "wrong", ["right"], ["annotator"]}."""
    decoded = decode_line(bytes(raw))
    if isinstance(decoded, Drop):
        return decoded
    try:
        obj = jsonl.loads(decoded)
    except json.JSONDecodeError as exc:
        return Drop("malformed_json", jsonl.malformed_detail(f"{exc.msg} at column {exc.colno}", decoded))
    except (ValueError, RecursionError) as exc:  # RecursionError: JSON nested too deeply
        return Drop("malformed_json", jsonl.malformed_detail(str(exc)[:200], decoded))
    if not isinstance(obj, dict):
        return Drop("not_an_object", f"a JSON {type(obj).__name__}, not an object")
    problem = (
        field_problem(obj, "story_id", (str, int), allow_blank=True)
        or field_problem(obj, "right_index", (int,), allow_bool=False)
        or field_problem(obj, "wrong", (str,))
    )
    if problem is not None:
        return problem
    right = obj.get("right")
    return {
        "input_id": input_id,
        "story_id": str(obj["story_id"]),
        "right_index": obj["right_index"],
        "wrong": obj["wrong"].strip(),
        "right": right if isinstance(right, str) else None,
        "annotator": str(obj.get("annotator") or ""),
    }


# An annotation of a story the build removed as an exact duplicate of another is an annotation
# of the kept copy's text: `retarget_annotation` moves it there, keeping the id it named in
# NAMED_ID, unless the kept copy has an annotation of its own (`annotation_of_duplicate`).
NAMED_ID = "named_story_id"


def moved_targets(links, held, dropped) -> dict[str, str]:
    """Annotated story id -> the id of the story that keeps its text, for each id an annotation
    names that is a removed exact duplicate's (`links`: (id, steps.DuplicateLink) pairs). The
    earliest removed copy with the id decides; nothing moves when a kept story holds the id
    itself (`held`: the annotation names that story) or when the copy that kept the text was
    removed in turn (`dropped`: input ids; a repeated id), so no kept copy has the text."""
    out: dict[str, str] = {}
    seen, held = set(), set(held)
    for story_id, link in sorted(links):
        if story_id in seen:
            continue
        seen.add(story_id)
        if story_id not in held and link.kept_input_id not in dropped:
            out[story_id] = link.kept_story_id
    return out


def retarget_annotation(ann: dict[str, Any], moved: dict[str, str]) -> dict[str, Any]:
    """The annotation, naming the kept copy when the story it names is a removed exact
    duplicate (`moved_targets`): the same text, so the annotation holds for it."""
    kept = moved.get(ann["story_id"])
    return ann if kept is None else {**ann, "story_id": kept, NAMED_ID: ann["story_id"]}


def annotation_of_duplicate(ann: dict[str, Any], anns: list[dict[str, Any]]) -> Drop | None:
    """`annotation_of_duplicate` when `ann` was moved from a removed exact duplicate and its
    story (whose annotations are `anns`) has an annotation of its own, which wins."""
    named = ann.get(NAMED_ID)
    own = [a["input_id"] for a in anns if NAMED_ID not in a] if named is not None else []
    if not own:
        return None
    return Drop(
        "annotation_of_duplicate",
        f"story {named} is an exact duplicate of story {ann['story_id']}, which keeps the text and "
        f"has its own annotation ({min(own, key=input_order)})",
    )


def effective_annotations(anns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A story's annotations without those `annotation_of_duplicate` rejects."""
    return [a for a in anns if annotation_of_duplicate(a, anns) is None]


def check_annotation(story: PreparedStory, ann: dict[str, Any], config: ClozeTConfig) -> Drop | None:
    """The reason an annotation cannot be used with `story`, or None."""
    n, i = len(story.sentences), ann["right_index"]
    if i == 0:
        return Drop("first_sentence", "the right sentence may not be the first sentence")
    if not 0 < i < n:
        return Drop("index_out_of_range", f"right_index {i} not in 1..{n - 1}")
    right = story.sentences[i]
    if ann["right"] is not None and _squash(ann["right"]) != _squash(right):
        return Drop("right_sentence_mismatch", f"annotation says {ann['right']!r}, story has {right!r}")
    if _squash(ann["wrong"]) == _squash(right):
        return Drop("wrong_equals_right", "the wrong candidate equals the right sentence")
    ratio = len(_squash(ann["wrong"])) / max(1, len(_squash(right)))
    if not config.min_length_ratio <= ratio <= config.max_length_ratio:
        return Drop(
            "wrong_length_ratio",
            f"wrong/right length {ratio:.2f} outside [{config.min_length_ratio}, {config.max_length_ratio}]",
        )
    return None


def masked(story: PreparedStory, index: int, mask: str) -> str:
    return "".join(mask if k == index else s for k, s in enumerate(story.sentences))


def build_clozet(
    story: PreparedStory, ann: dict[str, Any], split: str, *, seed: int, config: ClozeTConfig = ClozeTConfig()
) -> ClozeTExample | Drop:
    problem = check_annotation(story, ann, config)
    if problem is not None:
        return problem
    i, right, wrong = ann["right_index"], story.sentences[ann["right_index"]], ann["wrong"]
    example_id = stable_id("clozet", story.story_id, i, wrong)
    right_first = rng_for(seed, "clozet", example_id).random() < 0.5
    plot0, plot1 = (right, wrong) if right_first else (wrong, right)
    return ClozeTExample(
        example_id,
        story.story_id,
        split,
        masked(story, i, CLOZET_MASK),
        plot0,
        plot1,
        "0" if right_first else "1",
        i,
        ann["annotator"],
    )


def plotcom_from_clozet(story: PreparedStory, example: ClozeTExample, split: str | None = None) -> PlotComExample:
    """PlotCom val/test: the ClozeT story with the right candidate as the target (in the
    ClozeT example's split unless `split` says otherwise: `--plotcom-eval paper`)."""
    i = example.right_index
    return PlotComExample(
        stable_id("plotcom", story.story_id, i),
        story.story_id,
        split or example.split,
        masked(story, i, PLOTCOM_MASK),
        story.sentences[i],
        i,
        "clozet",
    )


def build_plotcom_train(story: PreparedStory, *, seed: int) -> PlotComExample:
    """PlotCom training: one random non-first sentence becomes `<MASK>`."""
    i = rng_for(seed, "plotcom", story.story_id).randrange(1, len(story.sentences))
    return PlotComExample(
        stable_id("plotcom", story.story_id, i),
        story.story_id,
        "train",
        masked(story, i, PLOTCOM_MASK),
        story.sentences[i],
        i,
        "auto",
    )


def annotation_task(story: PreparedStory) -> dict[str, Any]:
    """A ClozeT annotation task: numbered sentences and what to fill in."""
    return {
        "story_id": story.story_id,
        "title": story.title,
        "story": story.joined,
        "sentences": [{"index": k, "text": s} for k, s in enumerate(story.sentences)],
        "instructions": "Pick right_index (never 0) and write `wrong`: a minimal edit of that "
        "sentence that breaks commonsense, 1/2 to 2 times its length.",
        "annotation": {
            "story_id": story.story_id,
            "right_index": None,
            "right": None,
            "wrong": None,
            "annotator": None,
        },
    }
