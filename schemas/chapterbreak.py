"""ChapterBreak tables: `chapters`, `books` and `examples` (SPEC.md; paper section 2)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pyarrow as pa

from schemas.common import with_version

_S, _I = pa.string(), pa.int64()

CHAPTERS_SCHEMA = with_version(
    pa.schema(
        [
            pa.field("chapter_id", _S, nullable=False),
            pa.field("book_id", _S, nullable=False),
            pa.field("source", _S, nullable=False),  # pg19 | ao3
            pa.field("chapter_index", _I, nullable=False),  # 0-based reading order
            pa.field("heading", _S, nullable=False),  # as printed (with a next-line title); "" if none
            pa.field("title", _S, nullable=False),
            pa.field("number", _I, nullable=True),  # parsed chapter number (restarts per volume)
            pa.field("numeral", _S, nullable=False),  # the number as printed: "III", "3", "Three"
            pa.field("text", _S, nullable=False),  # body without the heading
            pa.field("n_words", _I, nullable=False),
            pa.field("input_id", _S, nullable=False),
        ]
    ),
    "chapterbreak_chapters",
)

BOOKS_SCHEMA = with_version(
    pa.schema(
        [
            pa.field("book_id", _S, nullable=False),
            pa.field("source", _S, nullable=False),
            pa.field("input_id", _S, nullable=False),
            pa.field("title", _S, nullable=False),
            pa.field("status", _S, nullable=False),  # ok | rejected
            pa.field("stage", _S, nullable=False),  # the stage that accepted or rejected it
            pa.field("reason", _S, nullable=False),  # "" when ok
            pa.field("detail", _S, nullable=False),
            pa.field("n_chapters", _I, nullable=True),
            pa.field("n_words", _I, nullable=True),
            pa.field("encoding", _S, nullable=False),
            pa.field("boilerplate", _S, nullable=False),
            pa.field("heading_style", _S, nullable=False),
        ]
    ),
    "chapterbreak_books",
)

EXAMPLES_SCHEMA = with_version(
    pa.schema(
        [
            pa.field("example_id", _S, nullable=False),
            pa.field("boundary_id", _S, nullable=False),  # shared by the rows of one boundary
            pa.field("book_id", _S, nullable=False),
            pa.field("source", _S, nullable=False),
            pa.field("boundary", _S, nullable=False),  # chapter | cause | dialogue
            pa.field("chapter_index", _I, nullable=False),  # of the gold
            pa.field("prefix", _S, nullable=False),
            pa.field("gold", _S, nullable=False),
            pa.field("negatives", pa.list_(_S), nullable=False),
            pa.field("negative_chapter_indices", pa.list_(_I), nullable=False),
            pa.field("negative_book_ids", pa.list_(_S), nullable=False),
            pa.field("prefix_tokens", _I, nullable=False),  # actual length by `tokenizer`
            pa.field("prefix_length", _I, nullable=False),  # nominal length (one row per length)
            pa.field("gold_tokens", _I, nullable=False),
            pa.field("tokenizer", _S, nullable=False),
            pa.field("cut_offset", _I, nullable=False),  # character offset of the boundary in the book text
            pa.field("seed", _I, nullable=False),
            pa.field("heading_normalization", _S, nullable=False),
        ]
    ),
    "chapterbreak_examples",
)


@dataclasses.dataclass(frozen=True)
class BookRow:
    """One input book or work, accepted (with its chapter count) or rejected (with why)."""

    book_id: str
    source: str
    input_id: str
    status: str
    stage: str
    title: str = ""
    reason: str = ""
    detail: str = ""
    n_chapters: int | None = None
    n_words: int | None = None
    encoding: str = ""
    boilerplate: str = ""
    heading_style: str = ""

    def to_row(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
