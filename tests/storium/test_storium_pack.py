"""Cassowary packing (annotators/storium/pack.py) and context building (annotators/storium/context.py)."""

from __future__ import annotations

import pathlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotators.core.outcome import Drop
from annotators.storium.context import Context, ContextConfig, SegmentSpec, build_contexts
from annotators.storium.games import parse_game
from annotators.storium.pack import PackConfig, cut, pack, solve_lengths
from annotators.storium.tokens import RegexTokenizer

FIXTURES = pathlib.Path(__file__).parents[1] / "fixtures" / "storium"
TOK = RegexTokenizer()


def game(name):
    return parse_game(name, (FIXTURES / name).read_bytes())


NO_HISTORY = ContextConfig(history=0, character_history=0)
# storybench's layout before issue 30: one leaf per character or card, place card and text
SEGMENTS = ContextConfig(
    history=0, character_history=0, establishment_content="place_and_text", solver_leaves="segment"
)
TEXT_ONLY = dict(separator_tokens=0, end_tokens=0)


def check_layout(true, lengths, entry, budget, preferred=256, minimums=None):
    """The constraints every packed example must satisfy (the issue's 'what must hold')."""
    total = sum(true)
    minimums = minimums or [1] * len(true)
    assert sum(lengths) == min(budget, total)
    assert all(m <= n <= t for n, t, m in zip(lengths, true, minimums))
    if total <= budget:
        assert lengths == true
    elif entry is not None:
        others = sum(m for i, m in enumerate(minimums) if i != entry)
        assert lengths[entry] >= min(true[entry], preferred, budget - others)


def test_everything_fits_whole():
    assert solve_lengths([30, 40, 50], 2) == [30, 40, 50]


def test_tight_budget_context_goes_to_100_entry_to_256():
    lengths = solve_lengths([500, 400, 300, 900], 3, PackConfig(budget=556))
    assert lengths == [100, 100, 100, 256]


def test_entry_wish_is_ten_times_stronger():
    # 300 tokens for a 1000-token entry and a 1000-token character: the entry keeps 256
    assert solve_lengths([1000, 1000], 1, PackConfig(budget=300)) == [44, 256]
    # without enough room for 256 the context shrinks to 1 token first
    assert solve_lengths([1000, 1000], 1, PackConfig(budget=200)) == [1, 199]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(1, 1500), min_size=1, max_size=12), st.integers(0, 11), st.integers(1, 2048))
def test_solver_keeps_every_constraint(true, entry_at, budget):
    entry = entry_at % len(true)
    if len(true) > budget:
        with pytest.raises(ValueError):
            solve_lengths(true, entry, PackConfig(budget=budget))
        return
    lengths = solve_lengths(true, entry, PackConfig(budget=budget))
    check_layout(true, lengths, entry, budget)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 400), min_size=1, max_size=8), st.integers(1, 600))
def test_solver_without_entry_segment(true, budget):
    if len(true) <= budget:
        check_layout(true, solve_lengths(true, None, PackConfig(budget=budget)), None, budget)


def test_cut_keeps_beginning_or_end_with_original_spacing():
    text = "Mara lashes  the shutters, working by feel."
    spans = TOK.spans(text)
    assert cut(text, spans, 3, "start") == "Mara lashes  the"
    assert cut(text, spans, 4, "end") == "working by feel."
    assert cut(text, spans, 99, "end") == text
    assert len(TOK.spans(cut(text, spans, 5, "start"))) == 5


def test_context_segments_in_order_for_a_move():
    contexts = {c.entry_id: c for c in build_contexts(game("g_lighthouse.json"), SEGMENTS)}
    assert sorted(contexts) == [
        "game-lighthouse:102",
        "game-lighthouse:103",
        "game-lighthouse:106",
        "game-lighthouse:108",
    ]
    segs = contexts["game-lighthouse:106"].segments
    assert [s.kind for s in segs] == ["character", "place", "establishment", "challenge", "card", "card", "entry"]
    assert segs[0].text == "Tobin Hale\nThe keeper's apprentice, nineteen and sure he is immortal."
    assert segs[1].text.startswith("The Lamp Room\nGlass on every side")
    assert segs[3].text.endswith("Success: The beam sweeps the reef and the boats turn for home.")
    assert [s.source_id for s in segs[4:6]] == ["game-lighthouse:106:played:0", "game-lighthouse:106:played:1"]
    assert segs[-1].keep == "start" and segs[2].keep == "end"


def test_missing_segments_collapse():
    contexts = {c.entry_id: c for c in build_contexts(game("g_noest.json"), SEGMENTS)}
    assert [s.kind for s in contexts["game-noest:601"].segments] == ["character", "entry"]
    assert "game-noest:602" not in contexts  # character 9, which the game lacks: an unknown_character reject
    assert "game-noest:603" not in contexts  # blank text: no example


def test_redacted_entries_are_neither_examples_nor_history():
    contexts = build_contexts(game("g_station.json"), ContextConfig(history=5, history_content="text"))
    assert [c.entry_id for c in contexts] == ["game-station:304"]
    history = [s.source_id for s in contexts[0].segments if s.kind == "history"]
    assert history == ["game-station:302"]  # 301 is the establishment, 303 is redacted


def test_history_union_of_recent_and_own_entries_oldest_first():
    contexts = {
        c.entry_id: c
        for c in build_contexts(
            game("g_lighthouse.json"), ContextConfig(history=1, character_history=1, history_content="text")
        )
    }
    hist = [s.source_id for s in contexts["game-lighthouse:108"].segments if s.kind == "history"]
    # last story entry 107 plus Mara's own last entry 102, oldest first
    assert hist == ["game-lighthouse:102", "game-lighthouse:107"]
    assert contexts["game-lighthouse:108"].segments[-1].kind == "entry"


