"""ChapterBreak summaries: the paper's Tables 3-4, the released JSON layout, and CARD.md text.

- Table 3 (per source): works, chapters per work and words per work (mean/min/max) over
  the accepted books;
- Table 4 (per source and boundary kind): works with examples and examples (boundaries;
  one boundary has one row per prefix length in the `examples` table);
- released layout (reference/PEERS.md 2.2): `{"pg19": {work_id: [{"ctx", "pos", "negs"}]},
  "ao3": {...}}`, one file per prefix length; work_id is our stable book_id.
"""
from __future__ import annotations

import json

from annotators.chapterbreak.reasons import JOB_REASONS
from annotators.chapterbreak.records import BookStat, BoundaryStat
from annotators.core.reasons import reasons_markdown

SOURCES = ("pg19", "ao3")


def released_name(boundary: str, length: int) -> str:
    kind = "" if boundary == "chapter" else f"{boundary}_"
    return f"chapterbreak_{kind}ctx_{length}.json"


def released_json(rows: list[dict]) -> str:
    """The released layout for rows of one (boundary kind, prefix length), sorted by position."""
    out: dict[str, dict[str, list]] = {s: {} for s in SOURCES}
    for row in sorted(rows, key=lambda r: (r["source"], r["book_id"], r["cut_offset"])):
        out.setdefault(row["source"], {}).setdefault(row["book_id"], []).append(
            {"ctx": row["prefix"], "pos": row["gold"], "negs": list(row["negatives"])})
    return json.dumps(out, ensure_ascii=False)


def _spread(values: list[int]) -> dict:
    if not values:
        return {"mean": None, "min": None, "max": None}
    return {"mean": round(sum(values) / len(values), 1), "min": min(values), "max": max(values)}


def dataset_stats(books: list[BookStat], boundaries: list[BoundaryStat]) -> dict:
    """Tables 3 (per source) and 4 (per source and boundary kind) from per-book and per-boundary facts."""
    table3 = {}
    for source in sorted({b.source for b in books} | set(SOURCES)):
        mine = [b for b in books if b.source == source]
        table3[source] = {"works": len(mine), "chapters_per_work": _spread([b.n_chapters for b in mine]),
                          "words_per_work": _spread([b.n_words for b in mine])}
    table4: dict = {}
    for bound in sorted(set(boundaries)):
        cell = table4.setdefault(bound.source, {}).setdefault(bound.boundary, {"works": set(), "examples": 0})
        cell["works"].add(bound.book_id)
        cell["examples"] += 1
    table4 = {s: {b: {"works": len(c["works"]), "examples": c["examples"]} for b, c in sorted(d.items())}
              for s, d in sorted(table4.items())}
    return {"table3_works": table3, "table4_examples": table4}


DECISIONS = """
## Decisions (where the paper is silent)

- **Tokenizer**: `{tokenizer}` (a regex: word runs with inner apostrophes, and each other
  non-space character); prefixes are cut from the left and suffixes from the right at token
  boundaries, so every text is a verbatim slice of the book.
- **Rows**: one `examples` row per (boundary, prefix length); `prefix_length` is the nominal
  length, `prefix_tokens` the real one (shorter when the book is shorter). `boundary_id`
  groups the rows of one boundary. Released files: `released/chapterbreak_ctx_N.json`
  (subsets: `chapterbreak_cause_ctx_N.json`, `chapterbreak_dialogue_ctx_N.json`).
- **Prefix** = chapters 0..k only (heading + body, joined by a blank line); front matter
  (title page, contents, preface) is left out because a contents list names the gold's title.
- **Gold / negatives** = the first {suffix} tokens of the chapter's heading + body; the
  negatives' chapter numeral is replaced by the gold's literal numeral (style kept:
  "Chapter VII" -> "Chapter III", "CHAPTER 7" -> "CHAPTER 3"); mode `{heading_mode}`.
  Negatives are drawn with `rng_for(seed, book_id, "chapter", gold_index)` from chapters after
  the gold; a candidate identical to the gold is never used. Mode: `{negatives_from}`.
- **Chapters (PG)**: a paragraph-initial line "chapter" + numeral (arabic/roman/words) with an
  optional capitalised title on the same line or the next paragraph; captions
  "[Illustration: ... Chapter I.]" count (heading = "Chapter I." onwards, caption text
  dropped); contents lists are dropped: single-spaced blocks of 2+ heading lines, runs of 3+
  headings with < 40 words between that carry no prose or whose numbers are printed again
  right after the run (short chapters whose numbering continues are kept), and numbering
  segments averaging < 150 words a chapter; a heading far out of sequence between two
  consecutive numbers is a stray line, not a chapter; numbering may restart at 1 (volumes);
  prose before a first "Chapter 2" is chapter 1 whose heading was stripped; trailing
  VOLUME/BOOK/PART lines (with their own short title line) are cut from chapter ends.
  Heading styles tried: {styles}.
- **AO3**: chapters from the work's markup (JSON lines: a `chapters` list, or the long-fic
  dump's `text` split at its "\\t<n>. <title>" heading lines, whose count must equal
  `num_chaps`; the dump is the paper's already-filtered set, so its works need no rating or
  language field); tag fields may be strings or lists; blank lines are skipped; headings
  normalised to "Chapter N[: title]", where N is the chapter's position and numbering in
  the source title is dropped ("9. Chapter 12" -> "Chapter 9", "4. The Storm" -> "Chapter 4:
  The Storm"; a title that is only a number, "Part 5", is dropped); in a negative, the
  chapter number and any arabic number in its heading equal to it are rewritten to the
  gold's ("Chapter 5: The 5th Day" -> "Chapter 2: The 2th Day"), so no heading tells the
  position; words = the work's stated count when present ("12,345" accepted), else
  whitespace words of the cleaned text.
- **book_id** = SHA-256 of (source, path relative to the input glob) for PG, of the work id
  for AO3; example ids hash the boundary, seed and prefix length.
"""


def card(stats: dict, base_card) -> str:
    """CARD.md: the shared accounting card, the Tables 3-4 figures, every decision, the reject reasons."""
    cfg = stats.get("config", {})
    ex = cfg.get("examples", {})
    text = base_card(stats)
    cb = stats.get("chapterbreak", {})
    lines = ["", "## ChapterBreak statistics (paper Tables 3-4)", "",
             "| source | works | chapters/work mean (min-max) | words/work mean (min-max) |",
             "|---|---:|---|---|"]
    for source, t in cb.get("table3_works", {}).items():
        c, w = t["chapters_per_work"], t["words_per_work"]
        lines.append(f"| {source} | {t['works']} | {c['mean']} ({c['min']}-{c['max']}) "
                     f"| {w['mean']} ({w['min']}-{w['max']}) |")
    lines += ["", "| source | boundary | works | examples (boundaries) |", "|---|---|---:|---:|"]
    for source, kinds in cb.get("table4_examples", {}).items():
        lines += [f"| {source} | {k} | {v['works']} | {v['examples']} |" for k, v in kinds.items()]
    decisions = DECISIONS.format(
        tokenizer=ex.get("tokenizer"), suffix=ex.get("suffix_tokens"),
        heading_mode="rewrite_to_gold" if ex.get("rewrite_headings") else "none",
        negatives_from=ex.get("negatives_from"),
        styles=", ".join(cfg.get("chapters", {}).get("heading_styles", [])))
    return text + "\n".join(lines) + "\n" + decisions + "\n" + reasons_markdown(JOB_REASONS)
