"""Whole-book steps of the ChapterBreak job: one PG file or one AO3 work -> a book record.

A book record is a plain dict (Beam-friendly): book_id, source ("pg19" | "ao3"), input_id,
title, info (encoding, boilerplate, heading style, ...) and chapters (dicts with index,
heading, title, number, numeral, body). `book_id` is stable: a SHA-256 of the source and
the file's path relative to the input glob (PG) or of the AO3 work id.
"""

from __future__ import annotations

import json

from annotators.chapterbreak.ao3 import Ao3Config, Ao3Part, assemble, filter_reasons
from annotators.chapterbreak.chapters import ChapterConfig, detect_chapters
from annotators.chapterbreak.examples import BookChapter
from annotators.chapterbreak.gutenberg import clean_book
from annotators.core.ids import stable_id
from annotators.core.outcome import Drop

PG, AO3 = "pg19", "ao3"


def book_id_for(source: str, key: str) -> str:
    return stable_id("book", source, key)


def _title_of(body: str) -> str:
    for line in body.split("\n")[:40]:
        if line.strip():
            return line.strip()[:200]
    return ""


def gutenberg_book(
    name: str, raw: bytes, config: ChapterConfig = ChapterConfig(), *, keep_unchaptered: bool = False
) -> dict | Drop:
    """Decode, strip boilerplate and find chapters of one PG file. A book whose chapters are
    not found is a Drop, or with `keep_unchaptered` (the cause and dialogue subsets come
    from every book) a book with no chapters whose `text` is the whole cleaned body."""
    cleaned = clean_book(raw)
    if isinstance(cleaned, Drop):
        return cleaned
    return book_from_text(name, *cleaned, config, keep_unchaptered=keep_unchaptered)


def book_from_text(
    name: str, body: str, info: dict, config: ChapterConfig = ChapterConfig(), *, keep_unchaptered: bool = False
) -> dict | Drop:
    """`gutenberg_book` after decoding and stripping: the book record of a cleaned body."""
    found = detect_chapters(body, config)
    if isinstance(found, Drop):
        if not keep_unchaptered:
            return Drop(
                found.reason, json.dumps({**info, "chapters": found.detail}, ensure_ascii=False, sort_keys=True)
            )
        return {
            "book_id": book_id_for(PG, name),
            "source": PG,
            "input_id": name,
            "title": _title_of(body),
            "info": {**info, "heading_style": "none", "chapters_found": f"{found.reason}: {found.detail}"},
            "chapters": [],
            "text": body,
        }
    chapters, diag = found
    head_end = chapters[0].line if chapters and chapters[0].heading else 0
    return {
        "book_id": book_id_for(PG, name),
        "source": PG,
        "input_id": name,
        "title": _title_of("\n".join(body.split("\n")[:head_end])),
        "info": {**info, **diag},
        "chapters": [
            {
                "index": c.index,
                "heading": c.heading,
                "title": c.title,
                "number": c.number,
                "numeral": c.numeral,
                "body": c.body,
            }
            for c in chapters
        ],
    }


def ao3_book(work_id: str, parts: list[Ao3Part], config: Ao3Config = Ao3Config()) -> dict | Drop:
    """Assemble one AO3 work from its parts and apply the Appendix A filters."""
    assembled = assemble(work_id, parts)
    if isinstance(assembled, Drop):
        return assembled
    meta, chapters = assembled
    words = sum(len(c.text.split()) for c in chapters)
    failed = filter_reasons(meta, chapters, config)
    if failed:
        return Drop(
            failed[0],
            f"work {work_id}: fails {failed}; language={meta.language!r} "
            f"rating={meta.rating!r} words={meta.words or words} chapters={len(chapters)}",
        )
    return {
        "book_id": book_id_for(AO3, work_id),
        "source": AO3,
        "input_id": f"ao3:{work_id}",
        "title": meta.title,
        "info": {
            "encoding": "",
            "boilerplate": "",
            "heading_style": "ao3_markup",
            "stated_words": meta.words,
            "inputs": sorted({p.input_id for p in parts}),
        },
        "chapters": [
            {
                "index": i,
                "heading": c.heading,
                "title": c.title,
                "number": c.position,
                "numeral": str(c.position),
                "body": c.text,
            }
            for i, c in enumerate(chapters)
        ],
    }


def book_chapters(book: dict) -> list[BookChapter]:
    """The book's chapters; a book without chapters is one headless chapter of its text."""
    if not book["chapters"]:
        return [BookChapter(0, "", "", book.get("text", ""))]
    return [BookChapter(c["index"], c["heading"], c["numeral"], c["body"]) for c in book["chapters"]]


def chapter_rows(book: dict) -> list[dict]:
    """Rows of the `chapters` table for one accepted book."""
    return [
        {
            "chapter_id": stable_id("chapter", book["book_id"], c["index"]),
            "book_id": book["book_id"],
            "source": book["source"],
            "chapter_index": c["index"],
            "heading": c["heading"],
            "title": c["title"],
            "number": c["number"],
            "numeral": c["numeral"],
            "text": c["body"],
            "n_words": len(c["body"].split()),
            "input_id": book["input_id"],
        }
        for c in book["chapters"]
    ]


def book_summary(book: dict) -> dict:
    """Row of the `books` table for one accepted book."""
    info = book["info"]
    return {
        "book_id": book["book_id"],
        "source": book["source"],
        "input_id": book["input_id"],
        "title": book["title"],
        "status": "ok",
        "stage": "",
        "reason": "",
        "detail": "; ".join(
            ([f"no chapters (subsets only): {info['chapters_found']}"] if "chapters_found" in info else [])
            + ([f"kept over its duplicate(s) {', '.join(info['duplicates'])}"] if info.get("duplicates") else [])
        )[:2000],
        "n_chapters": len(book["chapters"]),
        "n_words": sum(len(c.body.split()) for c in book_chapters(book)),
        "encoding": info.get("encoding", ""),
        "boilerplate": info.get("boilerplate", ""),
        "heading_style": info.get("heading_style", ""),
    }
