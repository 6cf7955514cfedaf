"""Each packing choice of issue 30, both ways, on the fixture games (real-looking 0.9.2 exports):
the default follows the paper where it speaks and the original code where it is silent, and
its flag gives the other layout. Every packed example stays within its budget."""

from __future__ import annotations

import dataclasses
import json
import pathlib

import pytest
from conftest import shared_path
from hypothesis import given, settings
from hypothesis import strategies as st

from annotators.core.outcome import Drop
from annotators.storium import steps
from annotators.storium.choices import CHOICES, choice_rows
from annotators.storium.context import ContextConfig, build_contexts
from annotators.storium.games import parse_game
from annotators.storium.pack import PackConfig, pack
from annotators.storium.split import SplitConfig, assign_splits
from annotators.storium.tokens import RegexTokenizer

FIXTURES = pathlib.Path(__file__).parents[1] / "fixtures" / "storium"
TOK = RegexTokenizer()
GAMES = (
    "g_lighthouse.json",
    "g_desert.json",
    "g_station.json",
    "g_garden.json",
    "g_noest.json",
    "g_orchard.json",
    "g_unicode.json",
    "g_tie-a.json",
)


def game(name, edit=None):
    data = (FIXTURES / name).read_bytes()
    if edit:
        raw = json.loads(data.decode("utf-8-sig"))
        edit(raw)
        data = json.dumps(raw).encode()
    return parse_game(name, data)


def contexts(name, **config):
    return {c.entry_id: c for c in build_contexts(game(name), ContextConfig(**config))}


def history(ctx):
    return [(s.source_id, s.field) for s in ctx.segments if s.kind == "history"]


def history_entries(ctx):
    ids = [s.source_id.split(":")[:2] for s in ctx.segments if s.kind == "history"]
    return list(dict.fromkeys(":".join(i) for i in ids))


def test_history_offset_paper_takes_the_preceding_entry_original_skips_it():
    paper = contexts("g_lighthouse.json", history_content="text")["game-lighthouse:108"]
    assert history_entries(paper) == ["game-lighthouse:102", "game-lighthouse:107"]
    # original off-by-one: both windows end one entry early; Mara's only earlier entry is 102
    original = contexts("g_lighthouse.json", history_content="text", history_offset=1)["game-lighthouse:108"]
    assert history_entries(original) == ["game-lighthouse:106"]


def test_history_counts_establishment_both_ways():
    # 106 is the first move after the establishment 105: the original's window holds 105 alone
    counted = contexts("g_lighthouse.json", history_content="text")["game-lighthouse:106"]
    assert history_entries(counted) == ["game-lighthouse:103"]  # Tobin's own last entry only
    skipped = contexts("g_lighthouse.json", history_content="text", history_counts_establishment=False)[
        "game-lighthouse:106"
    ]
    assert history_entries(skipped) == ["game-lighthouse:103", "game-lighthouse:104"]


def test_history_content_summary_or_text():
    summary = contexts("g_lighthouse.json")["game-lighthouse:108"]
    assert history(summary)[0] == ("game-lighthouse:102:target_challenge:0", "name")
    assert history(summary)[-1] == ("game-lighthouse:107", "text")  # an addition without cards: its text
    text = contexts("g_lighthouse.json", history_content="text")["game-lighthouse:108"]
    assert history(text) == [("game-lighthouse:102", "text"), ("game-lighthouse:107", "text")]
    # an addition with challenge cards is summarised by them (station 302)
    station = contexts("g_station.json", history=2)["game-station:304"]
    assert {s for s, _ in history(station)} == {"game-station:302:challenge:0"}
    assert history(contexts("g_station.json", history=2, history_content="text")["game-station:304"]) == [
        ("game-station:302", "text")
    ]


def test_only_a_move_brings_its_own_cards():
    """The original's `summarize_entry`: a subplot entry's played card is not in its context."""
    desert = contexts("g_desert.json", history=0, character_history=0)
    assert [s.kind for s in desert["game-desert:204"].segments if s.kind in ("challenge", "card")] == []
    assert {s.kind for s in desert["game-desert:203"].segments} >= {"challenge", "card"}
    assert [c.usage for c in game("g_desert.json").cards if c.entry_id == "game-desert:204"] == ["played"]


