"""The functions the chapterbreak job's stages apply, one record at a time (paper section 2).

Each returns a list of outputs or `Drop(reason, detail)` (codes: `reasons.py`). Inputs are
the engine's (input_id, bytes) pairs for files and lines, and grouped (work_id, parts) for
AO3 works; the job (`pipelines/chapterbreak.py`) only wires them together.
"""

from __future__ import annotations

from annotators.chapterbreak.ao3 import Ao3Config, parse_ao3_html, parse_json_line
from annotators.chapterbreak.books import AO3, PG, ao3_book, book_chapters, book_from_text, book_id_for, gutenberg_book
from annotators.chapterbreak.chapters import ChapterConfig
from annotators.chapterbreak.dedup import BookKey
from annotators.chapterbreak.dedup import book_key as _book_key
from annotators.chapterbreak.examples import BookText, ExampleConfig, chapter_examples
from annotators.chapterbreak.gutenberg import clean_book
from annotators.chapterbreak.records import BookStat, BoundaryStat, PoolOpening
from annotators.chapterbreak.subsets import boundaries, subset_examples, uncapped_count
from annotators.core.outcome import Drop
from schemas.chapterbreak import BookRow
from schemas.common import detail_message


def _listed(result):
    return result if isinstance(result, Drop) else [result]


def read_gutenberg_book(
    element: tuple[str, bytes], config: ChapterConfig, keep_unchaptered: bool = False
) -> list[dict] | Drop:
    """One PG file (input_id, bytes) -> [book] with its chapters, or Drop; with
    `keep_unchaptered` (subsets wanted) a book without chapters is kept as one text."""
    input_id, raw = element
    return _listed(gutenberg_book(input_id, raw, config, keep_unchaptered=keep_unchaptered))


def read_ao3_page(element: tuple[str, bytes]):
    """One AO3 HTML file (input_id, bytes) -> its work part(s), or Drop."""
    input_id, raw = element
    return parse_ao3_html(input_id, raw)


def read_ao3_line(element: tuple[str, bytes]):
    """One AO3 JSON line (input_id, bytes) -> its work part ([] for a blank line), or Drop."""
    input_id, raw = element
    return parse_json_line(input_id, raw)


def split_duplicate_parts(parts) -> tuple[list, list[tuple]]:
    """(kept parts, [(duplicate part, the kept part it repeats, positions)]) of one work id.

    Parts (in input-id order) that bring new chapter positions are one work's pieces; a part
    that repeats a chapter position a kept part already has is a second work with an id
    already seen (or a second copy of the work), rejected rather than silently merged."""
    kept, duplicates, owner = [], [], {}
    for part in sorted(parts, key=lambda p: p.input_id):
        seen = sorted({ch.position for ch in part.chapters if ch.position in owner})
        if seen:
            duplicates.append((part, owner[seen[0]], seen))
            continue
        kept.append(part)
        for ch in part.chapters:
            owner.setdefault(ch.position, part)
    return kept, duplicates


def build_ao3_work(element, config: Ao3Config) -> list[dict] | Drop:
    """(work_id, the work's parts) -> [book] passing Appendix A's filters, or Drop (parts
    that repeat a kept part's chapters are left out: `ao3_work_parts` rejects them)."""
    work_id, parts = element
    kept, _ = split_duplicate_parts(parts)
    return _listed(ao3_book(work_id, kept, config))


def ao3_work_parts(element, config: Ao3Config) -> list[tuple[str, list[dict] | Drop]]:
    """Stage `ao3_works` (grouped by work id): the work's book or Drop under `ao3:<work_id>`,
    and a `duplicate_id` rejects row for each part that repeats a kept part's chapters."""
    work_id, parts = element
    parts = list(parts)
    _, duplicates = split_duplicate_parts(parts)
    out = [(ao3_work_input_id(element), build_ao3_work((work_id, parts), config))]
    for part, first, positions in duplicates:
        out.append(
            (
                part.input_id,
                Drop(
                    "duplicate_id",
                    {
                        "work_id": work_id,
                        "first_at": first.input_id,
                        "repeated_chapters": positions[:20],
                        "message": f"work {work_id} was already read from {first.input_id}",
                    },
                ),
            )
        )
    return out


def ao3_work_input_id(element) -> str:
    work_id, _ = element
    return f"ao3:{work_id}"


def book_examples(
    book: dict, pool: list[PoolOpening] | None = None, *, seed: int, config: ExampleConfig
) -> list[dict] | Drop:
    """All example rows of one book (chapter boundaries + requested subsets), or Drop.

    `pool` (Appendix F's out-of-book negatives) is every book's openings, in any order.
    """
    pool = sorted(pool) if pool is not None else None
    chapters = book_chapters(book)
    text = BookText(chapters, config.tokenizer)  # tokenised once for every kind of boundary
    rows, why = [], ""
    if book["chapters"]:
        found = chapter_examples(
            book["book_id"], book["source"], chapters, seed=seed, config=config, pool=pool, book=text
        )
        rows, why = ([], found.detail) if isinstance(found, Drop) else (found, "")
    for kind in config.subsets:
        rows += subset_examples(book["book_id"], book["source"], chapters, kind, seed=seed, config=config, book=text)
    if not rows:  # why each kind of boundary gave nothing (a generic text once hid it)
        subsets = (
            f"no usable {'/'.join(config.subsets)} position (a subset boundary needs {config.n_negatives} later "
            "chapters)"
            if config.subsets
            else "no subset asked for"
        )
        head = why or f"{len(book['chapters'])} chapters"
        return Drop("no_usable_boundary", f"{head}; {subsets}")
    return rows