def test_default_history_is_the_papers_final_model():
    """Section 3.1: the immediately preceding entry; footnote 9: when another character wrote
    it, also this character's last entry."""
    contexts = {c.entry_id: c for c in build_contexts(game("g_lighthouse.json"))}
    assert ContextConfig() == ContextConfig(history=1, character_history=1)
    hist = [(s.source_id, s.field) for s in contexts["game-lighthouse:108"].segments if s.kind == "history"]
    # Mara's last entry 102 as its cards (the original's summary), then 107 (no card) as its text
    assert hist == [
        ("game-lighthouse:102:target_challenge:0", f)
        for f in ("name", "description", "success_stakes", "failure_stakes")
    ] + [
        ("game-lighthouse:102:played:0", "name"),
        ("game-lighthouse:102:played:0", "description"),
        ("game-lighthouse:107", "text"),
    ]
    assert [s.kind for s in build_contexts(game("g_lighthouse.json"), NO_HISTORY)[-1].segments].count("history") == 0


def test_pack_truncates_long_entry_and_keeps_context_whole():
    ctx = {c.entry_id: c for c in build_contexts(game("g_desert.json"), NO_HISTORY)}["game-desert:202"]
    row = pack(ctx, TOK, PackConfig())
    segs = row["segments"]
    # the budget holds the serialised example: a separator per segment and the entry's end token
    assert row["special_tokens"] == len(segs) + 1
    assert row["total_tokens"] == 1024 and row["true_total_tokens"] > 1024
    assert sum(s["tokens"] for s in segs) + row["special_tokens"] == 1024
    assert all(s["tokens"] == s["true_tokens"] for s in segs[:-1])
    entry = segs[-1]
    assert entry["kind"] == "entry"
    assert entry["tokens"] == 1024 - row["special_tokens"] - sum(s["tokens"] for s in segs[:-1])
    assert len(TOK.spans(entry["text"])) == entry["tokens"]
    assert entry["text"].startswith("The caravan moves at night")


def test_pack_keeps_the_end_of_history():
    ctx = Context(
        "s",
        "s:9",
        (
            SegmentSpec("history", "s:1", "one two three four five", "end"),
            SegmentSpec("entry", "s:9", "alpha beta gamma", "start"),
        ),
    )
    row = pack(ctx, TOK, PackConfig(budget=5, **TEXT_ONLY))
    assert [(s["text"], s["tokens"]) for s in row["segments"]] == [("four five", 2), ("alpha beta gamma", 3)]
    row = pack(ctx, TOK, PackConfig(budget=8))  # 3 special tokens: two separators and the end token
    assert [(s["text"], s["tokens"]) for s in row["segments"]] == [("four five", 2), ("alpha beta gamma", 3)]
    assert (row["special_tokens"], row["total_tokens"], row["true_total_tokens"]) == (3, 8, 11)


def test_pack_drops_when_budget_is_below_segment_count():
    ctx = Context("s", "s:9", tuple(SegmentSpec("card", f"c{i}", "x", "start") for i in range(3)))
    keep_one = PackConfig(budget=5, min_text_tokens=1)
    assert pack(ctx, TOK, keep_one) == Drop(
        "budget_below_segments", "3 segments need 6 tokens (3 special tokens, 1 text token(s) each), budget 5"
    )
    assert pack(ctx, TOK, PackConfig(budget=6, min_text_tokens=1))["total_tokens"] == 6
    assert isinstance(pack(ctx, TOK, PackConfig(budget=2, min_text_tokens=1, **TEXT_ONLY)), Drop)
    # the original's bound (len >= 1): a segment may keep its separator alone
    assert pack(ctx, TOK, PackConfig(budget=2)) == Drop(
        "budget_below_segments", "3 segments need 3 tokens (3 special tokens, 0 text token(s) each), budget 2"
    )
    row = pack(ctx, TOK, PackConfig(budget=5))
    assert row["total_tokens"] == 5 and sorted(s["tokens"] for s in row["segments"]) == [0, 1, 1]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 300), min_size=1, max_size=7), st.integers(9, 700))  # 8 separators + 1 end
def test_packed_text_has_exactly_the_allocated_tokens(lengths, budget):
    specs = [
        SegmentSpec(
            "history" if i % 2 else "card",
            f"x{i}",
            " ".join(f"w{i}x{j}," for j in range(n // 2 + 1)),
            "end" if i % 2 else "start",
        )
        for i, n in enumerate(lengths)
    ]
    row = pack(
        Context("s", "s:1", tuple(specs) + (SegmentSpec("entry", "s:1", "word " * 300, "start"),)),
        TOK,
        PackConfig(budget=budget),
    )
    special = [1] * (len(row["segments"]) - 1) + [2]  # a separator each, and the entry's end token
    true = [s["true_tokens"] + o for s, o in zip(row["segments"], special)]
    lengths = [s["tokens"] + o for s, o in zip(row["segments"], special)]
    check_layout(true, lengths, len(true) - 1, budget, minimums=special)  # a separator (and end token) alone
    assert row["total_tokens"] == sum(lengths) <= budget and row["special_tokens"] == sum(special)
    for seg in row["segments"]:
        assert len(TOK.spans(seg["text"])) == seg["tokens"]
