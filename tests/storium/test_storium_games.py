"""Unit tests of STORIUM game ingestion (annotators/storium_games.py) on the fixture games."""

from __future__ import annotations

import json
import pathlib

import pytest

from annotators.core.outcome import Drop
from annotators.storium.games import description_words, parse_game, story_row
from schemas.storium import Card, Character, Entry, Game

FIXTURES = pathlib.Path(__file__).parents[1] / "fixtures" / "storium"


def load(name: str) -> Game | Drop:
    return parse_game(name, (FIXTURES / name).read_bytes())


@pytest.mark.parametrize(
    "name, reason",
    [
        ("bad_truncated.json", "malformed_json"),
        ("bad_empty.json", "empty_file"),
        ("bad_cp1252.json", "not_utf8"),
        ("bad_array.json", "not_an_object"),
        ("bad_no_characters.json", "no_characters"),
        ("bad_no_scenes.json", "no_scenes"),
        ("bad_no_pid.json", "missing_field"),
    ],
)
def test_malformed_games_are_dropped_with_reason(name, reason):
    result = load(name)
    assert isinstance(result, Drop) and result.reason == reason


def test_game_with_only_unusable_characters_is_dropped():
    data = json.dumps({"game_pid": "g", "characters": [{"name": "no seq id"}], "scenes": [{"entries": []}]}).encode()
    assert parse_game("x.json", data) == Drop("no_usable_character", "game g: no character has a character_seq_id")


def test_lighthouse_entries_in_story_order_with_roles_and_characters():
    game = load("g_lighthouse.json")
    entries = game.entries()
    assert [e.seq_id for e in entries] == [str(n) for n in range(101, 110)]
    assert [e.entry_index for e in entries] == list(range(9))
    assert [e.scene_index for e in entries] == [0, 0, 0, 0, 1, 1, 1, 1, 1]
    assert entries[1].character_id == "game-lighthouse:1" and entries[1].role == "character:1"
    assert entries[0].character_id is None and entries[0].format == "establishment"
    assert entries[1].entry_id == "game-lighthouse:102"
    assert [c.name for c in game.characters()] == ["Mara Quill", "Tobin Hale"]


def test_cards_record_how_they_were_used():
    game = load("g_lighthouse.json")
    uses = {(c.entry_id.split(":")[1], c.usage, c.position): c for c in game.cards}
    assert uses[("101", "place", 0)].name == "The Drowned Harbor"
    assert uses[("101", "challenge", 0)].success_stakes.startswith("The cottage holds")
    assert uses[("102", "target_challenge", 0)].card_id == "c11"
    assert uses[("106", "played", 1)].namespace == "weakness"
    assert uses[("106", "played", 1)].card_use_id == "game-lighthouse:106:played:1"
    desert = load("g_desert.json")
    namespaces = {c.namespace for c in desert.cards}
    assert {"place", "obstacle", "thing", "person", "chartype", "goal", "subplot"} <= namespaces
    assert {c.usage for c in desert.cards} >= {"pickup", "played", "target_challenge", "challenge", "place"}


def test_bad_entries_and_characters_become_items_with_reasons():
    game = load("g_orchard.json")
    reasons = [e.reason for _, e in game.entry_items if isinstance(e, Drop)]
    # the third scene is a string: a bad_field_type item (it was an empty scene row, no reject)
    assert reasons == ["missing_field", "missing_field", "not_an_object", "bad_field_type"]
    char_reasons = [c.reason for _, c in game.character_items if isinstance(c, Drop)]
    assert char_reasons == ["missing_field", "not_an_object"]
    entries = {e.seq_id: e for e in game.entries()}
    assert entries["401"].role == "narrator"  # a null role means the narrator
    assert entries["402"].text == ""  # a null description is empty text
    quick = [c for c in game.cards if c.name == "Quick"][0]
    assert quick.card_id == "9" and quick.description == ""
    assert len(game.scenes) == 2 and [s.n_entries for s in game.scenes] == [6, 0]


def test_duplicate_seq_id_keeps_the_first():
    game = load("g_dupseq.json")
    kept = [e.text for e in game.entries() if e.seq_id == "502"]
    assert kept == ["Ash pushes off from the bank."]
    assert [e.reason for _, e in game.entry_items if isinstance(e, Drop)] == ["duplicate_id"]


def test_an_entry_by_a_character_the_game_lacks_is_an_unknown_character_reject():
    """g_noest's entry 602 is by character 9, and the game has only character 1: it was packed
    as an example with no character and an id ("game-noest:9") no characters row has; the
    original raised a KeyError. It is now its own rejects row, and the rest of the game is used."""
    game = load("g_noest.json")
    (ghost,) = [(i, e) for i, e in game.entry_items if isinstance(e, Drop)]
    assert ghost[0] == "game-noest:scene0:entry1" and ghost[1].reason == "unknown_character"
    assert "entry 602 (role 'character:9') names character 9" in ghost[1].detail
    assert "usable characters (1)" in ghost[1].detail
    assert [e.seq_id for e in game.entries()] == ["601", "603"]
    assert story_row(game, "train")["n_character_entries"] == 2


