"""Pipeline tests: `python -m pipelines.chapterbreak` on fixtures (+ real books when present)."""

from __future__ import annotations

import json
import pathlib
import shutil

import pandas as pd
import pytest
from conftest import SHARED_DATA

from annotators.chapterbreak.examples import heading_phrase
from annotators.chapterbreak.reasons import JOB_REASONS
from pipelines.chapterbreak import run

pytestmark = pytest.mark.slow  # end-to-end job runs: `make test-fast` leaves them out

FIX = pathlib.Path(__file__).parents[1] / "fixtures" / "chapterbreak"
REAL = ["pg_2017/pg11.txt", "pg_2024/pg84.txt"]
ARGS = ["--prefix_lengths", "256,8192", "--subsets", "cause,dialogue", "--seed", "7"]


def _inputs(root: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    books, ao3 = root / "books", root / "ao3"
    shutil.copytree(FIX / "books", books)
    shutil.copytree(FIX / "ao3", ao3)
    for rel in REAL:
        if (SHARED_DATA / "gutenberg" / rel).exists():
            shutil.copy(SHARED_DATA / "gutenberg" / rel, books / rel.replace("/", "_"))
    for page in ("where.html", "hogwarts.html", "drabbles.html"):
        if (SHARED_DATA / "ao3" / page).exists():
            shutil.copy(SHARED_DATA / "ao3" / page, ao3 / page)
    return books, ao3


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("cb")
    books, ao3 = _inputs(root / "in")
    out = root / "out"
    run(["--gutenberg", str(books / "*.txt"), "--ao3", str(ao3), "--output", str(out)] + ARGS)
    return out, books, ao3


def table(out, name):
    return pd.read_parquet(out / name)


def test_accounting_and_books_table(built):
    out, books, ao3 = built
    stats = json.loads((out / "stats.json").read_text())
    assert stats["balanced"] and all(s["read"] == s["written"] + s["rejected"] for s in stats["stages"].values())
    gb = stats["stages"]["gutenberg_books"]
    assert gb["read"] == len(list(books.glob("*.txt")))
    # books without chapter headings are kept for the cause and dialogue subsets (Appendix A)
    assert gb["rejected_by_reason"] == {"binary_file": 1, "empty_file": 1}
    b = table(out, "books").set_index("input_id")
    assert b.loc["hallow_fen_1990s.txt", "n_chapters"] == 8 and b.loc["empty.txt", "reason"] == "empty_file"
    for name, why in (("unchaptered_novel.txt", "no_chapter_headings"), ("one_chapter.txt", "fewer_than_two_chapters")):
        assert (b.loc[name, "n_chapters"], b.loc[name, "heading_style"]) == (0, "none")
        assert b.loc[name, "detail"].startswith(f"no chapters (subsets only): {why}")
    # one book in two editions (re-wrapped, no licence header) gives its examples once
    assert stats["stages"]["duplicates"]["rejected_by_reason"] == {"duplicate_book": 1}
    copy = b.loc["hallow_fen_other_edition.txt"]
    assert (copy["status"], copy["reason"], copy["stage"]) == ("rejected", "duplicate_book", "duplicates")
    assert "a copy of hallow_fen_1990s.txt" in copy["detail"]
    assert "kept over its duplicate(s) hallow_fen_other_edition.txt" in b.loc["hallow_fen_1990s.txt", "detail"]
    assert b.loc["ao3:4401", "status"] == "ok" and b.loc["ao3:4402", "reason"] == "not_general_audiences"
    assert b.loc["works.jsonl:3", "reason"] == "malformed_json"
    assert b.loc["ao3:6601", "status"] == "ok" and b.loc["ao3:6602", "n_chapters"] == 12  # list tags; long-fic dump
    assert b.loc["dump_variants.jsonl:4", "reason"] == "chapter_count_mismatch"
    assert "dump_variants.jsonl:2" not in b.index  # a blank line is not a book
    lines = stats["stages"]["ao3_lines"]
    assert (lines["read"], lines["rejected"], lines["outputs"]) == (7, 2, 4)
    rejects = table(out, "rejects")
    assert all(isinstance(json.loads(d), dict) for d in rejects.detail)  # every detail is JSON
    assert set(rejects.reason) <= set(JOB_REASONS)
    no_examples = rejects[rejects.stage == "examples"]
    assert len(rejects) - len(no_examples) == (b["status"] == "rejected").sum()
    assert "one_chapter.txt" in set(no_examples.input_id)  # 4 paragraphs: no position with 5 later ones
    ex = table(out, "examples")
    book = b.loc["unchaptered_novel.txt", "book_id"]
    assert set(ex[ex.book_id == book].boundary) == {"cause", "dialogue"}
    if (books / "pg_2017_pg11.txt").exists():
        assert b.loc["pg_2017_pg11.txt", "n_chapters"] == 12
        assert b.loc["ao3:692", "reason"] == "too_few_words" and b.loc["drabbles.html", "reason"] == "no_work_text"
    card = (out / "CARD.md").read_text()
    assert "words_punct_v1" in card and "| pg19 | chapter |" in card
    assert "## Reject reasons this job can give" in card and "| `fewer_than_two_chapters` |" in card


def test_chapter_examples_hold_the_invariants(built):
    out, _, _ = built
    chapters = table(out, "chapters")
    ex = table(out, "examples")
    by_key = {(r.book_id, r.chapter_index): r for r in chapters.itertuples()}
    chap = ex[ex.boundary == "chapter"]
    assert set(chap.prefix_length) == {256, 8192} and len(chap) > 0
    for r in chap.itertuples():
        k, gold = by_key[(r.book_id, r.chapter_index - 1)], by_key[(r.book_id, r.chapter_index)]
        assert r.prefix.endswith(k.text[-200:]) or k.text.endswith(r.prefix)
        assert r.prefix_tokens <= r.prefix_length and r.gold_tokens <= 128
        phrase = heading_phrase(gold.heading, gold.numeral)  # the default heading mode, normalize
        opening = f"{phrase}\n\n{gold.text}" if phrase else gold.text
        assert opening.startswith(r.gold)
        assert len(r.negatives) == 5 and len(set(r.negative_chapter_indices)) == 5
        for neg, j in zip(r.negatives, r.negative_chapter_indices):
            later = by_key[(r.book_id, j)]
            assert j > r.chapter_index and neg != r.gold
            body = neg.split("\n\n", 1)[1] if phrase else neg
            assert later.text.startswith(body[:40].rstrip())
            assert neg.split("\n")[0] == r.gold.split("\n")[0]  # one heading line for all six
    counts = chap.groupby("boundary_id").size()
    assert (counts == 2).all()


def test_released_layout_matches_examples(built):
    out, _, _ = built
    ex = table(out, "examples")
    for kind, name in (("chapter", "chapterbreak_ctx_256.json"), ("cause", "chapterbreak_cause_ctx_8192.json")):
        data = json.loads((out / "released" / name).read_text())
        assert set(data) == {"pg19", "ao3"}
        length = int(name.rsplit("_", 1)[1].split(".")[0])
        rows = ex[(ex.boundary == kind) & (ex.prefix_length == length)]
        assert sum(len(v) for s in data.values() for v in s.values()) == len(rows)
        for works in data.values():
            for book_id, items in works.items():
                mine = rows[rows.book_id == book_id].sort_values("cut_offset")
                assert [i["pos"] for i in items] == list(mine.gold)
                assert [i["negs"] for i in items] == [list(n) for n in mine.negatives]


@pytest.mark.parametrize(
    "workers",
    [["--direct_num_workers=2"], ["--direct_running_mode=multi_processing", "--direct_num_workers=2"]],
    ids=["pool", "beam_processes"],
)
def test_deterministic_on_two_workers(built, tmp_path, workers):
    """Two processes give one process's bytes: the default pool of workers, and Beam's own
    worker processes when asked for by name."""
    out, books, ao3 = built
    out2 = tmp_path / "out2"
    run(["--gutenberg", str(books / "*.txt"), "--ao3", str(ao3), "--output", str(out2)] + ARGS + workers)
    files = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(out2) for p in out2.rglob("*") if p.is_file())
    for rel in files:
        assert (out / rel).read_bytes() == (out2 / rel).read_bytes(), rel


