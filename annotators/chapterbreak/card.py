"""ChapterBreak summaries: the paper's Tables 3-4, the released JSON layout, and CARD.md text.

- Table 3 (per source): works, chapters per work (over works with chapters) and words per
  work (mean/min/max) over the accepted books;
- Table 4 (per source and boundary kind): works with examples and examples (boundaries;
  one boundary has one row per prefix length in the `examples` table);
- released layout (reference/PEERS.md 2.2): `{"pg19": {work_id: [{"ctx", "pos", "negs"}]},
  "ao3": {...}}`, one file per prefix length; work_id is our stable book_id.
"""

from __future__ import annotations

import json
from collections import Counter

import orjson

from annotators.chapterbreak.reasons import JOB_REASONS
from annotators.chapterbreak.records import BookStat, BoundaryStat
from annotators.chapterbreak.subsets import per_book_cap
from annotators.core.figures import Figure
from annotators.core.reasons import reasons_markdown

SOURCES = ("pg19", "ao3")
# ChapterBreak Table 4: (works, examples) per source and boundary kind.
PAPER_TABLE4 = {
    ("ao3", "cause"): (965, 8133),
    ("ao3", "dialogue"): (979, 8724),
    ("ao3", "chapter"): (1202, 7355),
    ("pg19", "cause"): (45, 506),
    ("pg19", "dialogue"): (46, 3165),
    ("pg19", "chapter"): (17, 241),
}


def released_name(boundary: str, length: int) -> str:
    kind = "" if boundary == "chapter" else f"{boundary}_"
    return f"chapterbreak_{kind}ctx_{length}.json"


def released_json(rows: list[dict]) -> str:
    """The released layout for rows of one (boundary kind, prefix length), sorted by position."""
    writer = ReleasedWriter()
    ordered = sorted(rows, key=lambda r: (r["source"], r["book_id"], r["cut_offset"]))
    return writer.begin() + "".join(writer.add(r) or "" for r in ordered) + writer.end()


class ReleasedWriter:
    """The released JSON of one (boundary kind, prefix length) written piece by piece from
    rows in (source, book_id, cut_offset) order (`add` returns None for another file's row):
    `{"ao3": {work_id: [{"ctx", "pos", "negs"}, ...]}, "pg19": {...}}`, every source present."""

    def __init__(self, boundary: str | None = None, length: int | None = None):
        self._boundary, self._length = boundary, length
        self._source = self._book = None
        self._sources: list[str] = []

    def begin(self) -> str:
        return "{"

    def _open_source(self, source: str) -> str:
        text = ("}, " if self._sources else "") + json.dumps(source) + ": {"
        self._sources.append(source)
        self._source, self._book = source, None
        return text

    def add(self, row: dict) -> str | None:
        if self._boundary is not None and (row["boundary"], row["prefix_length"]) != (self._boundary, self._length):
            return None
        text = ""
        if row["source"] != self._source:
            text += ("]" if self._book is not None else "") + self._open_source(row["source"])
        if row["book_id"] != self._book:
            text += ("], " if self._book is not None else "") + json.dumps(row["book_id"]) + ": ["
            self._book = row["book_id"]
        else:
            text += ", "
        return text + _item_json(row["prefix"], row["gold"], row["negatives"])

    def end(self) -> str:
        text = "]" if self._book is not None else ""
        self._book = None
        for source in SOURCES:
            if source not in self._sources:
                text += self._open_source(source)
        return text + ("}" if self._sources else "") + "}"


def _string_json(text: str) -> str:
    """`json.dumps(text, ensure_ascii=False)`, byte for byte (tests/chapterbreak/test_chapterbreak_released.py),
    about seven times faster on book-length text: the released files of a PG-19-size build
    hold gigabytes of prefixes, and their writing is the job's serial tail. orjson refuses
    a lone surrogate, which only a text decoded with `surrogateescape` can hold: json's
    escape then."""
    try:
        return orjson.dumps(text).decode("utf-8")
    except orjson.JSONEncodeError:
        return json.dumps(text, ensure_ascii=False)


def _item_json(ctx: str, pos: str, negs) -> str:
    """The released item `{"ctx", "pos", "negs"}` as `json.dumps(..., ensure_ascii=False)`
    writes it (its ", " and ": " separators)."""
    return f'{{"ctx": {_string_json(ctx)}, "pos": {_string_json(pos)}, "negs": [{", ".join(map(_string_json, negs))}]}}'


