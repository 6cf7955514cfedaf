"""STORIUM records and tables (SPEC.md, STORIUM; layout ../shared/data/storium/SCHEMA.md).

Ids are readable and stable: `story_id` = game_pid, `entry_id` = "<game_pid>:<seq_id>",
`character_id` = "<game_pid>:<character_seq_id>", `scene_id` = "<game_pid>:<scene_index>",
`card_use_id` = "<entry_id>:<usage>:<position>" (one card can be used by many entries).
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import pyarrow as pa

from schemas.common import with_version

SPLITS = ("train", "validation", "test")


@dataclasses.dataclass(frozen=True)
class Character:
    character_id: str
    story_id: str
    character_seq_id: str
    name: str
    description: str


@dataclasses.dataclass(frozen=True)
class Scene:
    scene_id: str
    story_id: str
    scene_index: int
    n_entries: int
    is_final: bool
    is_ended: bool


@dataclasses.dataclass(frozen=True)
class Entry:
    entry_id: str
    story_id: str
    scene_index: int
    entry_index: int  # position in story order over all scenes
    seq_id: str
    format: str
    role: str
    character_id: str | None
    text: str
    redacted: bool


@dataclasses.dataclass(frozen=True)
class Card:
    card_use_id: str
    card_id: str | None
    story_id: str
    entry_id: str
    usage: str  # place / challenge / target_challenge / played / pickup
    position: int
    namespace: str
    name: str
    description: str
    success_stakes: str
    failure_stakes: str


class Item(NamedTuple):
    """One part of a game (a character or an entry) under its own input id.

    `record` is the parsed Character/Entry, or the Drop saying why it cannot be used, so
    the characters and entries stages account for every part of every kept game.
    """

    input_id: str
    record: Any


@dataclasses.dataclass(frozen=True)
class Game:
    """One parsed game; characters and entries are `Item`s so bad parts are accounted."""

    story_id: str
    input_id: str
    n_words: int
    character_items: tuple
    scenes: tuple
    entry_items: tuple
    cards: tuple

    def characters(self) -> list[Character]:
        return [i.record for i in self.character_items if isinstance(i.record, Character)]

    def entries(self) -> list[Entry]:
        return [i.record for i in self.entry_items if isinstance(i.record, Entry)]


def row(record: Any, **extra: Any) -> dict[str, Any]:
    """Every field of a record dataclass, plus extra columns (e.g. `split`)."""
    out = dataclasses.asdict(record)
    out.update(extra)
    return out


def _schema(name: str, fields: list) -> pa.Schema:
    return with_version(pa.schema([pa.field(n, t, nullable=null) for n, t, null in fields]), name)


S, I, B, F = pa.string(), pa.int64(), pa.bool_(), pa.float64()  # noqa: E741 (short names keep the tables readable)

STORIES_SCHEMA = _schema(
    "storium_stories",
    [
        ("story_id", S, False),
        ("input_id", S, False),
        ("split", S, False),
        ("n_words", I, False),
        ("n_characters", I, False),
        ("n_scenes", I, False),
        ("n_entries", I, False),
        ("n_character_entries", I, False),
        ("n_cards", I, False),
        ("is_completed", B, False),
    ],
)
CHARACTERS_SCHEMA = _schema(
    "storium_characters",
    [
        ("character_id", S, False),
        ("story_id", S, False),
        ("character_seq_id", S, False),
        ("name", S, False),
        ("description", S, False),
        ("split", S, False),
    ],
)
SCENES_SCHEMA = _schema(
    "storium_scenes",
    [
        ("scene_id", S, False),
        ("story_id", S, False),
        ("scene_index", I, False),
        ("n_entries", I, False),
        ("is_final", B, False),
        ("is_ended", B, False),
        ("split", S, False),
    ],
)
ENTRIES_SCHEMA = _schema(
    "storium_entries",
    [
        ("entry_id", S, False),
        ("story_id", S, False),
        ("scene_index", I, False),
        ("entry_index", I, False),
        ("seq_id", S, False),
        ("format", S, False),
        ("role", S, False),
        ("character_id", S, True),
        ("text", S, False),
        ("redacted", B, False),
        ("split", S, False),
    ],
)
CARDS_SCHEMA = _schema(
    "storium_cards",
    [
        ("card_use_id", S, False),
        ("card_id", S, True),
        ("story_id", S, False),
        ("entry_id", S, False),
        ("usage", S, False),
        ("position", I, False),
        ("namespace", S, False),
        ("name", S, False),
        ("description", S, False),
        ("success_stakes", S, False),
        ("failure_stakes", S, False),
        ("split", S, False),
    ],
)
SEGMENT_TYPE = pa.struct(
    [("kind", S), ("field", S), ("source_id", S), ("text", S), ("true_tokens", I), ("tokens", I)]
)  # field: text, a card/character field, or "all" (one leaf)
PACKED_SCHEMA = _schema(
    "storium_packed",
    [
        ("example_id", S, False),
        ("story_id", S, False),
        ("entry_id", S, False),
        ("split", S, False),
        ("segments", pa.list_(SEGMENT_TYPE), False),
        ("special_tokens", I, False),
        ("total_tokens", I, False),
        ("true_total_tokens", I, False),
        ("budget", I, False),
        ("tokenizer", S, False),
    ],
)
EDITS_SCHEMA = _schema(
    "edits",
    [
        ("id", S, False),
        ("model", S, False),
        ("story_id", S, True),
        ("n_generated_tokens", I, False),
        ("n_published_tokens", I, False),
        ("matched_tokens", I, False),
        ("user_precision", F, False),
        ("user_recall", F, False),
        ("user_f1", F, False),
        ("rouge_l_precision", F, False),
        ("rouge_l_recall", F, False),
        ("rouge_l_f1", F, False),
    ],
)
SUMMARY_SCHEMA = _schema(
    "edits_summary",
    [
        ("model", S, False),
        ("n_edits", I, False),
        ("kept_token_share", F, False),
        ("user_precision", F, False),
        ("user_recall", F, False),
        ("user_f1", F, False),
        ("rouge_l_precision", F, False),
        ("rouge_l_recall", F, False),
        ("rouge_l_f1", F, False),
    ],
)
POS_SCHEMA = _schema(
    "edits_preserved_pos",
    [("pos", S, False), ("generated", I, False), ("kept", I, False), ("deleted", I, False), ("kept_share", F, False)],
)