def test_an_entry_by_a_rejected_character_is_an_unknown_character_reject():
    """A character row that is itself rejected (a list as its name) is no usable character:
    its entries are unknown_character rejects, their cards with them."""
    raw = json.loads((FIXTURES / "g_lighthouse.json").read_text())
    raw["characters"][1]["name"] = ["Tobin", "Hale"]
    game = parse_game("g_lighthouse.json", json.dumps(raw).encode())
    assert [c.reason for _, c in game.character_items if isinstance(c, Drop)] == ["bad_field_type"]
    drops = [(i, e.reason) for i, e in game.entry_items if isinstance(e, Drop)]
    # Tobin's moves 103 and 106 (the first entry of each scene is at entry0)
    assert drops == [
        ("game-lighthouse:scene0:entry2", "unknown_character"),
        ("game-lighthouse:scene1:entry1", "unknown_character"),
    ]
    assert [e.seq_id for e in game.entries()] == ["101", "102", "104", "105", "107", "108", "109"]
    assert not [c for c in game.cards if c.entry_id in ("game-lighthouse:103", "game-lighthouse:106")]


def test_an_entry_whose_role_and_character_seq_id_disagree_is_the_roles_character():
    """storium-gpt2 finds an entry's character by its role (`all_characters[entry["role"]]`);
    character_seq_id decided here when both were given."""
    raw = json.loads((FIXTURES / "g_lighthouse.json").read_text())
    entry = raw["scenes"][0]["entries"][1]  # 102, Mara's move
    entry["character_seq_id"] = "2"
    game = parse_game("g_lighthouse.json", json.dumps(raw).encode())
    (move,) = [e for e in game.entries() if e.seq_id == "102"]
    assert move.role == "character:1" and move.character_id == "game-lighthouse:1"
    del entry["role"]  # no role: character_seq_id names the writer
    game = parse_game("g_lighthouse.json", json.dumps(raw).encode())
    (move,) = [e for e in game.entries() if e.seq_id == "102"]
    assert move.role == "character:2" and move.character_id == "game-lighthouse:2"


def test_redacted_entry_text_is_not_republished():
    game = load("g_station.json")
    redacted = [e for e in game.entries() if e.redacted]
    assert len(redacted) == 1 and redacted[0].text == ""


def test_bom_and_integer_ids():
    game = load("g_unicode.json")
    assert game.story_id == "7007"
    assert [e.entry_id for e in game.entries()] == ["7007:701", "7007:702"]
    assert game.entries()[1].character_id == "7007:1"
    assert game.characters()[0].name == "Zoë Ångström"


def test_size_counts_description_words_of_every_entry():
    raw = json.loads((FIXTURES / "g_orchard.json").read_text())
    # 401: 11 words, two seq-less entries 9 + 6, 402 null, 403: 13 words; 42 and null scenes: 0
    assert description_words(raw) == 11 + 9 + 6 + 13 == load("g_orchard.json").n_words
    assert load("g_tie-a.json").n_words == 10


def test_story_row_counts():
    row = story_row(load("g_lighthouse.json"), "train")
    assert row == {
        "story_id": "game-lighthouse",
        "input_id": "g_lighthouse.json",
        "split": "train",
        "n_words": row["n_words"],
        "n_characters": 2,
        "n_scenes": 2,
        "n_entries": 9,
        "n_character_entries": 4,
        "n_cards": 12,
        "is_completed": True,
    }
    assert isinstance(load("g_lighthouse.json").entries()[0], Entry)
    assert isinstance(load("g_lighthouse.json").characters()[0], Character)
    assert all(isinstance(c, Card) for c in load("g_lighthouse.json").cards)


def test_missing_role_follows_character_seq_id():
    from annotators.storium.games import parse_entry

    move = parse_entry(
        "g",
        0,
        0,
        {"seq_id": "2", "format": "move", "character_seq_id": "1", "description": "Ann draws her sword."},
        set(),
    )
    assert (move.role, move.character_id) == ("character:1", "g:1")
    narration = parse_entry("g", 0, 1, {"seq_id": "3", "description": "Night falls."}, set())
    assert (narration.role, narration.character_id) == ("narrator", None)


@pytest.mark.parametrize(
    "card", [{"card_id": "c1", "name": ["a", "list"]}, {"card_id": "c1", "description": 7}, "not an object", 3]
)
def test_an_entry_whose_card_has_a_wrong_typed_field_is_a_bad_field_type_reject(card):
    """A card's text fields were blanked (or a non-object card skipped) without a word."""
    from annotators.storium.games import parse_entry

    raw = {"seq_id": "2", "format": "move", "character_seq_id": "1", "description": "x", "challenge_cards": [card]}
    dropped = parse_entry("g", 0, 0, raw, set())
    assert isinstance(dropped, Drop) and dropped.reason == "bad_field_type"
    assert "card 0 of `challenge_cards`" in dropped.detail["message"]
    raw["challenge_cards"] = [None, {"card_id": "c1", "name": "Storm", "description": None}]
    assert not isinstance(parse_entry("g", 0, 0, raw, set()), Drop)  # null: no card, or an empty text
