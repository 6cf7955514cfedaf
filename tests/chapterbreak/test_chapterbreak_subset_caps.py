"""The cause and dialogue subsets reach Table 4's per-book rates only through the per-book cap
(issue 30): the job counts what each book would give uncapped, in stats.json and the card."""

from __future__ import annotations

import pathlib

import pytest
from conftest import shared_path

from annotators.chapterbreak.books import book_chapters, gutenberg_book
from annotators.chapterbreak.card import PER_BOOK_ROWS, cap_lines, dataset_stats
from annotators.chapterbreak.examples import BookText, ExampleConfig
from annotators.chapterbreak.records import BookStat, BoundaryStat
from annotators.chapterbreak.steps import book_stat
from annotators.chapterbreak.subsets import KINDS, subset_examples, uncapped_count

FIX = pathlib.Path(__file__).parents[1] / "fixtures" / "chapterbreak" / "books"
CONFIG = ExampleConfig(prefix_lengths=(64,))


def drawn_without_cap(book: dict, kind: str) -> int:
    """Boundaries `--subset-per-book 0` draws (one row per boundary with one prefix length)."""
    config = ExampleConfig(prefix_lengths=(64,), subset_per_book="0")
    return len(subset_examples(book["book_id"], book["source"], book_chapters(book), kind, seed=0, config=config))


def _repeating_book() -> dict:
    """A book ending in one passage said over and over: its suffixes equal the later ones,
    so only the last few (cut short by the end of the book) can be their negatives."""
    opening = "\n\n".join(
        f'"Night {k} was quieter," the keeper wrote, because he kept a log of every one.' for k in range(12)
    )
    refrain = (
        '"Again and again the bell rang over the water," he said, because the keeper had told '
        "him to count every stroke of it until the morning came."
    )
    text = opening + "\n\n" + "\n\n".join([refrain] * 20)
    return gutenberg_book("repeating.txt", text.encode("utf-8"), keep_unchaptered=True)


@pytest.mark.parametrize("name", ["unchaptered_novel.txt", "hallow_fen_1990s.txt", "quarry_road_modern.txt"])
def test_uncapped_count_is_what_no_cap_draws(name):
    book = gutenberg_book(name, (FIX / name).read_bytes(), keep_unchaptered=True)
    text = BookText(book_chapters(book), CONFIG.tokenizer)
    for kind in KINDS:
        assert uncapped_count(text, kind, CONFIG) == drawn_without_cap(book, kind), kind


def test_uncapped_count_leaves_out_suffixes_whose_only_negatives_are_copies():
    book = _repeating_book()
    text = BookText(book_chapters(book), CONFIG.tokenizer)
    counts = {kind: uncapped_count(text, kind, CONFIG) for kind in KINDS}
    assert counts == {kind: drawn_without_cap(book, kind) for kind in KINDS}
    # a boundary with enough later ones, but not enough that differ from it, gives nothing
    later = {
        kind: sum(len(text_after) >= CONFIG.n_negatives for text_after in _later_lists(text, kind)) for kind in KINDS
    }
    assert counts["dialogue"] >= 10 and counts["dialogue"] < later["dialogue"]


def _later_lists(text: BookText, kind: str) -> list[list[int]]:
    from annotators.chapterbreak.subsets import _suffixes

    found, ends = _suffixes(text, kind, CONFIG)
    return [[q for q in found if q >= ends[p]] for p in found]


def test_book_stat_counts_each_subset_kind():
    book = gutenberg_book("unchaptered_novel.txt", (FIX / "unchaptered_novel.txt").read_bytes(), keep_unchaptered=True)
    stat = book_stat(book, ExampleConfig(subsets=("dialogue",)))
    assert stat.subsets_uncapped == (("dialogue", drawn_without_cap(book, "dialogue")),)
    assert stat.name == "unchaptered_novel.txt"
    assert book_stat(book).subsets_uncapped == () and book_stat(book, ExampleConfig(subsets=())).subsets_uncapped == ()


def _stats(n_books: int, per_book: str = "paper") -> dict:
    books = [
        BookStat("pg19", f"b{k}", 0, 1000, f"book{k:02d}.txt", (("cause", 30 + k), ("dialogue", 690)))
        for k in range(n_books)
    ]
    bounds = [
        BoundaryStat("pg19", kind, f"b{k}", f"{kind}{k}-{i}")
        for k in range(n_books)
        for kind, n in (("cause", 11), ("dialogue", 69))
        for i in range(n)
    ]
    return dataset_stats(books, bounds, per_book)


def test_stats_and_card_show_uncapped_beside_cap_and_drawn():
    caps = _stats(2)["subsets_uncapped"]["pg19"]
    assert caps["cause"]["uncapped_per_book"] == 30.5 and caps["cause"]["cap"] == 11
    assert caps["cause"]["uncapped_per_cap"] == round(30.5 / 11, 1) and caps["cause"]["drawn_per_book"] == 11
    assert caps["dialogue"]["uncapped_per_cap"] == 10.0 and caps["dialogue"]["uncapped"] == 1380
    assert caps["cause"]["per_book"][1] == {"book_id": "b1", "name": "book01.txt", "uncapped": 31, "drawn": 11}
    text = "\n".join(cap_lines(_stats(2)["subsets_uncapped"]))
    assert "| pg19 | dialogue | 2 | 690.0 (690-690) | 69 | 69.0 | 10.0x |" in text
    assert "| book01.txt | 31 | 11 | 690 | 69 |" in text
    # many books: the card points to stats.json instead of listing each
    many = "\n".join(cap_lines(_stats(PER_BOOK_ROWS + 1)["subsets_uncapped"]))
    assert "book01.txt" not in many and "lists each" in many
    # no cap: nothing to compare with
    assert _stats(1, "0")["subsets_uncapped"]["pg19"]["cause"]["cap"] is None
    assert "subsets_uncapped" not in dataset_stats([BookStat("pg19", "b", 3, 10)], [])


@pytest.mark.slow
def test_real_books_give_several_times_the_cap_uncapped():
    root = shared_path("gutenberg")
    stats = []
    for path in sorted(root.glob("*/*.txt")):
        book = gutenberg_book(path.name, path.read_bytes(), keep_unchaptered=True)
        stats.append(book_stat(book, CONFIG))
        if path.name in ("pg84.txt", "pg5200.txt"):  # small enough to draw everything
            assert dict(stats[-1].subsets_uncapped) == {k: drawn_without_cap(book, k) for k in KINDS}
    caps = dataset_stats(stats, [], "paper")["subsets_uncapped"]["pg19"]
    assert caps["cause"]["books"] == len(stats) >= 10
    assert caps["cause"]["uncapped_per_book"] > 2 * caps["cause"]["cap"]
    assert caps["dialogue"]["uncapped_per_book"] > 10 * caps["dialogue"]["cap"]
