"""End-to-end runs of `pipelines.storium` on the fixture games (shared per module)."""

from __future__ import annotations

import json
import pathlib

import pandas as pd
import pytest
from conftest import check_rejects, write_tiny_gpt2

from annotators.storium.split import StorySize, assign_splits
from annotators.text.tokenizers import get_tokenizer
from pipelines import storium

pytestmark = pytest.mark.slow  # end-to-end job runs: `make test-fast` leaves them out

FIXTURES = pathlib.Path(__file__).parents[1] / "fixtures" / "storium"
FLIPPED = (
    "--history-content",
    "text",
    "--establishment-content",
    "place_and_text",
    "--solver-leaves",
    "segment",
    "--min-text-tokens",
    "1",
    "--field-token-cap",
    "0",
    "--split-ties",
    "story_id",
    "--no-history-counts-establishment",
)
GLOB = str(FIXTURES / "*.json")


def run(out: pathlib.Path, *extra: str) -> pathlib.Path:
    storium.run(["--games", GLOB, "--output", str(out), *extra])
    return out


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    return run(tmp_path_factory.mktemp("storium") / "out")


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A tight budget with history, another ratio, a (tiny) GPT-2 BPE vocabulary, and every
    packing choice flipped to storybench's layout before issue 30."""
    base = tmp_path_factory.mktemp("storium_small")
    vocab = write_tiny_gpt2(base)
    return run(
        base / "out", "--budget", "40", "--history", "1", "--ratios", "1,1,1", "--tokenizer", f"gpt2:{vocab}", *FLIPPED
    )


def table(out, name) -> pd.DataFrame:
    return pd.read_parquet(out / name)


def independent_sizes() -> list[StorySize]:
    """What the original's split reads, straight from the raw JSON of the games the job keeps:
    words of every description, entries of every scene, scenes, and the file's path."""
    sizes = []
    for path in sorted(FIXTURES.glob("g_*.json")):
        raw = json.loads(path.read_text(encoding="utf-8-sig"))
        words = entries = 0
        for scene in raw["scenes"]:
            scene_entries = (scene.get("entries") or []) if isinstance(scene, dict) else []
            entries += len(scene_entries)
            for entry in scene_entries:
                if isinstance(entry, dict) and isinstance(entry.get("description"), str):
                    words += len(entry["description"].split())
        sizes.append(StorySize(str(raw["game_pid"]), words, entries, len(raw["scenes"]), path.name))
    return sizes


def test_accounting_balances_with_reasons(out):
    stats = json.loads((out / "stats.json").read_text())
    assert stats["balanced"]
    games = stats["stages"]["games"]
    assert (games["read"], games["written"], games["rejected"]) == (18, 11, 7)
    assert games["rejected_by_reason"] == {
        "missing_field": 1,
        "no_characters": 1,
        "no_scenes": 1,
        "not_an_object": 1,
        "empty_file": 1,
        "malformed_json": 1,
        "not_utf8": 1,
    }
    assert stats["stages"]["dedupe"]["rejected_by_reason"] == {"duplicate_id": 1}
    assert stats["stages"]["entries"]["rejected_by_reason"] == {
        "duplicate_id": 1,
        "not_an_object": 1,
        "missing_field": 2,
        "bad_field_type": 1,  # g_orchard's third scene is a string
        "unknown_character": 1,  # g_noest's entry 602 is by character 9, which the game lacks
    }
    check_rejects(out)
    rejects = table(out, "rejects")
    assert len(rejects) == sum(s["rejected"] for s in stats["stages"].values())
    dup = rejects[(rejects.reason == "duplicate_id") & (rejects.stage == "dedupe")].iloc[0]
    assert dup.input_id == "z_copy_of_lighthouse.json" and dup.stage == "dedupe"