def test_history_text_keeps_its_end():
    ctx = contexts("g_lighthouse.json", solver_leaves="segment")["game-lighthouse:108"]
    text = [s for s in ctx.segments if s.kind == "history" and s.field == "text"]
    assert [(s.source_id, s.keep) for s in text] == [("game-lighthouse:107", "end")]


def test_establishment_content_place_or_text():
    kinds = [s.kind for s in contexts("g_lighthouse.json")["game-lighthouse:106"].segments]
    assert "place" in kinds and "establishment" not in kinds
    both = contexts("g_lighthouse.json", establishment_content="place_and_text")["game-lighthouse:106"]
    est = [s for s in both.segments if s.kind == "establishment"]
    assert [(s.source_id, s.keep) for s in est] == [("game-lighthouse:105", "end")]
    assert est[0].text.startswith("Dawn. The lamp room")
    # no place card: the establishment's text, kept by its end, either way
    for content in ("place_or_text", "place_and_text"):
        segs = contexts("g_tie-a.json", establishment_content=content)["game-tie-a:802"].segments
        assert [(s.kind, s.keep) for s in segs if s.kind in ("place", "establishment")] == [("establishment", "end")]


def drop_second_establishment(raw):
    raw["scenes"][1]["entries"] = [e for e in raw["scenes"][1]["entries"] if e["seq_id"] != "105"]


def test_establishment_scope_scene_or_story():
    g = game("g_lighthouse.json", drop_second_establishment)
    by_scene = {c.entry_id: c for c in build_contexts(g, ContextConfig())}["game-lighthouse:106"]
    assert not [s for s in by_scene.segments if s.kind in ("place", "establishment")]
    by_story = {c.entry_id: c for c in build_contexts(g, ContextConfig(establishment_scope="story"))}
    place = [s for s in by_story["game-lighthouse:106"].segments if s.kind == "place"]
    assert [(s.source_id, s.text) for s in place][0] == ("game-lighthouse:101:place:0", "The Drowned Harbor")


def test_solver_leaves_field_or_segment():
    field = contexts("g_lighthouse.json", history=0, character_history=0)["game-lighthouse:106"]
    assert [(s.kind, s.field) for s in field.segments][:2] == [("character", "name"), ("character", "description")]
    challenge = [s.field for s in field.segments if s.kind == "challenge"]
    assert challenge == ["name", "description", "success_stakes"]  # no failure stakes on this card
    segment = contexts("g_lighthouse.json", history=0, character_history=0, solver_leaves="segment")
    segs = segment["game-lighthouse:106"].segments
    assert [(s.kind, s.field) for s in segs if s.kind in ("character", "challenge")] == [
        ("character", "all"),
        ("challenge", "all"),
    ]
    # character 3 of the desert game has neither name nor description
    missing = contexts("g_desert.json")["game-desert:207"].segments
    assert [(s.field, s.text, s.special) for s in missing[:2]] == [
        ("name", "<|MISSING|>", True),
        ("description", "<|MISSING|>", True),
    ]
    segment = contexts("g_desert.json", history=0, character_history=0, solver_leaves="segment")
    assert [s.kind for s in segment["game-desert:207"].segments] == ["place", "entry"]  # no character leaf


def long_challenge(raw):
    card = raw["scenes"][0]["entries"][2]["target_challenge_card"]  # entry 203's challenge
    card["description"] = " ".join(f"dune{i}" for i in range(120))
    card["success_stakes"] = " ".join(f"well{i}" for i in range(120))


