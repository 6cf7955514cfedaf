"""What goes into each packed example, before any token is counted (paper section 3.1;
PEERS.md 4.3, "Context for entry e"; original: storium-gpt2 data/preprocess/gpt2.py).

One example per character entry with text (narrator entries are context only, as in the
original). Parts, in order: the character; the scene's establishment; optional history;
the entry's own card summary (a move's challenge, then the cards played on it; an entry of
another format, e.g. a subplot, has none, as in the original's `summarize_entry`); the text.
Each part is one or more solver leaves (annotators.storium.leaves); an empty part is left
out ("collapses to nothing"). Redacted entries are never examples or context.

Every choice the paper leaves open follows the original; each has a `ContextConfig` field
(a job flag) that flips it, and the card lists them all (annotators.storium.card):
- history: the union of the last `history` story entries and the last
  `character_history` entries by the same character, oldest first. Paper section 3.1 and
  footnote 9: the immediately preceding entry (1 and 1). `history_offset` 1 is the
  original code's off-by-one (each window ends one entry early, so the preceding entry is
  never taken). The establishment shown takes a place in the window and is then left out
  (original `get_entry_summary`); `history_counts_establishment` off leaves it out first.
  Entries enter as their card summary, or their text when they have no card (original),
  or always as their text (`history_content` "text").
- establishment: the place card, or the end of its text when it has none (original
  `summarize_entry`), or place card and text (`establishment_content` "place_and_text");
  the latest establishment of the entry's scene (paper: "the scene's introductory text"),
  or of the story so far (`establishment_scope` "story", the original's list).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict

from annotators.storium.leaves import (
    SegmentSpec,
    card_leaves,
    card_text,
    character_leaves,
    summary_cards,
    summary_leaves,
    text_leaves,
)
from schemas.storium import Card, Entry, Game

OWN_CARD_KINDS = {"target_challenge": "challenge", "played": "card"}  # usage -> segment kind
__all__ = ["Context", "ContextConfig", "SegmentSpec", "build_contexts", "card_text"]


@dataclasses.dataclass(frozen=True)
class ContextConfig:
    history: int = dataclasses.field(
        default=1,
        metadata={
            "help": "context holds the last N story entries (the paper's final model: 1, the immediately "
            "preceding entry, section 3.1; the original script's default is 0)"
        },
    )
    character_history: int = dataclasses.field(
        default=1,
        metadata={
            "help": "context holds the last N entries by the same character (the paper's final model: 1, "
            "footnote 9: when the preceding entry is another character's, also this character's last)"
        },
    )
    history_offset: int = dataclasses.field(
        default=0,
        metadata={
            "help": "entries skipped just before the example when taking both history windows: 0 the paper's "
            "reading (the immediately preceding entry); 1 the original code's off-by-one",
            "choices": (0, 1),
        },
    )
    history_counts_establishment: bool = dataclasses.field(
        default=True,
        metadata={
            "help": "the establishment shown takes a place in the history window and is then left out "
            "(original); off: it is left out before the window is taken"
        },
    )
    history_content: str = dataclasses.field(
        default="summary",
        metadata={
            "help": "history entries as their card summary, their text when they have no card (original "
            "'summary'), or always as their text ('text')",
            "choices": ("summary", "text"),
        },
    )
    establishment_content: str = dataclasses.field(
        default="place_or_text",
        metadata={
            "help": "the establishment as its place card, or the end of its text when it has none (original "
            "'place_or_text'), or as place card and text ('place_and_text')",
            "choices": ("place_or_text", "place_and_text"),
        },
    )
    establishment_scope: str = dataclasses.field(
        default="scene",
        metadata={
            "help": "the latest establishment of the entry's scene (paper: 'the scene's introductory text') "
            "or of the story so far ('story', the original's list)",
            "choices": ("scene", "story"),
        },
    )
    solver_leaves: str = dataclasses.field(
        default="field",
        metadata={
            "help": "one solver leaf per card or character field, each with its separator (original 'field'), "
            "or one per card or character ('segment')",
            "choices": ("field", "segment"),
        },
    )


@dataclasses.dataclass(frozen=True)
class Context:
    story_id: str
    entry_id: str
    segments: tuple


def _usable(entry: Entry) -> bool:
    """An entry the history may show: not redacted, with text (an establishment always, as
    the original keeps establishments that only have a place card)."""
    return not entry.redacted and (bool(entry.text.strip()) or entry.format == "establishment")


def _window(entries: list[Entry], n: int, config: ContextConfig, est_id: str | None) -> list[Entry]:
    """The last n of `entries` (oldest first), after skipping `history_offset` at the end."""
    if not config.history_counts_establishment:
        entries = [e for e in entries if e.entry_id != est_id]
    entries = entries[: max(0, len(entries) - config.history_offset)]
    return entries[-n:] if n > 0 else []


def _history(before: list[Entry], entry: Entry, est: Entry | None, config: ContextConfig) -> list[Entry]:
    est_id = est.entry_id if est else None
    usable = [e for e in before if _usable(e)]
    own = [e for e in usable if e.character_id == entry.character_id]
    chosen = {
        e.entry_id
        for e in _window(usable, config.history, config, est_id)
        + _window(own, config.character_history, config, est_id)
    }
    return [e for e in usable if e.entry_id in chosen and e.entry_id != est_id]


def _establishment(est: Entry | None, cards: list[Card], config: ContextConfig) -> list[SegmentSpec]:
    if est is None:
        return []
    place = [leaf for c in summary_cards(est, cards) for leaf in card_leaves("place", c, config.solver_leaves)]
    if config.establishment_content == "place_and_text" or not place:
        return place + text_leaves("establishment", est)
    return place


def _segments(
    entry: Entry,
    character,
    est: Entry | None,
    history: list[Entry],
    cards: dict[str, list[Card]],
    config: ContextConfig,
) -> tuple:
    leaves = config.solver_leaves
    segs = character_leaves(character, leaves) if character is not None else []
    segs += _establishment(est, cards[est.entry_id] if est else [], config)
    for h in history:
        segs += (
            summary_leaves("history", h, cards[h.entry_id], leaves)
            if config.history_content == "summary"
            else text_leaves("history", h)
        )
    for c in summary_cards(entry, cards[entry.entry_id]):  # a move's challenge, then the cards played
        segs += card_leaves(OWN_CARD_KINDS[c.usage], c, leaves)
    segs.append(SegmentSpec("entry", entry.entry_id, entry.text.strip(), "start"))
    return tuple(s for s in segs if s.text)


def build_contexts(game: Game, config: ContextConfig = ContextConfig()) -> list[Context]:
    """Every example context of one game, in story order."""
    characters = {c.character_id: c for c in game.characters()}
    cards: dict[str, list[Card]] = defaultdict(list)
    for card in game.cards:
        cards[card.entry_id].append(card)
    establishment: dict = {}
    before: list[Entry] = []
    out = []
    for entry in sorted(game.entries(), key=lambda e: e.entry_index):
        scope = entry.scene_index if config.establishment_scope == "scene" else None
        if entry.format == "establishment":
            establishment[scope] = entry
        elif entry.character_id is not None and not entry.redacted and entry.text.strip():
            est = establishment.get(scope)
            history = _history(before, entry, est, config)
            segs = _segments(entry, characters.get(entry.character_id), est, history, cards, config)
            out.append(Context(game.story_id, entry.entry_id, segs))
        before.append(entry)
    return out
