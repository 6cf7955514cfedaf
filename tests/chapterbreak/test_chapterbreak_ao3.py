"""Unit tests: AO3 pages, downloads and JSON lines -> works; notes removal; Appendix A filters."""

from __future__ import annotations

import dataclasses
import json
import pathlib

import pytest
from conftest import shared_path

from annotators.chapterbreak.ao3 import (
    Ao3Config,
    assemble,
    filter_reasons,
    normalise_heading,
    parse_ao3_html,
    parse_json_line,
    split_dump_text,
)
from annotators.chapterbreak.ao3_text import clean_chapter_text
from annotators.chapterbreak.books import ao3_book, book_chapters
from annotators.chapterbreak.examples import ExampleConfig, chapter_examples
from annotators.core.outcome import Drop

FIX = pathlib.Path(__file__).parents[1] / "fixtures" / "chapterbreak" / "ao3"


def test_real_chapter_pages_group_into_one_work():
    where = parse_ao3_html("where.html", shared_path("ao3", "where.html").read_bytes())
    hogwarts = parse_ao3_html("hogwarts.html", shared_path("ao3", "hogwarts.html").read_bytes())
    (w,), (h,) = where, hogwarts
    assert (w.work_id, h.work_id, w.posted, w.rating, w.language, w.words) == (
        "692",
        "692",
        2,
        "General Audiences",
        "English",
        1581,
    )
    assert [c.heading for c in w.chapters + h.chapters] == ["Chapter 1: Where am I?", "Chapter 2: Hogwarts"]
    assert h.chapters[0].text.startswith('Amy looked at the pair in disbelief. "Hogwarts. I see,"')
    assert "giving up on nanowrimo" not in h.chapters[0].text  # end notes are not chapter text
    meta, chapters = assemble("692", [h, w])
    assert [c.position for c in chapters] == [1, 2]
    assert filter_reasons(meta, chapters, Ao3Config()) == ["too_few_words", "ten_or_fewer_chapters"]


def test_real_pages_missing_a_chapter_and_rated_mature():
    (h,) = parse_ao3_html("hogwarts.html", shared_path("ao3", "hogwarts.html").read_bytes())
    assert assemble("692", [h]).reason == "missing_chapters"
    (d,) = parse_ao3_html("drive.html", shared_path("ao3", "drive.html").read_bytes())
    assert (d.work_id, d.rating, len(d.chapters)) == ("68481", "Mature", 1)
    assert ao3_book("68481", [d]).reason == "not_general_audiences"


@pytest.mark.parametrize("name", ["drabbles.html", "partial.html"])
def test_real_series_pages_have_no_text(name):
    result = parse_ao3_html(name, shared_path("ao3", name).read_bytes())
    assert isinstance(result, Drop) and result.reason == "no_work_text"


def test_download_fixture_chapters_without_notes():
    (part,) = parse_ao3_html("fen.html", (FIX / "fen_road_download.html").read_bytes())
    assert (part.work_id, part.posted, part.rating, part.language) == ("5501", 12, "General Audiences", "English")
    assert [c.position for c in part.chapters] == list(range(1, 13))
    assert part.chapters[0].heading == "Chapter 1: The Mill"
    text = " ".join(c.text for c in part.chapters)
    assert "Thanks to my beta" not in text and "See you next week" not in text and "A long walk" not in text
    book = ao3_book("5501", [part])
    assert book["source"] == "ao3" and len(book["chapters"]) == 12


def test_jsonl_fixture_lines():
    lines = (FIX / "works.jsonl").read_bytes().split(b"\n")
    (good,) = parse_json_line("works.jsonl:1", lines[0])
    assert (good.work_id, good.rating, len(good.chapters)) == ("4401", "General Audiences", 12)
    assert not any("Notes for the Chapter" in c.text or "hard to write" in c.text for c in good.chapters)
    assert not good.chapters[-1].text.endswith("Thank you all for reading!")
    (teen,) = parse_json_line("works.jsonl:2", lines[1])
    assert ao3_book("4402", [teen]).reason == "not_general_audiences"
    assert parse_json_line("works.jsonl:3", lines[2]).reason == "malformed_json"
    assert parse_json_line("x:1", b'{"work_id": "9"}').reason == "no_chapter_list"


