"""The solver leaves of one context part: a character, a card, an entry's summary.

A leaf is one `SegmentSpec`, one length variable of the Cassowary solver, with its own
separator token. `field` leaves (the original, data/preprocess/gpt2.py `summarize_character`,
`summarize_card`): a character is two leaves, name and description, a missing one packed as
the special token `<|MISSING|>`; a card is one leaf per non-empty field among name,
description, success_stakes and failure_stakes. `segment` leaves (storybench before issue
30): a character or a card is one leaf holding all its fields, left out when empty.

An entry's summary (the original's `summarize_entry`): a move's challenge card and the cards
played on it, an establishment's place card, an addition's challenge cards; an entry with
no such card is summarised by its own text, cut keeping its end (`Trim.start`).
"""

from __future__ import annotations

import dataclasses

from schemas.storium import Card, Character, Entry

CARD_FIELDS = ("name", "description", "success_stakes", "failure_stakes")
MISSING = "<|MISSING|>"
SUMMARY_USAGES = {"move": ("target_challenge", "played"), "establishment": ("place",), "addition": ("challenge",)}


@dataclasses.dataclass(frozen=True)
class SegmentSpec:
    kind: str  # character / place / establishment / history / challenge / card / entry
    source_id: str
    text: str
    keep: str  # "start" keeps the beginning, "end" keeps the end
    field: str = "text"  # text, a card or character field, or "all" (every field in one leaf)
    special: bool = False  # the text is one special token (<|MISSING|>), not tokenized


def card_text(card: Card) -> str:
    """A card's non-empty name, description and stakes in one text (a `segment` leaf)."""
    parts = [card.name.strip(), card.description.strip()]
    if card.success_stakes.strip():
        parts.append("Success: " + card.success_stakes.strip())
    if card.failure_stakes.strip():
        parts.append("Failure: " + card.failure_stakes.strip())
    return "\n".join(p for p in parts if p)


def card_leaves(kind: str, card: Card, leaves: str) -> list[SegmentSpec]:
    if leaves == "segment":
        text = card_text(card)
        return [SegmentSpec(kind, card.card_use_id, text, "start", "all")] if text else []
    return [
        SegmentSpec(kind, card.card_use_id, getattr(card, f).strip(), "start", f)
        for f in CARD_FIELDS
        if getattr(card, f).strip()
    ]


def character_leaves(character: Character, leaves: str) -> list[SegmentSpec]:
    name, description = character.name.strip(), character.description.strip()
    if leaves == "segment":
        text = "\n".join(p for p in (name, description) if p)
        return [SegmentSpec("character", character.character_id, text, "start", "all")] if text else []
    return [
        SegmentSpec("character", character.character_id, value or MISSING, "start", field, not value)
        for field, value in (("name", name), ("description", description))
    ]


def summary_cards(entry: Entry, cards: list[Card]) -> list[Card]:
    """The cards of an entry's summary, in the original's order (usage, then position)."""
    usages = SUMMARY_USAGES.get(entry.format, ())
    return sorted((c for c in cards if c.usage in usages), key=lambda c: (usages.index(c.usage), c.position))


def summary_leaves(kind: str, entry: Entry, cards: list[Card], leaves: str) -> list[SegmentSpec]:
    """An entry as its card summary, or its text keeping the end when it has none."""
    out = [leaf for card in summary_cards(entry, cards) for leaf in card_leaves(kind, card, leaves)]
    return out or text_leaves(kind, entry)


def text_leaves(kind: str, entry: Entry) -> list[SegmentSpec]:
    """An entry's text, keeping its end when cut (narrative leading up to the example)."""
    text = "" if entry.redacted else entry.text.strip()
    return [SegmentSpec(kind, entry.entry_id, text, "end")] if text else []