HEADING_ROOM = 16  # tokens a pooled opening holds beyond its heading and suffix_tokens


def openings(book: dict, config: ExampleConfig) -> list[PoolOpening]:
    """The book's chapter openings for the out-of-book pool (headings as printed, with room
    for `suffix_tokens` tokens after the heading, and `HEADING_ROOM` more: a gold's numeral
    written in may take more subword tokens than the negative's own)."""
    text = BookText(book_chapters(book), config.tokenizer)
    tok = text.tok  # room for the heading: the gold's heading mode may replace or drop it
    return [
        PoolOpening(
            book["book_id"],
            c.index,
            c.heading,
            c.numeral,
            tok.head(c.opening, config.suffix_tokens + tok.count(c.heading) + HEADING_ROOM),
        )
        for c in text.chapters
    ]


def book_key(book: dict) -> BookKey:
    """The duplicate search's key of one accepted book (annotators.chapterbreak.dedup): its
    whole text (an AO3 work's chapters; `gutenberg_key` gives a PG book's)."""
    return _book_key(book, [c.body for c in book_chapters(book)])


def gutenberg_key(element: tuple[str, bytes], config: ChapterConfig, keep_unchaptered: bool = False) -> list[BookKey]:
    """[BookKey] of one PG file that `read_gutenberg_book` accepts, on its whole cleaned text
    (title page and contents included), so a copy whose chapters are found and one whose
    are not compare on the same text; [] for a file it rejects."""
    input_id, raw = element
    if isinstance(raw, Drop):  # a compressed file that broke: the first read rejected it
        return []
    cleaned = clean_book(raw)
    if isinstance(cleaned, Drop):
        return []
    found = book_from_text(input_id, *cleaned, config, keep_unchaptered=keep_unchaptered)
    return [] if isinstance(found, Drop) else [_book_key(found, [cleaned[0]])]


def collapse_duplicate(book: dict, verdicts: dict) -> list[dict] | Drop:
    """The book, unless it is a copy of a book kept in its place (`dedup.duplicate_books`);
    a kept book records the copies it stands for in its info."""
    verdict = verdicts.get(book["input_id"])
    if verdict is None:
        return [book]
    if "kept" in verdict:
        return Drop(
            "duplicate_book",
            f"a copy of {verdict['kept']} (book {verdict['kept_book_id']}, "
            f"similarity {verdict['similarity']}), which is kept",
        )
    return [{**book, "info": {**book["info"], "duplicates": verdict["duplicates"]}}]


def duplicate_to_book(row: dict) -> dict:
    """The `books` row of a copy dropped by the duplicates stage."""
    return reject_to_book(row, AO3 if row["input_id"].startswith("ao3:") else PG)


def reject_to_book(row: dict, source: str) -> dict:
    """A `books` table row for a rejects row of a book-reading stage (status "rejected")."""
    key = row["input_id"].removeprefix("ao3:")
    return BookRow(
        book_id_for(source, key),
        source,
        row["input_id"],
        "rejected",
        row["stage"],
        reason=row["reason"],
        detail=detail_message(row["detail"])[:2000],
    ).to_row()


def book_stat(book: dict, config: ExampleConfig | None = None) -> BookStat:
    """Table 3 facts of one accepted book (chapters and whitespace words) and, for the
    subsets of `config`, the boundaries it would give with no per-book cap."""
    chapters = book_chapters(book)
    words = sum(len(c.body.split()) for c in chapters)
    uncapped: tuple = ()
    if config is not None and config.subsets:
        text = BookText(chapters, config.tokenizer)
        bounds = boundaries(text)  # found once for every kind
        uncapped = tuple((kind, uncapped_count(text, kind, config, bounds)) for kind in config.subsets)
    return BookStat(book["source"], book["book_id"], len(book["chapters"]), words, book.get("input_id", ""), uncapped)


def boundary_stat(row: dict) -> BoundaryStat:
    """Table 4 facts of one example row (rows of one boundary give the same facts)."""
    return BoundaryStat(row["source"], row["boundary"], row["book_id"], row["boundary_id"])


def keyed_boundary_stat(row: dict) -> tuple[str, BoundaryStat]:
    """(boundary id, `boundary_stat`) of one example row."""
    return row["boundary_id"], boundary_stat(row)


def accepted(element, step, *args) -> list:
    """The outputs of `step(element, *args)`, none when it is a Drop (a second read whose
    first read's stages already counted and rejected it, a compressed file that broke included)."""
    if isinstance(element, tuple) and len(element) == 2 and isinstance(element[1], Drop):
        return []
    result = step(element, *args)
    return [] if isinstance(result, Drop) else list(result)
