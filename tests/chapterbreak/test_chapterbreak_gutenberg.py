"""Unit tests: PG decoding, boilerplate stripping and chapter detection (ChapterBreak §2)."""

from __future__ import annotations

import pathlib

import pytest
from conftest import shared_path

from annotators.chapterbreak.chapters import ChapterConfig, detect_chapters
from annotators.chapterbreak.gutenberg import clean_book, decode_text, strip_boilerplate
from annotators.core.outcome import Drop

FIX = pathlib.Path(__file__).parents[1] / "fixtures" / "chapterbreak" / "books"


def chapters_of(path, **cfg):
    body, info = clean_book(pathlib.Path(path).read_bytes())
    found = detect_chapters(body, ChapterConfig(**cfg))
    assert not isinstance(found, Drop), found
    return found[0], info


def test_decode_cp1252_crlf_and_nel_byte():
    text, label = decode_text("caf\u00e9 \u201cquoted\u201d\u2026 end\r\nnext".encode("cp1252"))
    assert (text, label) == ("caf\u00e9 \u201cquoted\u201d\u2026 end\nnext", "cp1252")


def test_decode_mixed_lines_and_bad_inputs():
    raw = "ok \u00e9".encode("utf-8") + b"\n" + "d\u00e9j\u00e0".encode("cp1252")
    assert decode_text(raw) == ("ok \u00e9\nd\u00e9j\u00e0", "mixed")
    assert decode_text(b"") == Drop("empty_file", "0 bytes")
    assert decode_text(b"\x00\x01\x02abc").reason == "binary_file"


@pytest.mark.parametrize(
    "text, body, style",
    [
        (
            "Header\n*** START OF THE PROJECT GUTENBERG EBOOK X ***\nBody line\n"
            "*** END OF THE PROJECT GUTENBERG EBOOK X ***\nLicence",
            "Body line",
            "modern",
        ),
        (
            "Intro\n*END*THE SMALL PRINT! FOR PUBLIC DOMAIN ETEXTS*Ver.04.29.93*END*\n\nBody\n\n"
            "End of The Project Gutenberg Etext of X\n",
            "Body",
            "small_print",
        ),
        ("Just a body\nwith two lines", "Just a body\nwith two lines", "none"),
        (
            "*** START OF THIS PROJECT GUTENBERG EBOOK Y ***\n\nProduced by A. Volunteer\n\nTHE BOOK\n",
            "THE BOOK",
            "modern",
        ),
    ],
)
def test_strip_boilerplate_every_era(text, body, style):
    assert strip_boilerplate(text) == (body, style)


def test_fixture_1990s_book_restarts_numbering_per_volume():
    chapters, info = chapters_of(FIX / "hallow_fen_1990s.txt")
    assert info == {"encoding": "utf-8", "boilerplate": "small_print"}
    assert [c.numeral for c in chapters] == ["I", "II", "III", "IV"] * 2
    assert chapters[4].heading == "CHAPTER I\nTHE FERRY IN WINTER"
    assert chapters[4].title == "THE FERRY IN WINTER"
    assert not chapters[3].body.rstrip().endswith("VOLUME II")
    assert chapters[0].body.startswith('"Is it far to the market?" asked Marten.')


def test_fixture_modern_book_skips_contents_prose_and_reads_caption():
    chapters, info = chapters_of(FIX / "quarry_road_modern.txt")
    assert info == {"encoding": "cp1252", "boilerplate": "modern"}
    assert [c.number for c in chapters] == list(range(1, 9))
    assert chapters[3].heading == "Chapter 4."  # the picture's caption is not the heading
    assert chapters[3].body.startswith("Tobiah waited by the lighthouse")
    assert chapters[1].body.endswith("Chapter and verse, he said, were all he wanted.")
    assert "PREFACE" not in chapters[0].body


@pytest.mark.parametrize(
    "name, reason",
    [
        ("one_chapter.txt", "fewer_than_two_chapters"),
        ("no_headings.txt", "no_chapter_headings"),
        ("empty.txt", "empty_file"),
        ("binary.txt", "binary_file"),
    ],
)
def test_fixture_rejects(name, reason):
    raw = (FIX / name).read_bytes()
    cleaned = clean_book(raw)
    result = cleaned if isinstance(cleaned, Drop) else detect_chapters(cleaned[0])
    assert isinstance(result, Drop) and result.reason == reason