def test_dump_layout_keyed_by_work_id():
    line = json.dumps({"77": {"title": "T", "chapters": ["One.", "Two."]}}).encode()
    (part,) = parse_json_line("d:1", line)
    assert part.work_id == "77" and [c.heading for c in part.chapters] == ["Chapter 1", "Chapter 2"]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("**Notes for the Chapter:**\n\nMy note.\n\nStory starts.", "Story starts."),
        ("Summary for the Chapter: short summary here\n\nStory.\n\nAuthor's Note:\n\nBye!", "Story."),
        (
            "<p><b>Author's Note:</b></p><blockquote><p>hi</p></blockquote><p>Real <i>text</i>, here.</p>",
            "Real text, here.",
        ),
    ],
)
def test_note_blocks_removed(text, expected):
    assert clean_chapter_text(text) == expected


@pytest.mark.parametrize(
    "cfg, reasons",
    [
        (Ao3Config(), ["not_english", "too_few_words", "ten_or_fewer_chapters"]),
        (Ao3Config(language=None, min_words=0), ["ten_or_fewer_chapters"]),
        (Ao3Config(language=None, min_words=0, more_than_chapters=0), []),
    ],
)
def test_filters_are_flags(cfg, reasons):
    line = json.dumps(
        {"work_id": "1", "language": "Deutsch", "rating": "General Audiences", "chapters": ["a b c"] * 3}
    ).encode()
    meta, chapters = assemble("1", parse_json_line("x:1", line))
    assert filter_reasons(meta, chapters, cfg) == reasons


# ---- review regressions: tag lists, blank lines, the long-fic dump, numbering in titles
def _variants():
    return (FIX / "dump_variants.jsonl").read_bytes().split(b"\n")


def test_list_valued_tags_and_comma_counts_are_accepted():
    (part,) = parse_json_line("dump_variants.jsonl:1", _variants()[0])
    assert (part.work_id, part.title, part.rating, part.language, part.words) == (
        "6601",
        "Reed Lanterns",
        "General Audiences",
        "English",
        12345,
    )
    book = ao3_book("6601", [part])
    assert book["info"]["stated_words"] == 12345 and len(book["chapters"]) == 12


def test_blank_json_line_is_no_work():
    assert parse_json_line("dump_variants.jsonl:2", _variants()[1]) == []
    assert parse_json_line("x:9", b"  \r") == []


def test_long_fic_dump_text_is_split_at_its_heading_lines():
    (part,) = parse_json_line("dump_variants.jsonl:3", _variants()[2])
    assert (part.work_id, part.words, part.posted, part.prefiltered) == ("6602", 15000, 12, True)
    assert [c.heading for c in part.chapters] == [f"Chapter {n}" for n in range(1, 13)]
    assert all(not c.text.startswith(("\t", "Notes")) and "Thanks for reading" not in c.text for c in part.chapters)
    assert part.chapters[0].text.startswith("Edmer slept near the bridge as the tide turned.")
    book = ao3_book("6602", [part])  # the dump is ChapterBreak's filtered set: no rating field needed
    assert book["source"] == "ao3" and len(book["chapters"]) == 12
    assert filter_reasons(dataclasses.replace(part, prefiltered=False), list(part.chapters), Ao3Config()) == [
        "language_unknown",
        "rating_unknown",
    ]
    bad = parse_json_line("dump_variants.jsonl:4", _variants()[3])
    assert bad == Drop("chapter_count_mismatch", "num_chaps=13 but 12 chapter headings in `text`")


