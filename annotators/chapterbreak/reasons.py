"""Reject reasons the chapterbreak job gives (shared ones: annotators.core.reasons.SHARED).

`REASONS` holds the codes only ChapterBreak uses, one line of meaning each; `JOB_REASONS`
is every code (shared or own) the job can write to `rejects/` and the `books` table, and
the card lists them (`reasons_markdown(JOB_REASONS)`).
"""

REASONS: dict[str, str] = {
    # Project Gutenberg books (gutenberg.py, chapters.py)
    "no_text": "nothing is left of the PG file once its licence header and footer are stripped",
    "no_chapter_headings": "no chapter heading was found (a PG book, or an AO3 long-fic dump's `text`)",
    "fewer_than_two_chapters": "the PG book has fewer than 2 chapters (`min_chapters`): no chapter boundary",
    "numbering_broken": "the chapter numbering skips, with --strict_numbering or a bare-numeral heading style",
    # AO3 pages and JSON lines (ao3_html.py, ao3.py)
    "not_an_ao3_work": "the HTML page has no div#chapters: not an AO3 work page or download",
    "no_work_text": "the AO3 page holds no chapter text (a series/listing page, or an empty div#chapters)",
    "no_chapter_list": "the AO3 JSON work has neither a `chapters` list nor a long-fic dump `text`",
    "chapter_count_mismatch": "the long-fic dump's `num_chaps` differs from the chapter headings in its `text`",
    # AO3 works (ao3.py: assembly and the Appendix A filters)
    "missing_chapters": "chapters of the AO3 work (up to the posted count) are not in the input",
    "empty_chapter": "a chapter of the AO3 work has no text",
    "not_english": "the AO3 work's language is not English (Appendix A)",
    "language_unknown": "the AO3 work states no language (Appendix A keeps English only)",
    "not_general_audiences": "the AO3 work is not rated General Audiences (Appendix A)",
    "rating_unknown": "the AO3 work states no rating (Appendix A keeps General Audiences only)",
    "too_few_words": "the AO3 work has fewer than 10K words (Appendix A)",
    "ten_or_fewer_chapters": "the AO3 work has 10 or fewer chapters (Appendix A: more than 10)",
    # duplicate books (dedup.py)
    "duplicate_book": "the book is a copy (exact, or another edition) of a book kept in its place; the detail names it",
    # examples (examples.py, subsets.py)
    "no_usable_boundary": (
        "the book has no chapter boundary with 5 later chapters and no cause/dialogue boundary with 5 later ones"
    ),
}

JOB_REASONS: tuple[str, ...] = (
    "empty_file",
    "binary_file",
    "utf16",
    "undecodable",
    "malformed_json",
    "not_an_object",
    "bad_field_type",
    "truncated_file",
    "line_too_long",
    "duplicate_id",
    "internal_error",
    *REASONS,
)