def test_contents_list_with_blank_lines_is_dropped():
    toc = "\n\n".join(
        f"CHAPTER {r}. The {w} Room" for r, w in zip("I II III IV".split(), "Red Blue Green Grey".split())
    )
    prose = "\n\n".join(
        f"CHAPTER {r}. The {w} Room\n\n" + ("Words of the chapter go here. " * 30)
        for r, w in zip("I II III IV".split(), "Red Blue Green Grey".split())
    )
    chapters, info = detect_chapters(f"CONTENTS\n\n{toc}\n\n\nPREFACE\n\n{'A preface line. ' * 80}\n\n{prose}")
    assert [c.numeral for c in chapters] == ["I", "II", "III", "IV"]
    assert info["contents_entries"] == 4 and info["kept"] == 4


def test_prose_lines_beginning_with_chapter_are_not_headings():
    text = (
        "CHAPTER I\n\n" + "Some prose. " * 50 + "\n\nChapter 3 of the report was lost in the fire.\n\n"
        "CHAPTER II\n\n" + "More prose. " * 50
    )
    chapters, _ = detect_chapters(text)
    assert [c.numeral for c in chapters] == ["I", "II"]
    assert "Chapter 3 of the report" in chapters[0].body


# ---- review regressions (fixtures written by make_fixtures.py)
@pytest.mark.parametrize(
    "name, numerals, first_heading",
    [
        ("contents_single_spaced.txt", ["I", "II", "III", "IV", "V", "VI"], "CHAPTER I.\nThe Mill"),
        ("contents_pages_1990.txt", ["1", "2", "3", "4", "5", "6"], "Chapter 1: The Mill"),
    ],
)
def test_single_spaced_contents_list_is_not_a_chapter(name, numerals, first_heading):
    chapters, info = chapters_of(FIX / name)
    assert [c.numeral for c in chapters] == numerals
    assert chapters[0].heading == first_heading
    assert not chapters[0].body.lower().startswith("chapter") and len(chapters[0].body.split()) > 100
    assert not any("The Harbour" in c.body for c in chapters)  # no contents line in any chapter


def test_run_of_short_chapters_is_not_a_contents_list():
    chapters, info = chapters_of(FIX / "short_chapters.txt")
    assert [c.numeral for c in chapters] == ["I", "II", "III", "IV", "V", "VI", "VII", "VIII"]
    assert chapters[2].body == (
        "Corwin waited by the orchard with a lantern in hand, and nobody there\nsaid a word about it."
    )
    assert info == {"encoding": "utf-8", "boilerplate": "modern"}


def test_two_line_part_heading_is_cut_from_the_chapter_end():
    chapters, _ = chapters_of(FIX / "parts_two_line.txt")
    assert [c.number for c in chapters] == [1, 2, 3, 4, 5, 6, 7]
    assert chapters[2].body.endswith("turned.") and "PART TWO" not in chapters[2].body
    assert "DEPARTURE" not in chapters[2].body and chapters[3].body.startswith("Agathe")


def test_stray_heading_in_prose_and_emphasised_caption():
    body, _ = clean_book((FIX / "stray_heading.txt").read_bytes())
    chapters, info = detect_chapters(body)
    assert [c.numeral for c in chapters] == ["I", "II", "III", "IV", "V", "VI", "VII"]
    assert info["stray_headings"] == 1
    assert "\n\nCHAPTER XXX.\n\n" in chapters[1].body
    assert chapters[3].heading == "CHAPTER IV.\nTHE CHAPEL"


