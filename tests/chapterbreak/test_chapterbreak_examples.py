"""Unit and property tests of ChapterBreak examples: prefix cut, gold, negatives, headings (§2)."""

from __future__ import annotations

import dataclasses
import pathlib

from hypothesis import given, settings
from hypothesis import strategies as st

from annotators.chapterbreak.books import book_chapters, gutenberg_book
from annotators.chapterbreak.examples import BookChapter, ExampleConfig, chapter_examples, rewrite_heading
from annotators.chapterbreak.records import PoolOpening
from annotators.chapterbreak.subsets import subset_examples
from annotators.text.tokenizers import get_tokenizer

FIX = pathlib.Path(__file__).parents[1] / "fixtures" / "chapterbreak" / "books"
TOK = get_tokenizer("words_punct_v1")


def test_tokenizer_counts_and_cuts_verbatim():
    text = "Don't stop -- it's 3 o'clock.\n\nNext line"
    assert TOK.spans("Don't go.") == [(0, 5), (6, 8), (8, 9)]
    assert TOK.count(text) == 10
    assert TOK.head(text, 3) == "Don't stop -"
    assert TOK.tail(text, 2) == "Next line"
    assert get_tokenizer("whitespace_v1").count(text) == 8


def test_rewrite_heading_keeps_gold_style():
    assert (
        rewrite_heading("CHAPTER VII\nTHE ROAD\n\nBody", "CHAPTER VII\nTHE ROAD", "VII", "III")
        == "CHAPTER III\nTHE ROAD\n\nBody"
    )
    # an arabic chapter number repeated in the title is rewritten too (it would tell the position)
    assert (
        rewrite_heading("Chapter 12: Chapter 12 Redux\n\nx", "Chapter 12: Chapter 12 Redux", "12", "3")
        == "Chapter 3: Chapter 3 Redux\n\nx"
    )
    assert (
        rewrite_heading("Chapter 5: The 5th Day of 15\n\nOn day 5", "Chapter 5: The 5th Day of 15", "5", "2")
        == "Chapter 2: The 2th Day of 15\n\nOn day 5"
    )
    assert (
        rewrite_heading("CHAPTER IV\nI AM BORN\n\nx", "CHAPTER IV\nI AM BORN", "IV", "I") == "CHAPTER I\nI AM BORN\n\nx"
    )
    assert (
        rewrite_heading("The mill. Chapter IV.\n\nI went", "The mill. Chapter IV.", "IV", "II")
        == "The mill. Chapter II.\n\nI went"
    )


def make_chapters(n: int, words: int = 60) -> list[BookChapter]:
    out = []
    for i in range(n):
        body = " ".join(f"w{i}x{j}" for j in range(words)) + "."
        out.append(BookChapter(i, f"CHAPTER {i + 1}", str(i + 1), body))
    return out


def test_fixture_book_examples_exact():
    book = gutenberg_book("hallow_fen_1990s.txt", (FIX / "hallow_fen_1990s.txt").read_bytes())
    chapters = book_chapters(book)
    rows = chapter_examples(book["book_id"], "pg19", chapters, seed=3, config=ExampleConfig(prefix_lengths=(64,)))
    assert [r["chapter_index"] for r in rows] == [1, 2]
    first = rows[0]
    # the default heading mode: the gold's chapter phrase, no title, on the gold and every negative
    assert first["gold"].startswith("CHAPTER II\n\nIlse painted the mill")
    assert first["heading_normalization"] == "normalize"
    assert first["prefix_tokens"] == 64 and TOK.count(first["prefix"]) == 64
    assert chapters[0].body.endswith(first["prefix"])
    assert len(first["negatives"]) == 5 and set(first["negative_chapter_indices"]) <= set(range(2, 8))
    assert all(n.startswith("CHAPTER II\n\n") for n in first["negatives"])  # the gold's heading line
    assert all(TOK.count(n) == 128 for n in first["negatives"]) and first["gold_tokens"] == 128
    again = chapter_examples(book["book_id"], "pg19", chapters, seed=3, config=ExampleConfig(prefix_lengths=(64,)))
    assert again == rows
    other = chapter_examples(book["book_id"], "pg19", chapters, seed=4, config=ExampleConfig(prefix_lengths=(64,)))
    assert [r["negative_chapter_indices"] for r in other] != [r["negative_chapter_indices"] for r in rows]


def test_caption_gold_starts_with_a_clean_heading_and_prefix_has_no_contents():
    config = ExampleConfig(prefix_lengths=(8192,), min_later_chapters=3, n_negatives=3)
    book = gutenberg_book("stray_heading.txt", (FIX / "stray_heading.txt").read_bytes())
    rows = chapter_examples(
        book["book_id"], "pg19", book_chapters(book), seed=1, config=dataclasses.replace(config, headings="number")
    )
    gold = next(r for r in rows if r["chapter_index"] == 3)
    assert gold["gold"].startswith("CHAPTER IV.\nTHE CHAPEL\n\n")
    assert all("Illustration" not in r["prefix"] and "_" not in r["gold"] for r in rows)
    book = gutenberg_book("contents_single_spaced.txt", (FIX / "contents_single_spaced.txt").read_bytes())
    rows = chapter_examples(book["book_id"], "pg19", book_chapters(book), seed=1, config=config)
    assert rows[0]["prefix"].startswith("CHAPTER I.\nThe Mill\n\n")
    assert all("Contents" not in r["prefix"] and "     The" not in r["prefix"] for r in rows)


