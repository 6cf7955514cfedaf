"""What goes into each packed example, before any token is counted (paper section 3.1;
PEERS.md 4.3, "Context for entry e").

One example per character entry with text (narrator entries are context only, as in the
original). Segments, in order: the character (name + description); the scene's latest
establishment before the entry, as its place card and its text; optional history (the
union of the last `history` story entries and the last `character_history` entries by the
same character, oldest first, the establishment already shown excluded); the entry's
cards (the challenge played on, then the cards played, in order); the entry text. A
missing or empty segment is left out ("collapses to nothing"). Redacted entries are never
examples or context. `keep` says which end survives a cut: cards and the entry text keep
their beginning, history and establishment text keep their end (narrative leading up to
the entry; the original trims entry-text summaries from the start).
"""
from __future__ import annotations

import dataclasses
from collections import defaultdict

from schemas.storium import Card, Entry, Game


@dataclasses.dataclass(frozen=True)
class ContextConfig:
    history: int = dataclasses.field(default=1, metadata={
        "help": "context holds the last N story entries (the paper's final model: 1, the immediately "
                "preceding entry, section 3.1; the original script's default is 0)"})
    character_history: int = dataclasses.field(default=1, metadata={
        "help": "context holds the last N entries by the same character (the paper's final model: 1, "
                "footnote 9: when the preceding entry is another character's, also this character's last)"})


@dataclasses.dataclass(frozen=True)
class SegmentSpec:
    kind: str  # character / place / establishment / history / challenge / card / entry
    source_id: str
    text: str
    keep: str  # "start" keeps the beginning, "end" keeps the end


@dataclasses.dataclass(frozen=True)
class Context:
    story_id: str
    entry_id: str
    segments: tuple


def card_text(card: Card) -> str:
    """A card's non-empty name, description and stakes (the original's card summary)."""
    parts = [card.name.strip(), card.description.strip()]
    if card.success_stakes.strip():
        parts.append("Success: " + card.success_stakes.strip())
    if card.failure_stakes.strip():
        parts.append("Failure: " + card.failure_stakes.strip())
    return "\n".join(p for p in parts if p)


def _has_text(entry: Entry) -> bool:
    return not entry.redacted and bool(entry.text.strip())


def _history(before: list[Entry], entry: Entry, skip: str | None, config: ContextConfig) -> list[Entry]:
    usable = [e for e in before if _has_text(e) and e.entry_id != skip]
    recent = usable[-config.history:] if config.history > 0 else []
    own = [e for e in usable if e.character_id == entry.character_id]
    own = own[-config.character_history:] if config.character_history > 0 else []
    chosen = {e.entry_id for e in recent + own}
    return [e for e in usable if e.entry_id in chosen]


def _segments(entry: Entry, character, est: Entry | None, history: list[Entry],
              cards: dict[str, list[Card]]) -> tuple:
    segs = []
    if character is not None:
        text = "\n".join(p for p in (character.name.strip(), character.description.strip()) if p)
        segs.append(SegmentSpec("character", character.character_id, text, "start"))
    if est is not None:
        for card in (c for c in cards[est.entry_id] if c.usage == "place"):
            segs.append(SegmentSpec("place", card.card_use_id, card_text(card), "start"))
        if not est.redacted:
            segs.append(SegmentSpec("establishment", est.entry_id, est.text.strip(), "end"))
    segs += [SegmentSpec("history", h.entry_id, h.text.strip(), "end") for h in history]
    own = sorted(cards[entry.entry_id], key=lambda c: c.position)
    segs += [SegmentSpec("challenge", c.card_use_id, card_text(c), "start")
             for c in own if c.usage == "target_challenge"]
    segs += [SegmentSpec("card", c.card_use_id, card_text(c), "start") for c in own if c.usage == "played"]
    segs.append(SegmentSpec("entry", entry.entry_id, entry.text.strip(), "start"))
    return tuple(s for s in segs if s.text)


def build_contexts(game: Game, config: ContextConfig = ContextConfig()) -> list[Context]:
    """Every example context of one game, in story order."""
    characters = {c.character_id: c for c in game.characters()}
    cards: dict[str, list[Card]] = defaultdict(list)
    for card in game.cards:
        cards[card.entry_id].append(card)
    establishment: dict[int, Entry] = {}
    before: list[Entry] = []
    out = []
    for entry in sorted(game.entries(), key=lambda e: e.entry_index):
        if entry.format == "establishment":
            establishment[entry.scene_index] = entry
        elif entry.character_id is not None and _has_text(entry):
            est = establishment.get(entry.scene_index)
            history = _history(before, entry, est.entry_id if est else None, config)
            segs = _segments(entry, characters.get(entry.character_id), est, history, cards)
            out.append(Context(game.story_id, entry.entry_id, segs))
        before.append(entry)
    return out