def test_contents_run_rules_on_plain_text():
    prose = "Words of the chapter go here and there. " * 40
    short = "She came in, sat down by the fire, and said nothing at all to anyone."
    heads = ["CHAPTER I.", "CHAPTER II.", "CHAPTER III.", "CHAPTER IV.", "CHAPTER V."]
    text = "\n\n".join(f"{h}\n\n{prose if n in (0, 4) else short}" for n, h in enumerate(heads))
    chapters, info = detect_chapters(text)  # three short chapters, numbering continues: kept
    assert len(chapters) == 5 and info["contents_entries"] == 0
    toc = "\n\n".join(f"{h}\n\n{short}" for h in heads[:3])  # synopses, then numbering goes back
    chapters, info = detect_chapters(f"{toc}\n\n{text}")
    assert [c.numeral for c in chapters] == ["I", "II", "III", "IV", "V"] and info["contents_entries"] == 3
    assert chapters[0].body == prose.rstrip("\n")


# ---- real books (../shared/data/gutenberg): count and where each chapter begins
REAL = [
    ("nltk_2006/austen-emma.txt", 55, "Emma Woodhouse, handsome, clever, and rich", "CHAPTER I"),
    ("nltk_2006/chesterton-thursday.txt", 15, "THE suburb of Saffron Park", "CHAPTER I\nTHE TWO POETS OF SAFFRON PARK"),
    ("pg_2017/pg11.txt", 12, "Alice was beginning to get very tired", ""),
    ("pg_2017/pg16.txt", 17, "All children, except one, grow up.", ""),
    ("pg_2017/pg174.txt", 20, "The studio was filled with the rich odour of roses", "CHAPTER 1"),
    ("pg_2017/pg345.txt", 27, "_3 May. Bistritz._--Left Munich", ""),
    ("pg_2024/pg84.txt", 24, "I am by birth a Genevese", "Chapter 1"),
]


@pytest.mark.parametrize("rel, count, first_body, first_heading", REAL)
def test_real_books_chapter_count_and_starts(rel, count, first_body, first_heading):
    chapters, _ = chapters_of(shared_path("gutenberg", rel))
    assert len(chapters) == count
    assert chapters[0].body.startswith(first_body) and chapters[0].heading == first_heading
    assert [c.index for c in chapters] == list(range(count))


def test_real_books_second_chapters_begin_at_their_heading():
    alice, _ = chapters_of(shared_path("gutenberg", "pg_2017", "pg11.txt"))
    assert alice[1].heading == "CHAPTER II. The Pool of Tears"
    assert alice[1].body.startswith("'Curiouser and curiouser!' cried Alice")
    emma, _ = chapters_of(shared_path("gutenberg", "nltk_2006", "austen-emma.txt"))
    assert [c.number for c in emma[16:20]] == [17, 18, 1, 2]  # volume II restarts at I
    assert emma[18].body.startswith("Emma and Harriet had been walking together one morning")
    frank, info = chapters_of(shared_path("gutenberg", "pg_2024", "pg84.txt"))
    assert info["encoding"] == "cp1252" and "\u2014" in frank[0].body


@pytest.mark.parametrize(
    "rel", ["pg_2017/pg1661.txt", "pg_2017/pg236.txt", "pg_2017/pg5200.txt", "pg_2017/pg98.txt", "pg_2024/pg64317.txt"]
)
def test_real_books_without_chapter_headings_are_rejected(rel):
    body, _ = clean_book(shared_path("gutenberg", rel).read_bytes())
    assert detect_chapters(body).reason == "no_chapter_headings"


@pytest.mark.parametrize(
    "rel, count, first",
    [
        ("pg_2024/pg64317.txt", 9, "In my younger and more vulnerable years"),
        ("pg_2017/pg98.txt", 45, "It was the best of times"),
        ("pg_2017/pg5200.txt", 3, "One morning, when Gregor Samsa"),
    ],
)
def test_optional_bare_numeral_headings(rel, count, first):
    chapters, _ = chapters_of(shared_path("gutenberg", rel), heading_styles=("chapter", "numeral"))
    assert len(chapters) == count and chapters[0].body.startswith(first)


def test_bare_numerals_never_accept_broken_numbering():
    body, _ = clean_book(shared_path("gutenberg", "pg_2017", "pg1661.txt").read_bytes())
    assert detect_chapters(body, ChapterConfig(heading_styles=("chapter", "numeral"))).reason == "numbering_broken"
