"""Read one STORIUM game export (format 0.9.2) into plain records (paper section 2).

Layout: ../shared/data/storium/SCHEMA.md; what the original read: PEERS.md 4.1. One file is
one game; a game without characters or scenes, an empty file, malformed JSON (bytes that
are not UTF-8 included) or a non-object is dropped with a reason. Entries and characters
are kept as `Item`s (input id, record or Drop) so a bad entry (no `seq_id`, duplicate
`seq_id`, not an object, a role naming a character the game does not have) becomes its own
rejects row while the rest of the game is used.
Reason codes: annotators.storium.reasons. Guards against: BOM, null/number fields,
`"unchanged"` hand contexts, cards that are not objects, scenes without `entries`.
"""

from __future__ import annotations

from typing import Any

from annotators.core import jsonl
from annotators.core.outcome import Drop
from annotators.core.sniff import not_text_reason
from schemas.storium import Card, Character, Entry, Game, Item, Scene

CARD_USES = (  # entry field -> how the card was used (SCHEMA.md, SceneEntry)
    ("place_card", "place"),
    ("challenge_cards", "challenge"),
    ("target_challenge_card", "target_challenge"),
    ("cards_played_on_challenge", "played"),
    ("cards_for_pickup", "pickup"),
)


def text_of(value: Any) -> str:
    """A text field as str: null and non-strings (numbers, lists) become ''."""
    return value if isinstance(value, str) else ""


def id_of(value: Any) -> str:
    """An id field as str ('' when missing); integer ids are accepted as their digits."""
    if isinstance(value, bool) or value is None:
        return ""
    return str(value).strip() if isinstance(value, (str, int)) else ""


def type_problem(raw: dict, fields: tuple[str, ...], where: str) -> Drop | None:
    """`bad_field_type` when a text field holds a number, list or object (null or absent is
    an empty text); such a field was once blanked without a word (issue 28)."""
    for name in fields:
        value = raw.get(name)
        if value is not None and not isinstance(value, str):
            return Drop(
                "bad_field_type",
                {
                    "field": name,
                    "type": type(value).__name__,
                    "message": f"{where}: `{name}` is a {type(value).__name__}, not text",
                },
            )
    return None


def id_problem(value: Any) -> str:
    """Why an id field gives no id: absent, null or blank (`missing_field`), else the wrong type."""
    blank = value is None or (isinstance(value, str) and not value.strip())
    return "missing_field" if blank else "bad_field_type"


def description_words(raw_game: dict) -> int:
    """Split size (PEERS.md 4.2): whitespace words of `description` over all entries."""
    total = 0
    for scene in raw_game.get("scenes") or []:
        entries = scene.get("entries") if isinstance(scene, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict):
                total += len(text_of(entry.get("description")).split())
    return total


