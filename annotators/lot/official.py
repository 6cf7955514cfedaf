"""Table 3 figures of official LOT data (`--official-outgen`), measured as the build measures its own.

LOT's released files of ClozeT, SenPos and PlotCom are not reachable (the THUCloud link is
dead, thu-coai/LOT-LongLM issue #8; ../shared/reference/PEERS.md section 1.1); official OutGen
outlines are (the shared task's `{"story", "outline"[, "title"]}` lines, some with the story
hidden). `official_outgen_stats` turns one such line into the per-example numbers
`annotators.lot.stats.example_stats` gives a built OutGen example: the same sentences, jieba
words and outline-word count, so the card's official-data column means what the build
column means. A line whose story is hidden counts for the outline columns only (its story
columns are None, which `Table3Accumulator` leaves out of those averages).
"""

from __future__ import annotations

import json
from typing import Any

from annotators.core import jsonl
from annotators.core.outcome import Drop
from annotators.lot.stats import example_stats
from annotators.lot.story import PreparedStory, decode_line, field_problem, parse_story_record, prepare_story
from annotators.text.tokenizers import get_tokenizer

STORY_COLUMNS = ("chars", "words", "sents")


def _outline(obj: dict[str, Any]) -> list[str] | Drop:
    problem = field_problem(obj, "outline", (list,))
    if problem is not None:
        return problem
    if not all(isinstance(p, str) and p.strip() for p in obj["outline"]):
        return Drop("bad_field_type", "outline must be a list of non-empty strings")
    return list(obj["outline"])


def _story(input_id: str, obj: dict[str, Any]) -> PreparedStory | Drop | None:
    """The line's story prepared as the build prepares one, None when it is hidden (empty)."""
    if not str(obj.get("story") or "").strip():
        return None
    record = parse_story_record(input_id, obj)
    return record if isinstance(record, Drop) else prepare_story(record, outline_method="rake")


def official_outgen_stats(input_id: str, raw: bytes) -> dict[str, Any] | Drop:
    """One official OutGen line -> its Table 3 numbers (`example_stats` of task "outgen"), or Drop."""
    text = decode_line(raw)
    if isinstance(text, Drop):
        return text
    if not text.strip():
        return Drop("blank_line", "empty line in a JSON lines file")
    try:
        obj = jsonl.loads(text)
    except json.JSONDecodeError as exc:
        return Drop("malformed_json", jsonl.malformed_detail(f"{exc.msg} at column {exc.colno}", text))
    if not isinstance(obj, dict):
        return Drop("not_an_object", f"a JSON {type(obj).__name__}, not an object")
    outline = _outline(obj)
    if isinstance(outline, Drop):
        return outline
    story = _story(input_id, obj)
    if isinstance(story, Drop):
        return story
    jieba_words = get_tokenizer("jieba")
    title = str(obj.get("title") or "")
    stats = example_stats(
        "outgen",
        story or _EMPTY,
        title_words=tuple(jieba_words.tokens(title)) if title else (),
        phrase_words=[tuple(jieba_words.tokens(p)) for p in outline],
    )
    if story is None:
        stats.update(dict.fromkeys(STORY_COLUMNS))
    if "title" not in obj:
        stats["title"] = None  # the file has no titles: not 0 words
    return stats


_EMPTY = PreparedStory("", "", "", (), ())