def test_split_equals_the_definition_story_for_story(out):
    stories = table(out, "stories").set_index("story_id")
    sizes = independent_sizes()
    assert stories.n_words.to_dict() == {s.story_id: s.words for s in sizes}
    assert stories.split.to_dict() == assign_splits(sizes)
    report = json.loads((out / "stats.json").read_text())["split"]
    assert sum(r["stories"] for r in report.values()) == 10
    assert report["train"]["words"] == stories[stories.split == "train"].n_words.sum()
    card = (out / "CARD.md").read_text()
    assert "largest first (ties: more entries, then more scenes, then the larger input path first" in card
    assert "| train | 1 |" in card


def test_tables_carry_split_and_ids(out):
    splits = table(out, "stories").set_index("story_id").split.to_dict()
    for name, key in (
        ("entries", "entry_id"),
        ("cards", "card_use_id"),
        ("characters", "character_id"),
        ("scenes", "scene_id"),
        ("packed", "example_id"),
    ):
        rows = table(out, name)
        assert rows[key].is_unique
        assert (rows.split == rows.story_id.map(splits)).all(), name
    entries = table(out, "entries").set_index("entry_id")
    assert entries.loc["game-station:303", "redacted"] and entries.loc["game-station:303", "text"] == ""
    assert entries.loc["game-lighthouse:102", "character_id"] == "game-lighthouse:1"
    assert len(entries[entries.story_id == "game-lighthouse"]) == 9  # the duplicate file's entry is gone
    cards = table(out, "cards")
    assert set(cards.usage) == {"place", "challenge", "target_challenge", "played", "pickup"}


def check_example(row, preferred=256, min_text=0):
    """The serialised example (text tokens, a separator per segment, an end token after the
    entry) fits the budget, and the solver's constraints hold over segment lengths."""
    segs = list(row["segments"])
    special = [2 if s["kind"] == "entry" else 1 for s in segs]
    true = [s["true_tokens"] + o for s, o in zip(segs, special)]
    got = [s["tokens"] + o for s, o in zip(segs, special)]
    budget, total = row["budget"], sum(true)
    assert row["special_tokens"] == sum(special) and row["true_total_tokens"] == total
    assert row["total_tokens"] == sum(got) == min(budget, total) <= budget
    assert all(o + min_text <= g <= t for g, t, o in zip(got, true, special))  # min_text 0: a separator alone
    if total <= budget:
        assert got == true
    entry = [s for s in segs if s["kind"] == "entry"]
    assert len(entry) == 1 and segs[-1]["kind"] == "entry"
    if total > budget:
        others = sum(o + min_text for s, o in zip(segs, special) if s["kind"] != "entry")
        assert got[-1] >= min(true[-1], preferred, budget - others)


def test_every_packed_example_satisfies_the_constraints(out, small):
    for result, min_text in ((out, 0), (small, 1)):
        packed = table(result, "packed")
        assert len(packed) == 17
        for row in packed.to_dict("records"):
            check_example(row, min_text=min_text)


def test_packed_examples_are_one_per_character_entry_with_text(out):
    entries = table(out, "entries")
    wanted = entries[entries.character_id.notna() & ~entries.redacted & (entries.text.str.strip() != "")]
    assert sorted(table(out, "packed").entry_id) == sorted(wanted.entry_id)


