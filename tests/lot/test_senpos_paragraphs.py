"""SenPos keeps every paragraph break (issue 30): a short sentence opening a paragraph never
merges into the paragraph before, so a text made of stories joined by blank lines gives each
story the windows it gives alone, except where the documented joining of pieces too small
for an example carries the previous story's tail into it."""

from __future__ import annotations

import json

from conftest import ROOT, shared_path

from annotators.lot.senpos import windows
from annotators.lot.story import parse_story_record, prepare_story

BREAK = "\n\n"


def _prepared(text: str, story_id: str = "s"):
    raw = json.dumps({"id": story_id, "story": text}, ensure_ascii=False).encode()
    return prepare_story(parse_story_record("t:1", raw))


def _stories(path, limit: int) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    texts = [json.loads(line).get("story", "") for line in lines]
    return [t for t in texts if t.strip()][:limit]


def check_joined_stories(texts: list[str]) -> dict[str, int]:
    """Windows of the stories joined by blank lines against each story's windows alone.

    Returns counts: stories with a window alone, those keeping exactly their windows, and
    those whose first window takes the previous stories' tail (the documented exception)."""
    alone = [_prepared(t, f"s{k}") for k, t in enumerate(texts)]
    joined = _prepared(BREAK.join(texts), "joined")
    offsets = [0]
    for story in alone:
        offsets.append(offsets[-1] + len(story.sentences))
    # every story keeps its sentences, and every story start is a paragraph break
    assert joined.sentences == tuple(s for story in alone for s in story.sentences)
    assert set(offsets[1:-1]) <= set(joined.breaks)
    got = windows(joined)
    covered_alone: set[int] = set()
    counts = {"with_window": 0, "kept": 0, "carried_into": 0}
    for k, story in enumerate(alone):
        start, end = offsets[k], offsets[k + 1]
        own = [(a + start, b + start) for a, b in windows(story)]
        inside = [(a, b) for a, b in got if start <= a and b <= end]
        carried = [(a, b) for a, b in got if a < start < b]
        if own:
            counts["with_window"] += 1
        if not carried:
            assert inside == own, k  # exactly the story's own windows
            counts["kept"] += bool(own)
        else:
            # the documented joining: what came before could make no example on its own
            [(a, _)] = carried
            assert not covered_alone & set(range(a, start)), k
            assert all(w in own for w in inside), k
            counts["carried_into"] += bool(own)
        covered_alone |= {i for a, b in own for i in range(a, b)}
    return counts


def test_joined_sample_stories_keep_their_windows():
    texts = _stories(ROOT / "samples" / "lot" / "stories.jsonl", 48)
    # a short paragraph-opening sentence in every other story: the case that lost its break
    texts = [("好。\n" + t) if k % 2 else t for k, t in enumerate(texts)]
    counts = check_joined_stories(texts)
    assert counts["with_window"] >= 40
    assert counts["kept"] + counts["carried_into"] == counts["with_window"]
    assert counts["carried_into"] <= 2


def test_joined_real_stories_keep_their_windows():
    texts = _stories(shared_path("lot", "outgen_val_sample.jsonl"), 200)
    counts = check_joined_stories(texts)
    assert counts["with_window"] >= 150
    assert counts["kept"] + counts["carried_into"] == counts["with_window"]