def test_out_of_book_option(tmp_path):
    run(
        [
            "--gutenberg",
            str(FIX / "books" / "*.txt"),
            "--output",
            str(tmp_path),
            "--negatives",
            "out_of_book",
            "--prefix_lengths",
            "128",
        ]
    )
    ex = table(tmp_path, "examples")
    assert len(ex[ex.boundary == "chapter"]) > 0
    for r in ex.itertuples():  # Appendix F applies to chapter breaks; subsets stay in-book
        assert (r.book_id not in set(r.negative_book_ids)) == (r.boundary == "chapter") and len(r.negatives) == 5


def test_a_rerun_with_fewer_prefix_lengths_leaves_no_stale_released_file(tmp_path):
    out, books = tmp_path / "out", str(FIX / "books" / "*.txt")
    run(["--gutenberg", books, "--output", str(out), "--prefix_lengths", "128,256"])
    assert any("256" in p.name for p in (out / "released").iterdir())
    run(["--gutenberg", books, "--output", str(out), "--prefix_lengths", "128"])
    names = sorted(p.name for p in (out / "released").iterdir())
    assert names and not any("256" in n for n in names)
    assert json.loads((out / "stats.json").read_text())["config"]["examples"]["prefix_lengths"] == [128]
    assert not (tmp_path / "out.incomplete").exists()


def test_output_folder_is_a_hugging_face_dataset_card(built):
    """README.md's YAML configs load with datasets.load_dataset, splits and row counts as written."""
    from conftest import check_dataset_card

    assert check_dataset_card(built[0])


def test_uncapped_subset_counts_per_book_in_stats_and_card(built):
    out, _, _ = built
    stats = json.loads((out / "stats.json").read_text())
    caps = stats["chapterbreak"]["subsets_uncapped"]
    ex = table(out, "examples")
    ok = table(out, "books").query("status == 'ok'")
    for source, kinds in caps.items():
        assert set(kinds) == {"cause", "dialogue"}
        for kind, c in kinds.items():
            # every accepted book of the source, with what it gave and what it would give uncapped
            assert {r["book_id"] for r in c["per_book"]} == set(ok[ok.source == source].book_id)
            drawn = ex[(ex.source == source) & (ex.boundary == kind)].groupby("book_id").boundary_id.nunique()
            for r in c["per_book"]:
                assert r["drawn"] == drawn.get(r["book_id"], 0) <= r["uncapped"]
                assert r["drawn"] <= c["cap"]
            assert c["uncapped"] == sum(r["uncapped"] for r in c["per_book"])
    card = (out / "CARD.md").read_text()
    assert "the per-book cap makes Table 4's rates" in card
    pg = caps["pg19"]["dialogue"]
    assert f"| pg19 | dialogue | {pg['books']} | {pg['uncapped_per_book']} (" in card
