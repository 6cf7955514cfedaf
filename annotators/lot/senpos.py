"""SenPos (LOT section 3.2): remove one sentence, mark every candidate position `[MASK]`.

LOT extracted "paragraphs with less than 500 words" from crawled stories; so does this
builder, from texts of any length (a story, a page of stories, a novel):
1. the text is cut at its own paragraph breaks (PreparedStory.breaks);
2. a paragraph of `max_words` words or more is cut at sentence ends into pieces under
   `max_words` (a single sentence that long is left out), and so is one of more than
   `max_candidates` + 2 sentences (the LongLM export marks candidates with T5's 99 sentinels);
3. pieces too small to make an example alone (fewer than `min_candidates` + 2 sentences, or
   no removable sentence) are joined with the pieces after them while the window stays under
   `max_words` words; a window closes as soon as it can make an example;
4. one example per window. Words are counted by the shared definition
   (annotators.text.words), the one `pipelines.stories` filters by.
Inside a window the paper's rules hold: the removed sentence is never the window's first or
last and has at least 10 Chinese characters; every position between two remaining adjacent
sentences is a candidate, so the label (1-based over the `[MASK]`s) of the window's
sentence i is i. The example's `removed_index` is the sentence's index in the whole text, so
ids stay unique and a story that is one window keeps the id it always had. Val/test examples
go out as review tasks and come back with candidates dropped so that exactly one position
fits (`apply_review`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from annotators.core.ids import rng_for, stable_id
from annotators.core.outcome import Drop
from annotators.lot.records import SenPosBuilt
from annotators.lot.story import PreparedStory, field_problem
from annotators.text.words import word_counts
from annotators.text.zh_clean import han_count
from schemas.lot import SENPOS_MASK, SenPosExample


@dataclasses.dataclass(frozen=True)
class SenPosConfig:
    """Which windows make a SenPos example and which sentence may be removed (LOT 3.2)."""

    max_words: int = dataclasses.field(
        default=500, metadata={"help": 'LOT 3.2: "paragraphs with less than 500 words" (annotators.text.words)'}
    )
    min_removed_han: int = dataclasses.field(
        default=10, metadata={"help": "SPEC: the removed sentence has at least 10 Chinese characters"}
    )
    min_candidates: int = dataclasses.field(
        default=2, metadata={"help": "fewer candidate positions is no task (LOT averages 6.9-8.1)"}
    )
    max_candidates: int = dataclasses.field(
        default=99,
        metadata={
            "help": "a window has at most this many candidate positions (T5's <extra_id_1..99> mark them "
            "in the LongLM export)"
        },
    )


def _removable(han: list[int], start: int, end: int, config: SenPosConfig) -> list[int]:
    """Sentences of window [start, end) that may be removed (none if the window is too small);
    `han`: each sentence's Han character count."""
    if end - start - 2 < config.min_candidates:
        return []
    return [k for k in range(start + 1, end - 1) if han[k] >= config.min_removed_han]


def _pieces(counts: list[int], breaks: tuple[int, ...], max_words: int, max_sentences: int) -> list[tuple[int, int]]:
    """Paragraphs as sentence ranges, those of `max_words` words or more (or more than
    `max_sentences` sentences) cut at sentence ends."""
    edges = [0, *(b for b in breaks if 0 < b < len(counts)), len(counts)]
    pieces = []
    for a, b in zip(edges, edges[1:]):
        start, words = a, 0
        for i in range(a, b):
            if i > start and (words + counts[i] >= max_words or i - start >= max_sentences):
                pieces.append((start, i))
                start, words = i, 0
            words += counts[i]
        if start < b:
            pieces.append((start, b))
    return pieces