def test_too_few_chapters_is_a_drop_and_keep_headings_option():
    dropped = chapter_examples("b", "pg19", make_chapters(6), seed=0)
    assert dropped.reason == "no_usable_boundary"
    assert dropped.detail.startswith("6 chapters, 5 boundaries: 5 with fewer than 5 chapters after the gold, 0 ")
    few = chapter_examples("b", "pg19", make_chapters(8), seed=0, config=ExampleConfig(n_negatives=100))
    assert few.detail == (  # once "(2 skipped)"
        "8 chapters, 7 boundaries: 5 with fewer than 5 chapters after the gold, 0 without a gold of "
        "exactly 128 tokens, 2 without 100 usable negatives (later chapters)"
    )
    rows = chapter_examples("b", "pg19", make_chapters(7), seed=0, config=ExampleConfig(headings="keep"))
    assert len(rows) == 1 and sorted(n.split("\n")[0] for n in rows[0]["negatives"]) == [
        f"CHAPTER {i}" for i in range(3, 8)
    ]


def test_out_of_book_negatives_come_from_other_books():
    pool = [
        PoolOpening("other", i, f"CHAPTER {i + 1}", str(i + 1), f"CHAPTER {i + 1}\n\nOther text {i}.") for i in range(6)
    ]
    rows = chapter_examples(
        "b", "pg19", make_chapters(3), seed=0, config=ExampleConfig(negatives_from="out_of_book"), pool=pool
    )
    assert [r["chapter_index"] for r in rows] == [1, 2]
    assert all(set(r["negative_book_ids"]) == {"other"} for r in rows)
    assert all(n.startswith("CHAPTER 2\n") for n in rows[0]["negatives"])


def test_cause_and_dialogue_subsets_on_fixture():
    book = gutenberg_book("q.txt", (FIX / "quarry_road_modern.txt").read_bytes())
    chapters = book_chapters(book)
    for kind, opener in (("cause", ("Because", "Owing to")), ("dialogue", ("\u201c",))):
        rows = subset_examples("q", "pg19", chapters, kind, seed=0)
        assert rows, kind
        for r in rows:
            assert r["boundary"] == kind and r["gold"].startswith(opener)
            assert all(n.startswith(opener) and n != r["gold"] for n in r["negatives"])
            assert min(r["negative_chapter_indices"]) >= r["chapter_index"]


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(min_value=7, max_value=14),
    words=st.integers(min_value=5, max_value=300),
    seed=st.integers(min_value=0, max_value=10_000),
    lengths=st.lists(st.sampled_from([16, 64, 256, 1024]), min_size=1, max_size=3),
)
def test_property_negatives_and_prefix(n, words, seed, lengths):
    chapters = make_chapters(n, words)
    config = ExampleConfig(prefix_lengths=tuple(lengths))
    rows = chapter_examples("book-x", "pg19", chapters, seed=seed, config=config)
    assert {r["chapter_index"] for r in rows} == set(range(1, n - 5))
    for r in rows:
        k = r["chapter_index"] - 1
        before = "\n\n".join(c.opening for c in chapters[: k + 1])
        assert before.endswith(r["prefix"]) and r["prefix"].endswith(chapters[k].body[-50:])
        assert r["prefix_tokens"] == TOK.count(r["prefix"]) <= r["prefix_length"]
        assert r["gold"] == TOK.head(chapters[k + 1].opening, 128)
        assert len(r["negatives"]) == 5 and len(set(r["negative_chapter_indices"])) == 5
        assert set(r["negative_book_ids"]) == {"book-x"}
        for neg, j in zip(r["negatives"], r["negative_chapter_indices"]):
            assert neg != r["gold"] and j > k + 1
            assert neg.split("\n")[0] == f"CHAPTER {k + 2}"
            assert neg.split("\n\n", 1)[1] in chapters[j].body or chapters[j].body.startswith(neg.split("\n\n", 1)[1])


_HEADINGS = ["", "CHAPTER 3", "Chapter IV. The Storm", "IV.", "  II  ", "Chapter 5: The 5th Day", "PART ONE", "1."]
_BODIES = ["", "\n\n", "   ", "It was late.", "“Go,” she said — don't.", "word " * 40, "a\n\nb c.\n\n\nd", "...!!"]


@settings(max_examples=150, deadline=None)
@given(
    parts=st.lists(
        st.tuples(
            st.sampled_from(_HEADINGS),
            st.sampled_from(["", "3", "IV", "II", "5", "1", "ONE"]),
            st.lists(st.sampled_from(_BODIES), max_size=6).map("".join),
        ),
        min_size=2,
        max_size=8,
    ),
    mode=st.sampled_from(["normalize", "keep", "strip", "number"]),
    tokenizer=st.sampled_from(["words_punct_v1", "word_punct_chars", "word_punct_runs", "whitespace_v1"]),
    n=st.sampled_from([1, 2, 3, 5, 40, 128]),
)
def test_a_chapters_head_cut_once_per_book_is_the_suffix_cut_per_boundary(parts, mode, tokenizer, n):
    """`suffix_fn` cuts each chapter once per book (a 6,000-chapter book cut 18 million
    suffixes, 15 minutes); every suffix it gives is the one `suffix` cuts for that boundary."""
    from annotators.chapterbreak.examples import BookText, suffix, suffix_fn

    chapters = [BookChapter(i, h, num, b) for i, (h, num, b) in enumerate(parts)]
    config = ExampleConfig(headings=mode, tokenizer=tokenizer, suffix_tokens=n)
    book = BookText(chapters, tokenizer)
    assert book.separable
    for gold in range(len(chapters)):
        fn = suffix_fn(book, gold, config)
        assert [fn(j) for j in range(len(chapters))] == [suffix(book, j, gold, config) for j in range(len(chapters))]