def test_default_packing_is_the_originals(out):
    """Defaults: one leaf per card or character field, the history entry 102 as its cards and
    107 (no card) as its text, the establishment as its place card only."""
    packed = table(out, "packed").set_index("entry_id")
    segs = list(packed.loc["game-lighthouse:108", "segments"])
    assert [(s["kind"], s["field"]) for s in segs] == [
        ("character", "name"),
        ("character", "description"),
        ("place", "name"),
        ("place", "description"),
        *[
            ("history", f)
            for f in ("name", "description", "success_stakes", "failure_stakes", "name", "description", "text")
        ],
        ("challenge", "name"),
        ("challenge", "description"),
        ("challenge", "success_stakes"),
        ("entry", "text"),
    ]
    assert [s["source_id"] for s in segs[4:11]] == ["game-lighthouse:102:target_challenge:0"] * 4 + [
        "game-lighthouse:102:played:0"
    ] * 2 + ["game-lighthouse:107"]
    assert all(s["tokens"] == s["true_tokens"] for s in segs)  # 1024 tokens hold it all
    desert = list(packed.loc["game-desert:207", "segments"])  # a character with no name or description
    assert [(s["field"], s["text"], s["tokens"]) for s in desert[:2]] == [
        ("name", "<|MISSING|>", 1),
        ("description", "<|MISSING|>", 1),
    ]
    card = (out / "CARD.md").read_text(encoding="utf-8")
    assert "| solver leaves | one length variable per character or card field" in card
    assert "`--solver-leaves segment`: one length variable per character or card" in card


def test_small_budget_with_history(small):
    packed = table(small, "packed").set_index("entry_id")
    segs = list(packed.loc["game-lighthouse:108", "segments"])
    # default --character-history 1: Mara's own last entry (102) joins the preceding entry (107)
    assert [s["kind"] for s in segs] == [
        "character",
        "place",
        "establishment",
        "history",
        "history",
        "challenge",
        "entry",
    ]
    assert segs[3]["source_id"] == "game-lighthouse:102"
    history = segs[4]
    bpe = get_tokenizer(f"gpt2:{small.parent}")
    text = "The first boat turns. Then the second."
    assert history["source_id"] == "game-lighthouse:107" and history["true_tokens"] == len(bpe.spans(text))
    assert text.endswith(history["text"])  # keeps its end
    assert len(bpe.spans(history["text"])) == history["tokens"] < history["true_tokens"]
    entry = segs[-1]
    assert entry["text"].startswith("Mara counts the hulls")  # keeps its beginning
    assert packed.loc["game-lighthouse:108", "total_tokens"] == 40
    assert set(table(small, "stories").split) == {"train", "validation", "test"}
    assert set(packed.tokenizer) == {bpe.name} and bpe.name.startswith("hf:BPE:")
    card = (small / "CARD.md").read_text()
    assert f"tokenizer: `{bpe.name}`" in card
    assert "| solver leaves | one length variable per character or card (all its fields)" in card
    assert "`--solver-leaves field`: one length variable per character or card field" in card
    assert "largest first (ties: smaller `story_id` first" in card


def test_deterministic_across_worker_count(out, tmp_path):
    again = run(tmp_path / "mp", "--direct_running_mode=multi_processing", "--direct_num_workers=2")
    files = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    for rel in files:
        assert (out / rel).read_bytes() == (again / rel).read_bytes(), rel


def test_output_folder_is_a_hugging_face_dataset_card(out):
    """README.md's YAML configs load with datasets.load_dataset, splits and row counts as written."""
    from conftest import check_dataset_card

    assert check_dataset_card(out)


def test_split_file_lists_as_storium_gpt2_reads_them(out):
    """`{split}_filenames.txt`: each split's game files (input ids), newline-terminated."""
    stories = table(out, "stories")
    for split in ("train", "validation", "test"):
        text = (out / f"{split}_filenames.txt").read_text(encoding="utf-8")
        names = text.splitlines()
        assert names == list(stories[stories.split == split].sort_values("story_id").input_id)
        assert not names or text.endswith("\n")
    assert sum(
        len((out / f"{s}_filenames.txt").read_text().splitlines()) for s in ("train", "validation", "test")
    ) == len(stories)


def test_card_gives_the_dataset_counts_beside_the_papers(out):
    card = (out / "CARD.md").read_text(encoding="utf-8")
    stats = json.loads((out / "stats.json").read_text())
    assert f"| stories | {stats['tables']['stories']} | 5,743 |" in card
    assert f"| scene entries | {stats['tables']['entries']} | 448,264 |" in card
    assert "| 569 / 570 |" in card and "seed: none" in card