def windows(
    story: PreparedStory, config: SenPosConfig = SenPosConfig(), han: list[int] | None = None
) -> list[tuple[int, int]]:
    """The [start, end) sentence ranges of the text's SenPos windows, in order (`han`: each
    sentence's Han character count, counted here when not given)."""
    n = len(story.sentences)
    if han is None:
        han = [han_count(s) for s in story.sentences]
    if not story.breaks and n <= config.max_candidates + 2 and sum(map(len, story.sentences)) < config.max_words:
        # one paragraph of fewer characters than the word limit: fewer words too (a word has
        # at least one character), so the whole text is the one possible window
        return [(0, n)] if _removable(han, 0, n, config) else []
    counts = word_counts(story.words)
    out: list[tuple[int, int]] = []
    current: tuple[int, int] | None = None
    current_words = 0
    max_sentences = config.max_candidates + 2
    for a, b in _pieces(counts, story.breaks, config.max_words, max_sentences):
        words = sum(counts[a:b])
        if words >= config.max_words:  # one sentence of max_words or more: no window holds it
            current = None
            continue
        if current is not None and (current_words + words >= config.max_words or b - current[0] > max_sentences):
            current = None  # what came before could not make an example on its own
        if current is None:
            current, current_words = (a, b), words
        else:
            current, current_words = (current[0], b), current_words + words
        if _removable(han, *current, config):
            out.append(current)
            current = None
    return out


def build_senpos(
    story: PreparedStory, split: str, *, seed: int, config: SenPosConfig = SenPosConfig()
) -> list[SenPosBuilt] | Drop:
    """[SenPosBuilt(example, story, removed sentence index, window)] per window, or Drop."""
    han = [han_count(s) for s in story.sentences]
    found = windows(story, config, han)
    if not found:
        n_words = sum(word_counts(story.words))
        return Drop(
            "no_removable_sentence",
            f"no window under {config.max_words} words ({n_words} words in all) has "
            f"{config.min_candidates + 2}+ sentences with a middle one of >= {config.min_removed_han} "
            f"Chinese characters",
        )
    whole = found == [(0, len(story.sentences))]
    built = []
    for start, end in found:
        key = (story.story_id,) if whole else (story.story_id, start)
        k = rng_for(seed, "senpos", *key).choice(_removable(han, start, end, config))
        rest = [story.sentences[i] for i in range(start, end) if i != k]
        ex = SenPosExample(
            example_id=stable_id("senpos", story.story_id, k),
            story_id=story.story_id,
            split=split,
            story=SENPOS_MASK.join(rest),
            sentence=story.sentences[k],
            label=k - start,
            n_candidates=end - start - 2,
            removed_index=k,
        )
        built.append(SenPosBuilt(ex, story, k, (start, end)))
    return built


def review_task(example: SenPosExample) -> dict[str, Any]:
    """A human review task: the removed sentence and each candidate with its neighbours."""
    parts = example.story.split(SENPOS_MASK)
    candidates = [{"position": k, "before": parts[k - 1], "after": parts[k]} for k in range(1, len(parts))]
    return {
        "example_id": example.example_id,
        "story_id": example.story_id,
        "split": example.split,
        "sentence": example.sentence,
        "label": example.label,
        "story": example.story,
        "candidates": candidates,
        "instructions": "Drop every candidate position where the sentence also fits, "
        "so that exactly one fits; set accept=true to keep the example, or accept=false to discard it.",
        # pending until a reviewer sets accept: a task fed back unedited once counted as reviewed
        "review": {"accept": None, "drop": []},
    }


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
    if "accept" in review and review["accept"] is None:
        return Drop("review_pending", "accept is still null: the task was not reviewed (set it to true or false)")
    if not isinstance(review.get("accept", True), bool):
        return Drop("bad_field_type", "accept must be true or false")
    drop = review.get("drop", [])
    if not isinstance(drop, list) or not all(isinstance(d, int) and not isinstance(d, bool) for d in drop):
        return Drop("bad_field_type", "drop must be a list of candidate positions")
    return {
        "example_id": obj["example_id"],
        "accept": review.get("accept", True),
        "drop": sorted(set(drop)),
        "reviewer": str(review.get("reviewer", obj.get("reviewer", ""))),
    }


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
    return dataclasses.replace(
        example, story=story, label=label, reviewed=True, n_candidates=example.n_candidates - len(review["drop"])
    )