def test_split_dump_text_fallback_and_no_headings():
    text = "Chapter 1: Start\n\nOne two.\n\nChapter 3 of the book was read aloud.\n\nChapter 2\n\nThree."
    assert split_dump_text(text) == [
        ("Chapter 1: Start", "\nOne two.\n\nChapter 3 of the book was read aloud.\n"),
        ("Chapter 2", "\nThree."),
    ]
    assert split_dump_text("Just prose.\n\n3. A list item") == []
    line = json.dumps({"9": {"title": "T", "num_chaps": 2, "text": "no headings here"}}).encode()
    assert parse_json_line("x:1", line).reason == "no_chapter_headings"


@pytest.mark.parametrize(
    "position, title, heading",
    [
        (2, "2. Chapter 4", "Chapter 2"),
        (9, "9. Chapter 12", "Chapter 9"),
        (3, "Chapter 3: The Storm", "Chapter 3: The Storm"),
        (4, "4. The Storm", "Chapter 4: The Storm"),
        (5, "Part 5", "Chapter 5"),
        (6, "101 Dalmatians", "Chapter 6: 101 Dalmatians"),
        (7, "", "Chapter 7"),
    ],
)
def test_normalise_heading_drops_numbering_only_titles(position, title, heading):
    assert normalise_heading(position, title) == heading


def test_ao3_negatives_do_not_leak_their_number():
    (part,) = parse_json_line("dump_variants.jsonl:1", _variants()[0])
    book = ao3_book("6601", [part])
    rows = chapter_examples(
        book["book_id"], "ao3", book_chapters(book), seed=2, config=ExampleConfig(prefix_lengths=(64,))
    )
    for row in rows:
        first = row["gold"].split("\n")[0]
        assert first == f"Chapter {row['chapter_index'] + 1}"
        assert all(neg.split("\n")[0] == first for neg in row["negatives"])


def test_an_untitled_work_is_a_book_with_an_empty_title():
    """An AO3 work without a title gave a None title, which failed the whole job where the
    books table (title non-nullable) was written."""
    line = json.dumps({"work_id": "3001", "chapters": ["Some words.", "More words."]}).encode()
    meta, chapters = assemble("3001", parse_json_line("x:1", line))
    assert meta.title == "" and len(chapters) == 2
    book = ao3_book(
        "3001", parse_json_line("x:1", line), Ao3Config(language=None, rating=None, min_words=0, more_than_chapters=0)
    )
    assert book["title"] == ""


def test_a_page_without_a_charset_that_is_not_utf8_is_read_as_windows_1252():
    """AO3 is English: such a page was read as GB18030 ("wasn抰"), or, with a stray byte GB18030
    refuses, rejected as undecodable."""
    from annotators.chapterbreak.ao3_html import decode_page

    page = "<html><body><p>It wasn\u2019t me, she said \u00d7 2.</p></body></html>\n"
    assert decode_page(page.encode("cp1252")) == page
    assert decode_page(page.encode("utf-8")) == page
    gbk = '<html><head><meta charset="gbk"></head><body>小猫</body></html>'
    assert decode_page(gbk.encode("gbk")) == gbk  # a declared charset still stands


@pytest.mark.parametrize("chapters", [[None, "b c"], ["a b", 1, "c"], ["a", ["x"]], [{"text": 5}]])
def test_a_chapter_that_is_no_text_is_a_bad_field_type(chapters):
    """`"chapters": [null, ...]` once became chapters whose text was "None" or "1"."""
    got = parse_json_line("x:1", json.dumps({"work_id": "7", "chapters": chapters}).encode())
    assert isinstance(got, Drop) and got.reason == "bad_field_type" and "not text" in got.detail
    (part,) = parse_json_line("x:1", json.dumps({"work_id": "7", "chapters": ["a b", {"text": "c"}]}).encode())
    assert [c.text for c in part.chapters] == ["a b", "c"]
