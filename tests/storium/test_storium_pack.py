"""Cassowary packing (annotators/storium_pack.py) and context building (storium_context.py)."""
from __future__ import annotations

import pathlib

import pytest
from hypothesis import given, settings, strategies as st

from annotators.core.outcome import Drop
from annotators.storium.context import Context, ContextConfig, SegmentSpec, build_contexts
from annotators.storium.games import parse_game
from annotators.storium.pack import PackConfig, cut, pack, solve_lengths
from annotators.storium.tokens import RegexTokenizer

FIXTURES = pathlib.Path(__file__).parents[1] / "fixtures" / "storium"
TOK = RegexTokenizer()


def game(name):
    return parse_game(name, (FIXTURES / name).read_bytes())


def check_layout(true, lengths, entry, budget, preferred=256):
    """The constraints every packed example must satisfy (the issue's 'what must hold')."""
    total = sum(true)
    assert sum(lengths) == min(budget, total)
    assert all(1 <= n <= t for n, t in zip(lengths, true))
    if total <= budget:
        assert lengths == true
    elif entry is not None:
        others = len(true) - 1
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
@given(st.lists(st.integers(1, 1500), min_size=1, max_size=12), st.integers(0, 11),
       st.integers(1, 2048))
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
    contexts = {c.entry_id: c for c in build_contexts(game("g_lighthouse.json"))}
    assert sorted(contexts) == ["game-lighthouse:102", "game-lighthouse:103",
                                "game-lighthouse:106", "game-lighthouse:108"]
    segs = contexts["game-lighthouse:106"].segments
    assert [s.kind for s in segs] == ["character", "place", "establishment", "challenge", "card", "card", "entry"]
    assert segs[0].text == "Tobin Hale\nThe keeper's apprentice, nineteen and sure he is immortal."
    assert segs[1].text.startswith("The Lamp Room\nGlass on every side")
    assert segs[3].text.endswith("Success: The beam sweeps the reef and the boats turn for home.")
    assert [s.source_id for s in segs[4:6]] == ["game-lighthouse:106:played:0", "game-lighthouse:106:played:1"]
    assert segs[-1].keep == "start" and segs[2].keep == "end"


def test_missing_segments_collapse():
    contexts = {c.entry_id: c for c in build_contexts(game("g_noest.json"))}
    assert [s.kind for s in contexts["game-noest:601"].segments] == ["character", "entry"]
    assert [s.kind for s in contexts["game-noest:602"].segments] == ["entry"]  # unknown character
    assert "game-noest:603" not in contexts  # blank text: no example


def test_redacted_entries_are_neither_examples_nor_history():
    contexts = build_contexts(game("g_station.json"), ContextConfig(history=5))
    assert [c.entry_id for c in contexts] == ["game-station:304"]
    history = [s.source_id for s in contexts[0].segments if s.kind == "history"]
    assert history == ["game-station:302"]  # 301 is the establishment, 303 is redacted


def test_history_union_of_recent_and_own_entries_oldest_first():
    contexts = {c.entry_id: c for c in build_contexts(game("g_lighthouse.json"),
                                                      ContextConfig(history=1, character_history=1))}
    hist = [s.source_id for s in contexts["game-lighthouse:108"].segments if s.kind == "history"]
    # last story entry 107 plus Mara's own last entry 102, oldest first
    assert hist == ["game-lighthouse:102", "game-lighthouse:107"]
    assert contexts["game-lighthouse:108"].segments[-1].kind == "entry"


def test_pack_truncates_long_entry_and_keeps_context_whole():
    ctx = {c.entry_id: c for c in build_contexts(game("g_desert.json"))}["game-desert:202"]
    row = pack(ctx, TOK, PackConfig())
    segs = row["segments"]
    assert row["total_tokens"] == 1024 and row["true_total_tokens"] > 1024
    assert all(s["tokens"] == s["true_tokens"] for s in segs[:-1])
    entry = segs[-1]
    assert entry["kind"] == "entry" and entry["tokens"] == 1024 - sum(s["tokens"] for s in segs[:-1])
    assert len(TOK.spans(entry["text"])) == entry["tokens"]
    assert entry["text"].startswith("The caravan moves at night")


def test_pack_keeps_the_end_of_history():
    ctx = Context("s", "s:9", (SegmentSpec("history", "s:1", "one two three four five", "end"),
                               SegmentSpec("entry", "s:9", "alpha beta gamma", "start")))
    row = pack(ctx, TOK, PackConfig(budget=5))
    assert [(s["text"], s["tokens"]) for s in row["segments"]] == [("four five", 2), ("alpha beta gamma", 3)]


def test_pack_drops_when_budget_is_below_segment_count():
    ctx = Context("s", "s:9", tuple(SegmentSpec("card", f"c{i}", "x", "start") for i in range(3)))
    assert pack(ctx, TOK, PackConfig(budget=2)) == Drop("budget_below_segments", "3 segments, budget 2")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 300), min_size=1, max_size=7), st.integers(8, 700))  # 8 >= 7 segments + entry
def test_packed_text_has_exactly_the_allocated_tokens(lengths, budget):
    specs = [SegmentSpec("history" if i % 2 else "card", f"x{i}", " ".join(f"w{i}x{j}," for j in range(n // 2 + 1)),
                         "end" if i % 2 else "start") for i, n in enumerate(lengths)]
    row = pack(Context("s", "s:1", tuple(specs) + (SegmentSpec("entry", "s:1", "word " * 300, "start"),)),
               TOK, PackConfig(budget=budget))
    true = [s["true_tokens"] for s in row["segments"]]
    check_layout(true, [s["tokens"] for s in row["segments"]], len(true) - 1, budget)
    for seg in row["segments"]:
        assert len(TOK.spans(seg["text"])) == seg["tokens"]