def test_field_leaves_are_more_100_token_pulls():
    """Field leaves pull each field toward 100 tokens: a challenge with two 120-token fields keeps
    about 200 under a tight budget, where as one leaf it is pulled toward 100 as a whole."""
    g = game("g_desert.json", long_challenge)
    rows = {}
    for leaves in ("field", "segment"):
        ctx = {c.entry_id: c for c in build_contexts(g, ContextConfig(history_content="text", solver_leaves=leaves))}
        rows[leaves] = pack(ctx["game-desert:203"], TOK, PackConfig(budget=500))
    kept = {k: sum(s["tokens"] for s in r["segments"] if s["kind"] == "challenge") for k, r in rows.items()}
    assert kept["field"] >= 198 > kept["segment"]
    assert len(rows["field"]["segments"]) == 12 and len(rows["segment"]["segments"]) == 6
    for row in rows.values():
        assert row["total_tokens"] == 500
        assert [s["tokens"] for s in row["segments"] if s["kind"] == "entry"] == [240]


def test_min_text_tokens_separator_alone_or_one_text_token():
    ctx = contexts("g_lighthouse.json")["game-lighthouse:108"]
    original = pack(ctx, TOK, PackConfig(budget=40))
    assert original["total_tokens"] == 40 and 0 in [s["tokens"] for s in original["segments"]]
    assert [s["text"] for s in original["segments"] if s["tokens"] == 0] == [""] * sum(
        s["tokens"] == 0 for s in original["segments"]
    )
    one = pack(ctx, TOK, PackConfig(budget=40, min_text_tokens=1))
    assert one["total_tokens"] == 40 and min(s["tokens"] for s in one["segments"]) == 1
    n = len(one["segments"])  # a separator and a text token each, and the entry's end token
    assert pack(ctx, TOK, PackConfig(budget=2 * n, min_text_tokens=1)) == Drop(
        "budget_below_segments",
        f"{n} segments need {2 * n + 1} tokens ({n + 1} special tokens, 1 text token(s) each), budget " + str(2 * n),
    )
    assert pack(ctx, TOK, PackConfig(budget=2 * n))["total_tokens"] == 2 * n


def test_field_token_cap_cuts_before_packing():
    ctx = contexts("g_desert.json", history_content="text")["game-desert:203"]
    capped, uncapped = pack(ctx, TOK), pack(ctx, TOK, PackConfig(field_token_cap=0))
    long_capped = [s for s in capped["segments"] if s["source_id"] == "game-desert:202"][0]
    long_full = [s for s in uncapped["segments"] if s["source_id"] == "game-desert:202"][0]
    assert long_capped["true_tokens"] == 1024 < long_full["true_tokens"]
    full_text = game("g_desert.json").entries()[1].text.strip()
    assert full_text.endswith(long_full["text"])  # kept by its end: the end of the story text
    assert not full_text.endswith(long_capped["text"])  # the end of its first 1024 tokens (the original's)
    assert long_capped["text"] in full_text
    assert capped["total_tokens"] == uncapped["total_tokens"] == 1024


def test_separator_and_end_tokens_count_in_the_budget_or_not():
    ctx = contexts("g_garden.json")["game-garden:902"]
    counted, text_only = pack(ctx, TOK), pack(ctx, TOK, PackConfig(separator_tokens=0, end_tokens=0))
    assert counted["special_tokens"] == len(counted["segments"]) + 1 and text_only["special_tokens"] == 0
    assert counted["total_tokens"] - counted["special_tokens"] == text_only["total_tokens"]


def test_split_ties_original_or_story_id():
    """Three real-looking games of equal words: the original orders them by entries (one has an
    extra empty entry), then by path, descending; story_id orders them by id."""

    def extra_entry(raw):
        raw["scenes"][0]["entries"].append(
            {"seq_id": "803", "format": "move", "role": "character:1", "character_seq_id": "1", "description": ""}
        )

    def renamed(pid):
        return lambda raw: raw.update(game_pid=pid)

    games = [
        parse_game(path, json.dumps(raw).encode())
        for path, raw in (
            ("x/a.json", _raw("g_tie-a.json", renamed("g-1"))),
            ("x/b.json", _raw("g_tie-b.json", renamed("g-2"))),
            ("x/c.json", _raw("g_tie-a.json", renamed("g-3"), extra_entry)),
        )
    ]
    sizes = [steps.story_size(g) for g in games]
    assert [(s.words, s.entries, s.input_id) for s in sizes] == [
        (10, 2, "x/a.json"),
        (10, 2, "x/b.json"),
        (10, 3, "x/c.json"),
    ]
    assert assign_splits(sizes, SplitConfig((1, 1, 1))) == {"g-3": "train", "g-2": "validation", "g-1": "test"}
    assert assign_splits(sizes, SplitConfig((1, 1, 1), "story_id")) == {
        "g-1": "train",
        "g-2": "validation",
        "g-3": "test",
    }