def _spread(values: list[int]) -> dict:
    if not values:
        return {"mean": None, "min": None, "max": None}
    return {"mean": round(sum(values) / len(values), 1), "min": min(values), "max": max(values)}


def subset_caps(books: list[BookStat], boundaries: list[BoundaryStat], per_book: str | None) -> dict:
    """Per source and subset kind: the boundaries each accepted book gives with no cap
    (`BookStat.subsets_uncapped`) beside the cap (`--subset-per-book`) and those drawn."""
    drawn = Counter((b.source, b.boundary, b.book_id) for b in set(boundaries))
    out: dict = {}
    for source in sorted({b.source for b in books if b.subsets_uncapped}):
        mine = sorted(
            (b for b in books if b.source == source and b.subsets_uncapped), key=lambda b: (b.name, b.book_id)
        )
        for kind, _ in mine[0].subsets_uncapped:
            rows = [
                {
                    "book_id": b.book_id,
                    "name": b.name,
                    "uncapped": dict(b.subsets_uncapped)[kind],
                    "drawn": drawn[(source, kind, b.book_id)],
                }
                for b in mine
            ]
            uncapped = [r["uncapped"] for r in rows]
            cap = per_book_cap(per_book, source, kind) if per_book is not None else 0
            mean = sum(uncapped) / len(rows)
            out.setdefault(source, {})[kind] = {
                "books": len(rows),
                "cap": cap or None,
                "uncapped": sum(uncapped),
                "uncapped_per_book": round(mean, 1),
                "uncapped_min": min(uncapped),
                "uncapped_max": max(uncapped),
                "drawn": sum(r["drawn"] for r in rows),
                "drawn_per_book": round(sum(r["drawn"] for r in rows) / len(rows), 1),
                "uncapped_per_cap": round(mean / cap, 1) if cap else None,
                "per_book": rows,
            }
    return out


def dataset_stats(books: list[BookStat], boundaries: list[BoundaryStat], per_book: str | None = None) -> dict:
    """Tables 3 (per source) and 4 (per source and boundary kind) from per-book and per-boundary
    facts, and (when the books carry them) the subsets' uncapped counts (`subset_caps`)."""
    table3 = {}
    for source in sorted({b.source for b in books} | set(SOURCES)):
        mine = [b for b in books if b.source == source]
        chaptered = [b for b in mine if b.n_chapters]
        table3[source] = {
            "works": len(mine),
            "works_without_chapters": len(mine) - len(chaptered),
            "chapters_per_work": _spread([b.n_chapters for b in chaptered]),
            "words_per_work": _spread([b.n_words for b in mine]),
        }
    table4: dict = {}
    for bound in sorted(set(boundaries)):
        cell = table4.setdefault(bound.source, {}).setdefault(bound.boundary, {"works": set(), "examples": 0})
        cell["works"].add(bound.book_id)
        cell["examples"] += 1
    table4 = {
        s: {b: {"works": len(c["works"]), "examples": c["examples"]} for b, c in sorted(d.items())}
        for s, d in sorted(table4.items())
    }
    out = {"table3_works": table3, "table4_examples": table4}
    if any(b.subsets_uncapped for b in books):
        out["subsets_uncapped"] = subset_caps(books, boundaries, per_book)
    return out