def load_game_json(data: bytes) -> dict | Drop:
    """Decode bytes (UTF-8, optional BOM) into the game object, or a Drop.

    JSON exchanged between systems must be UTF-8 (RFC 8259, 8.1), so bytes that are not are
    rejected with their real cause (`utf16`, `encoding` with the charset, `binary_file`,
    `not_utf8`: annotators.core.sniff); a file with no JSON at all is empty.
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:  # JSON must be UTF-8: say what the bytes are (utf16, encoding, ...)
        return not_text_reason(data, "the file")
    try:
        raw = jsonl.loads(text)
    except (ValueError, RecursionError) as exc:  # RecursionError: JSON nested too deeply
        return Drop("empty_file" if not text.strip() else "malformed_json", str(exc)[:300])
    if not isinstance(raw, dict):
        return Drop("not_an_object", f"top-level JSON is {type(raw).__name__}, not an object")
    return raw


def parse_character(story_id: str, raw: Any) -> Character | Drop:
    if not isinstance(raw, dict):
        return Drop("not_an_object", type(raw).__name__)
    seq = id_of(raw.get("character_seq_id"))
    if not seq:
        return Drop(id_problem(raw.get("character_seq_id")), text_of(raw.get("name"))[:200])
    wrong = type_problem(raw, ("name", "description"), f"character {seq}")
    if wrong:
        return wrong
    return Character(f"{story_id}:{seq}", story_id, seq, text_of(raw.get("name")), text_of(raw.get("description")))


CARD_TEXT_FIELDS = ("namespace", "name", "description", "success_stakes", "failure_stakes")


def card_problem(raw: dict, where: str) -> Drop | None:
    """`bad_field_type` when a card an entry carries is not an object, or has a text field
    holding a number, list or object (null is no card, or an empty text). Such cards were
    once skipped or blanked without a word (issue 28); the entry is rejected instead."""
    for field, _ in CARD_USES:
        value = raw.get(field)
        for position, card in enumerate(value if isinstance(value, list) else [value]):
            if card is None:
                continue
            if not isinstance(card, dict):
                return Drop(
                    "bad_field_type",
                    {
                        "field": field,
                        "type": type(card).__name__,
                        "message": f"{where}: card {position} of `{field}` is a {type(card).__name__}, not an object",
                    },
                )
            wrong = type_problem(card, CARD_TEXT_FIELDS, f"{where}, card {position} of `{field}`")
            if wrong:
                return wrong
    return None


def parse_cards(entry: Entry, raw: dict) -> list[Card]:
    """Every card an entry carries, tagged with how it was used."""
    cards = []
    for field, usage in CARD_USES:
        value = raw.get(field)
        items = value if isinstance(value, list) else [value]
        for position, card in enumerate(c for c in items if isinstance(c, dict)):
            cid = id_of(card.get("card_id"))
            cards.append(
                Card(
                    card_use_id=f"{entry.entry_id}:{usage}:{position}",
                    card_id=cid or None,
                    story_id=entry.story_id,
                    entry_id=entry.entry_id,
                    usage=usage,
                    position=position,
                    namespace=text_of(card.get("namespace")),
                    name=text_of(card.get("name")),
                    description=text_of(card.get("description")),
                    success_stakes=text_of(card.get("success_stakes")),
                    failure_stakes=text_of(card.get("failure_stakes")),
                )
            )
    return cards


def parse_entry(story_id: str, scene_index: int, entry_index: int, raw: Any, seen: set) -> Entry | Drop:
    """One scene entry, or the reason it cannot be used."""
    if not isinstance(raw, dict):
        return Drop("not_an_object", type(raw).__name__)
    seq = id_of(raw.get("seq_id"))
    if not seq:
        return Drop(id_problem(raw.get("seq_id")), f"scene {scene_index}, position {entry_index}")
    if seq in seen:  # the earlier entry with this seq_id is kept
        return Drop("duplicate_id", seq)
    seen.add(seq)
    wrong = type_problem(raw, ("description", "role", "format"), f"entry {seq}") or card_problem(raw, f"entry {seq}")
    if wrong:
        return wrong
    char_seq = id_of(raw.get("character_seq_id"))
    # A missing role follows character_seq_id (PEERS.md 4.1: role is "character:<seq>" then).
    role = text_of(raw.get("role")) or (f"character:{char_seq}" if char_seq else "narrator")
    if role.startswith("character:"):  # the role names the writer, as storium-gpt2 reads it
        char_seq = role.split(":", 1)[1].strip() or char_seq  # (`all_characters[entry["role"]]`)
    redacted = raw.get("redacted") is True
    return Entry(
        entry_id=f"{story_id}:{seq}",
        story_id=story_id,
        scene_index=scene_index,
        entry_index=entry_index,
        seq_id=seq,
        format=text_of(raw.get("format")),
        role=role,
        character_id=f"{story_id}:{char_seq}" if char_seq and role != "narrator" else None,
        text="" if redacted else text_of(raw.get("description")),
        redacted=redacted,
    )


def character_problem(entry: Entry, characters: dict[str, Character]) -> Drop | None:
    """`unknown_character` when a character entry names (by role or character_seq_id) no
    usable character of its game: its example would have no character to write for, and
    its id would point at no row of the characters table. The original raised a KeyError on
    such an entry (storium-gpt2 `process_story`: `all_characters[entry["role"]]`)."""
    if entry.character_id is None or entry.character_id in characters:
        return None
    seq = entry.character_id[len(entry.story_id) + 1 :]
    usable = ", ".join(sorted(c.character_seq_id for c in characters.values())) or "none"
    return Drop(
        "unknown_character",
        f"entry {entry.seq_id} (role {entry.role!r}) names character {seq}, which game "
        f"{entry.story_id} does not have among its usable characters ({usable})",
    )


def _scenes_and_entries(story_id: str, raw_scenes: list, characters: dict) -> tuple[list, list, list]:
    scenes, items, cards, seen, position = [], [], [], set(), 0
    for s_index, raw_scene in enumerate(raw_scenes):
        if not isinstance(raw_scene, dict):  # once an empty scene row, with no reject
            what = f"scene {s_index} is a {type(raw_scene).__name__}, not an object"
            items.append(Item(f"{story_id}:scene{s_index}", Drop("bad_field_type", what)))
            continue
        scene = raw_scene
        raw_entries = scene.get("entries")
        if raw_entries is not None and not isinstance(raw_entries, list):  # once read as no entries
            what = f"scene {s_index}: entries is a {type(raw_entries).__name__}, not a list"
            items.append(Item(f"{story_id}:scene{s_index}:entries", Drop("bad_field_type", what)))
        raw_entries = raw_entries if isinstance(raw_entries, list) else []
        for e_index, raw_entry in enumerate(raw_entries):
            result = parse_entry(story_id, s_index, position, raw_entry, seen)
            if isinstance(result, Entry):
                result = character_problem(result, characters) or result
            items.append(Item(f"{story_id}:scene{s_index}:entry{e_index}", result))
            if isinstance(result, Entry):
                cards.extend(parse_cards(result, raw_entry))
            position += 1
        scenes.append(
            Scene(
                f"{story_id}:{s_index}",
                story_id,
                s_index,
                len(raw_entries),
                scene.get("is_final") is True,
                scene.get("is_ended") is True,
            )
        )
    return scenes, items, cards


def parse_game(input_id: str, data: bytes) -> Game | Drop:
    """A whole game from its file bytes (PEERS.md 4.1), or why it cannot be used."""
    raw = load_game_json(data)
    if isinstance(raw, Drop):
        return raw
    story_id = id_of(raw.get("game_pid"))
    if not story_id:
        return Drop(id_problem(raw.get("game_pid")), "no game_pid")
    chars, scenes = raw.get("characters"), raw.get("scenes")
    if not isinstance(chars, list) or not chars:
        return Drop("no_characters", f"game {story_id}")
    if not isinstance(scenes, list) or not scenes:
        return Drop("no_scenes", f"game {story_id}")
    char_items, char_ids = [], set()
    for i, c in enumerate(chars):
        record = parse_character(story_id, c)
        if isinstance(record, Character):
            if record.character_id in char_ids:  # once two rows with one id, the last used in packing
                record = Drop("duplicate_id", f"character {record.character_id} again (the first is kept)")
            else:
                char_ids.add(record.character_id)
        char_items.append(Item(f"{story_id}:character{i}", record))
    if not any(isinstance(item.record, Character) for item in char_items):
        return Drop("no_usable_character", f"game {story_id}: no character has a character_seq_id")
    characters = {i.record.character_id: i.record for i in char_items if isinstance(i.record, Character)}
    scene_rows, entry_items, cards = _scenes_and_entries(story_id, scenes, characters)
    return Game(
        story_id=story_id,
        input_id=input_id,
        n_words=description_words(raw),
        character_items=tuple(char_items),
        scenes=tuple(scene_rows),
        entry_items=tuple(entry_items),
        cards=tuple(cards),
    )


def story_row(game: Game, split: str) -> dict:
    """The stories-table row: id, split, size and counts (paper section 2, Table A2)."""
    entries = game.entries()
    return {
        "story_id": game.story_id,
        "input_id": game.input_id,
        "split": split,
        "n_words": game.n_words,
        "n_characters": len(game.characters()),
        "n_scenes": len(game.scenes),
        "n_entries": len(entries),
        "n_character_entries": sum(e.character_id is not None for e in entries),
        "n_cards": len(game.cards),
        "is_completed": any(s.is_final and s.is_ended for s in game.scenes),
    }