def _raw(name, *edits):
    raw = json.loads((FIXTURES / name).read_bytes().decode("utf-8-sig"))
    for edit in edits:
        edit(raw)
    return raw


def test_card_names_every_choice_its_source_and_flag():
    rows = choice_rows(
        {
            "context": dataclasses.asdict(ContextConfig()),
            "pack": dataclasses.asdict(PackConfig()),
            "split": dataclasses.asdict(SplitConfig()),
        }
    )
    for choice in CHOICES:
        row = next(r for r in rows if r.startswith(f"| {choice.what} |"))
        default = getattr(
            {"context": ContextConfig(), "pack": PackConfig(), "split": SplitConfig()}[choice.section], choice.field
        )
        does, source = choice.values[default]
        assert f"| {does} | {source} |" in row
        assert "storium-gpt2" in row or "paper" in row
        for other in choice.values:
            if other != default:
                flag = "--" + choice.field.replace("_", "-")
                assert (f"`{flag} {other}`" if not isinstance(other, bool) else f"`--no-{flag[2:]}`") in row
    flipped = choice_rows({"context": {"solver_leaves": "segment"}})
    assert any(
        r.startswith("| solver leaves | one length variable per character or card (all its fields)")
        and "`--solver-leaves field`" in r
        for r in flipped
    )


CONFIGS = st.builds(
    ContextConfig,
    history=st.integers(0, 3),
    character_history=st.integers(0, 2),
    history_offset=st.sampled_from((0, 1)),
    history_counts_establishment=st.booleans(),
    history_content=st.sampled_from(("summary", "text")),
    establishment_content=st.sampled_from(("place_or_text", "place_and_text")),
    establishment_scope=st.sampled_from(("scene", "story")),
    solver_leaves=st.sampled_from(("field", "segment")),
)
PACKS = st.builds(
    PackConfig,
    budget=st.integers(1, 1100),
    min_text_tokens=st.sampled_from((0, 1)),
    field_token_cap=st.sampled_from((0, 1024, 50)),
    separator_tokens=st.sampled_from((0, 1)),
    end_tokens=st.sampled_from((0, 1)),
)


def check_within_budget(ctx, config):
    row = pack(ctx, TOK, config)
    if isinstance(row, Drop):
        assert row.reason == "budget_below_segments"
        return
    assert row["total_tokens"] == min(config.budget, row["true_total_tokens"]) <= config.budget
    assert row["total_tokens"] == sum(s["tokens"] for s in row["segments"]) + row["special_tokens"]
    for seg in row["segments"]:
        assert 0 <= seg["tokens"] <= seg["true_tokens"]
        if seg["text"] != "<|MISSING|>":
            assert len(TOK.spans(seg["text"])) == seg["tokens"]


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(GAMES), CONFIGS, PACKS)
def test_total_tokens_never_exceed_the_budget(name, context_config, pack_config):
    for ctx in build_contexts(game(name), context_config):
        check_within_budget(ctx, pack_config)


def test_shared_games_stay_within_the_budget_under_every_layout():
    """Real exports, when a copy is present (never shipped: the data licence forbids it)."""
    games = sorted(shared_path("storium").rglob("*.json"))
    if not games:
        pytest.skip("no STORIUM game exports under the shared data folder")
    for path in games[:50]:
        g = parse_game(path.name, path.read_bytes())
        if isinstance(g, Drop):
            continue
        for config in (
            ContextConfig(),
            ContextConfig(history_content="text", establishment_content="place_and_text", solver_leaves="segment"),
        ):
            for ctx in build_contexts(g, config):
                check_within_budget(ctx, PackConfig())