DECISIONS = """
## Decisions (where the paper is silent)

- **Tokenizer**: `{tokenizer}` counts every length (`prefix_tokens`, `gold_tokens`, the
  {suffix}-token suffixes). The offline default `words_punct_v1` is a regex (word runs with
  inner apostrophes, and each other non-space character); `--tokenizer hf:PATH` counts in the
  evaluated model's own tokenizer, a Hugging Face `tokenizer.json` read offline (named
  `hf:<model type>:<sha256 prefix of the tokenizer>`; `gpt2:DIR` builds GPT-2's from its
  `vocab.json` + `merges.txt`), the models' unit (the paper: 1.30 subwords per word). Prefixes
  are cut from the left and suffixes from the right at token boundaries, so every text is a
  verbatim slice of the book; with a subword tokenizer every cut text is encoded on its own
  and holds at most the asked tokens, which `prefix_tokens` and `gold_tokens` count. Every gold
  and negative holds exactly {suffix} tokens, or all of its chapter (or of the book) when that
  is shorter: where a subword tokenizer's count jumps past {suffix} at one character (a blank
  line that is two tokens before a word but one at a text's end; a character of several byte
  tokens), no verbatim cut holds {suffix}, so that boundary is skipped and that chapter or
  position is never drawn as a negative (a suffix one token short would be favoured by a
  summed log-likelihood). The default tokenizer always cuts exactly.
- **Rows**: one `examples` row per (boundary, prefix length); `prefix_length` is the nominal
  length, `prefix_tokens` the real one (shorter when the book is shorter). `boundary_id`
  groups the rows of one boundary. Released files: `released/chapterbreak_ctx_N.json`
  (subsets: `chapterbreak_cause_ctx_N.json`, `chapterbreak_dialogue_ctx_N.json`).
- **Prefix** = chapters 0..k only (heading + body, joined by a blank line); front matter
  (title page, contents, preface) is left out because a contents list names the gold's title.
- **Gold / negatives** = the first {suffix} tokens of the chapter's heading + body, heading
  mode `{heading_mode}` (`--headings`): `normalize` (default) gives the gold and every negative
  one heading line, the gold's chapter phrase as printed up to its numeral ("CHAPTER III.",
  "Chapter 4"), with no titles, so neither case, number nor a "--continued" title tells the
  gold apart (a test shows rules reading only the heading line score exactly chance);
  `number` is section 2 as published: only the negatives' numeral is replaced by the gold's
  ("Chapter VII" -> "Chapter III"), leaving case and titles; `keep` prints headings as they
  are; `strip` removes them. Negatives are drawn with `rng_for(seed, book_id, "chapter",
  gold_index)` from chapters after the gold; a candidate identical to the gold is never used.
  Mode: `{negatives_from}`.
- **Cause and dialogue subsets** (Appendix A; subsets `{subsets}`, per-book cap
  `{per_book}`): from every accepted book, chapters or not (a book whose chapter headings
  are not found is kept as one text for them: `heading_style` `none`, 0 chapters). A
  boundary is a paragraph start or a sentence start ("." "!" "?" + closing quotes +
  whitespace before a capital or an opening quote; "Mr.", other abbreviations and initials
  end no sentence). cause: the suffix's first sentence contains "because", "due to" or
  "owing to" (words, any case); dialogue: the suffix opens with a quotation mark. Negatives
  are {n_neg} later boundaries of the same kind in the same book starting after the gold's
  end. `paper` caps each book at Table 4's examples per work (pg19: cause 11, dialogue 69;
  ao3: cause 8, dialogue 9), drawn with `rng_for(seed, book_id, kind, "pick")`. The cap,
  not the rule, gives Table 4's rates: the rule finds several times more per book (the
  uncapped counts above, which `--subset-per-book 0` would all draw).
- **Duplicate books** (threshold `{dup_threshold}`): copies of one book (exact, re-wrapped,
  another edition) collapse to one before any example is drawn: compared on the whole
  cleaned text, case-folded without whitespace or emphasis marks, by SHA-256 (exact) and by a
  256-bin one-permutation MinHash of word 8-grams (near: estimated Jaccard >= threshold). The
  copy kept has the most chapters, then pg19 before ao3, then the smallest input id; a
  dropped copy is a `duplicate_book` row of the books table naming the copy kept, whose own
  row lists its duplicates.
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


PER_BOOK_ROWS = 40  # the card lists every book up to this many; stats.json always does


def cap_lines(caps: dict) -> list[str]:
    """The subsets' uncapped counts per book beside the cap and what was drawn."""
    if not caps:
        return []
    lines = [
        "",
        "### Cause and dialogue: the per-book cap makes Table 4's rates",
        "",
        "The rule (Appendix A) finds several times more cause and dialogue boundaries than Table 4 reports per "
        "work; the examples match Table 4 only because each book is capped at Table 4's average "
        "(`--subset-per-book`). Uncapped counts are the boundaries a book would give with no cap.",
        "",
        "| source | boundary | books | uncapped per book mean (min-max) | cap | drawn per book | uncapped / cap |",
        "|---|---|---:|---|---:|---:|---:|",
    ]
    for source, kinds in caps.items():
        for kind, c in kinds.items():
            ratio = f"{c['uncapped_per_cap']}x" if c["uncapped_per_cap"] is not None else "-"
            lines.append(
                f"| {source} | {kind} | {c['books']} | {c['uncapped_per_book']} ({c['uncapped_min']}-"
                f"{c['uncapped_max']}) | {c['cap'] or 'none'} | {c['drawn_per_book']} | {ratio} |"
            )
    for source, kinds in caps.items():
        books = {r["book_id"]: r["name"] for c in kinds.values() for r in c["per_book"]}
        if len(books) > PER_BOOK_ROWS:
            lines += ["", f"{source}: {len(books)} books; stats.json (`chapterbreak.subsets_uncapped`) lists each."]
            continue
        names = list(kinds)
        lines += [
            "",
            f"| {source} book | " + " | ".join(f"{k} uncapped | {k} drawn" for k in names) + " |",
            "|---|" + "---:|---:|" * len(names),
        ]
        counts = {k: {r["book_id"]: r for r in kinds[k]["per_book"]} for k in names}
        for book_id, name in books.items():
            cells = " | ".join(f"{counts[k][book_id]['uncapped']} | {counts[k][book_id]['drawn']}" for k in names)
            lines.append(f"| {name or book_id} | {cells} |")
    return lines


def card(stats: dict, base_card) -> str:
    """CARD.md: the shared accounting card, the Tables 3-4 figures, every decision, the reject reasons."""
    cfg = stats.get("config", {})
    ex = cfg.get("examples", {})
    text = base_card(stats)
    cb = stats.get("chapterbreak", {})
    lines = [
        "",
        "## ChapterBreak statistics (paper Tables 3-4)",
        "",
        "| source | works | chapters/work mean (min-max) | words/work mean (min-max) |",
        "|---|---:|---|---|",
    ]
    for source, t in cb.get("table3_works", {}).items():
        c, w = t["chapters_per_work"], t["words_per_work"]
        spread = [f"{x['mean']} ({x['min']}-{x['max']})" if x["mean"] is not None else "-" for x in (c, w)]
        lines.append(f"| {source} | {t['works']} | {spread[0]} | {spread[1]} |")
    lines += [
        "",
        "| source | boundary | works | examples (boundaries) | per work | paper (works / examples / per work) |",
        "|---|---|---:|---:|---:|---|",
    ]
    for source, kinds in cb.get("table4_examples", {}).items():
        for k, v in kinds.items():
            paper = PAPER_TABLE4.get((source, k))
            ref = f"{paper[0]} / {paper[1]} / {paper[1] / paper[0]:.1f}" if paper else ""
            lines.append(
                f"| {source} | {k} | {v['works']} | {v['examples']} | {v['examples'] / v['works']:.1f} | {ref} |"
                if v["works"]
                else f"| {source} | {k} | 0 | 0 | | {ref} |"
            )
    without = cb.get("table3_works", {}).get("pg19", {}).get("works_without_chapters")
    if without:
        lines += [
            "",
            f"{without} accepted PG book(s) have no chapter headings: they give cause and dialogue "
            "examples only (Appendix A draws these subsets from every book).",
        ]
    lines += cap_lines(cb.get("subsets_uncapped") or {})
    decisions = DECISIONS.format(
        tokenizer=cfg.get("tokenizer") or ex.get("tokenizer"),
        suffix=ex.get("suffix_tokens"),
        heading_mode=ex.get("headings"),
        negatives_from=ex.get("negatives_from"),
        subsets=",".join(ex.get("subsets") or []) or "none",
        per_book=ex.get("subset_per_book"),
        n_neg=ex.get("n_negatives"),
        dup_threshold=cfg.get("duplicates", {}).get("threshold"),
        styles=", ".join(cfg.get("chapters", {}).get("heading_styles", [])),
    )
    return text + "\n".join(lines) + "\n" + decisions + "\n" + reasons_markdown(JOB_REASONS)


# Chapters per accepted book (per source) and the examples' prefix lengths (per boundary kind).
FIGURES = (
    Figure(
        "chapters_per_book",
        "Chapters per accepted book",
        "chapters",
        ("books",),
        "n_chapters",
        panel="source",
        where=(("status", "ok"),),
    ),
    Figure(
        "prefix_tokens",
        "Prefix length of the examples",
        "prefix tokens (the job's tokenizer)",
        ("examples",),
        "prefix_tokens",
        line="boundary",
        panel="source",
    ),
)
