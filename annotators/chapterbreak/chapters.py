"""Chapter detection in PG-19-style plain-text books (ChapterBreak paper section 2).

The paper's rule is "lines beginning with the string 'chapter'". storybench makes that rule
safe on real books:
- a heading is "chapter" (any case) + a numeral (arabic, roman, words) + an optional title
  on the same or the next line, starting its own paragraph; prose lines that merely start
  with "Chapter 3 of ..." fail the title test;
- a heading inside an illustration caption ("[Illustration: ... Chapter I.]") starts its
  chapter at the caption;
- tables of contents are dropped: single-spaced blocks (a heading whose paragraph, or the
  paragraph after it, holds 2+ chapter-heading lines); runs of 3+ headings with almost no
  text between them whose entries carry no prose or whose numbers are printed again right
  after the run (a run of short chapters, each with a prose paragraph and the numbering
  continuing, is kept); and whole numbering segments averaging under a few lines;
- a heading far out of sequence between two consecutive numbers ("II", "XXX", "III") is a
  stray line in prose, not a chapter;
- a caption heading is the chapter phrase onwards ("CHAPTER V."), without the picture's text;
- chapter bodies end where their prose ends: trailing VOLUME/BOOK/PART lines, with a short
  title line of their own ("PART TWO" / "THE DEPARTURE"), are cut;
- numbering may restart at 1 (volumes, e.g. Emma); when the first heading is number 2 and
  prose precedes it, that prose is the first chapter whose heading was stripped (PG-19 and
  older scrapes cut the heading together with the licence header);
- optional: bare-numeral headings ("II", "IV. The Mail"), used only when no "chapter"
  headings exist, and only when the numbering is unbroken, so they never add false chapters.
"""

from __future__ import annotations

import dataclasses
import json

from annotators.chapterbreak.headings import (
    HeadingCandidate,
    chapter_candidate,
    illustration_candidate,
    is_heading_like,
    is_structural,
    numeral_candidate,
    title_like,
)
from annotators.core.outcome import Drop


def _field(default, help_text: str, **meta):
    """A Config field with its flag's help (pipelines.engine.add_config_flags) and checks
    (`min`, `item_choices`)."""
    return dataclasses.field(default=default, metadata={"help": help_text, **meta})


@dataclasses.dataclass(frozen=True)
class ChapterConfig:
    """Settings of chapter detection; defaults follow ChapterBreak section 2 (see module doc)."""

    heading_styles: tuple[str, ...] = _field(
        ("chapter",),
        "heading styles tried in order: chapter[,numeral] (paper §2: lines beginning with 'chapter')",
        item_choices=("chapter", "numeral"),
    )
    min_chapters: int = _field(2, "fewer chapters than this: rejected (one chapter has no boundary)", min=1)
    toc_gap_words: int = _field(40, "fewer words than this between headings = table-of-contents run", min=0)
    toc_min_run: int = _field(3, "a contents run has at least this many entries", min=1)
    toc_segment_words: int = _field(
        150, "a numbering segment averaging fewer words a chapter is a contents list", min=0
    )
    lead_min_words: int = _field(200, "prose before a first 'Chapter 2' that counts as chapter 1", min=0)
    strict_numbering: bool = _field(False, "reject 'chapter' books whose numbering skips")


@dataclasses.dataclass(frozen=True)
class DetectedChapter:
    """One chapter: heading line(s) as printed, parsed number, and the body after them."""

    index: int
    heading: str
    title: str
    number: int | None
    numeral: str
    body: str
    line: int  # 0-based line of the heading in the cleaned book text


def detect_chapters(text: str, config: ChapterConfig = ChapterConfig()) -> tuple[list[DetectedChapter], dict] | Drop:
    """(chapters in reading order, diagnostics) or
    Drop(no_chapter_headings | fewer_than_two_chapters | numbering_broken)."""
    lines = text.split("\n")
    words = _word_prefix(lines)
    tried = {}
    for style in config.heading_styles:
        cands = _candidates(lines, style)
        kept, info = _validate(cands, lines, words, config)
        tried[style] = info
        if len(kept) >= config.min_chapters:
            if info["numbering_breaks"] and (config.strict_numbering or style != "chapter"):
                return Drop("numbering_broken", f"{style} headings: {json.dumps(info, sort_keys=True)}")
            chapters = _build(kept, lines, words, config)
            if len(chapters) < config.min_chapters:
                continue
            return chapters, {"heading_style": style, **info}
    found = max((t["kept"] for t in tried.values()), default=0)
    reason = "no_chapter_headings" if found == 0 else "fewer_than_two_chapters"
    return Drop(reason, f"{found} chapter heading(s) found; tried {json.dumps(tried, sort_keys=True)}")


def _word_prefix(lines: list[str]) -> list[int]:
    out = [0]
    for line in lines:
        out.append(out[-1] + len(line.split()))
    return out


def _candidates(lines: list[str], style: str) -> list[HeadingCandidate]:
    out: list[HeadingCandidate] = []
    i = 0
    while i < len(lines):
        if style == "chapter":
            cand = illustration_candidate(lines, i) or chapter_candidate(lines, i)
        else:
            cand = numeral_candidate(lines, i)
        if cand is not None:
            out.append(cand)
            i = max(i + 1, cand.body_start if cand.kind == "illustration" else i + 1)
        else:
            i += 1
    return out


def _gap(a: HeadingCandidate, b: HeadingCandidate, words: list[int]) -> int:
    return words[b.line] - words[min(a.body_start, b.line)]


def _merge_duplicates(cands, words, config):
    """Adjacent headings with one number and no prose between (caption + text heading) merge."""
    out: list[HeadingCandidate] = []
    for cand in cands:
        prev = out[-1] if out else None
        if prev and prev.number == cand.number and _gap(prev, cand, words) < config.toc_gap_words:
            heading = cand.heading if prev.kind == "illustration" else prev.heading
            out[-1] = dataclasses.replace(
                prev, heading=heading, title=cand.title or prev.title, numeral=cand.numeral, body_start=cand.body_start
            )
        else:
            out.append(cand)
    return out


def _paragraph(lines: list[str], start: int) -> list[str]:
    """The non-blank lines from `start` (after skipping blanks) up to the next blank line."""
    k = start
    while k < len(lines) and not lines[k].strip():
        k += 1
    out = []
    while k < len(lines) and lines[k].strip():
        out.append(lines[k])
        k += 1
    return out


def _in_contents_block(cand: HeadingCandidate, lines: list[str]) -> bool:
    """A single-spaced contents list: the heading's own paragraph, or the paragraph right
    after it, holds two or more chapter-heading-shaped lines ("CHAPTER I. The Mail" /
    "CHAPTER II. The Night" on consecutive lines). A real heading is followed by its title
    and then prose, never by more headings."""
    own = _paragraph(lines, cand.line)
    if sum(1 for line in own if is_heading_like(line)) >= 2:
        return True
    after = _paragraph(lines, cand.body_start)
    listed = sum(1 for line in after if is_heading_like(line))
    return listed >= 2 and 2 * listed >= len(after)


def _has_prose(lines: list[str], start: int, end: int) -> bool:
    """Lines [start, end) hold a prose line: not blank, not heading- or title-shaped, 5+ words."""
    for line in lines[start:end]:
        text = line.strip()
        if (
            len(text.split()) >= 5
            and any(ch.isalpha() for ch in text)
            and not is_heading_like(text)
            and not title_like(text)
        ):
            return True
    return False


def _drop_contents_runs(cands, lines, words, config):
    """Drop runs of >= toc_min_run headings with < toc_gap_words between them (contents lists).

    A close run is a contents list only when its entries carry no prose (titles, page
    numbers) or its numbers are printed again right after it (the numbering goes back, as
    when the real headings follow the list). A run of genuinely short chapters, each a
    heading and a prose paragraph whose numbering simply continues, is kept.
    """
    keep = [True] * len(cands)
    i = 0
    while i < len(cands):
        j = i
        while j + 1 < len(cands) and _gap(cands[j], cands[j + 1], words) < config.toc_gap_words:
            j += 1
        if j - i + 1 >= config.toc_min_run:
            last_continues = cands[j].number == (cands[j - 1].number or 0) + 1
            stop = j + (1 if last_continues else 0)  # entries are cands[i:stop]
            after = cands[stop] if stop < len(cands) else None
            repeated = after is not None and (after.number or 0) <= (cands[stop - 1].number or 0)
            prose = any(
                _has_prose(lines, cands[k].body_start, cands[k + 1].line) for k in range(i, min(stop, len(cands) - 1))
            )
            if repeated or not prose:
                for k in range(i, stop):
                    keep[k] = False
        i = j + 1
    return [c for c, k in zip(cands, keep) if k], keep.count(False)


def _drop_strays(cands):
    """Drop a heading whose number jumps out of sequence while the next heading returns to it
    ("CHAPTER II", "CHAPTER XXX.", "CHAPTER III"): a stray line in prose, not a chapter.
    A jump forward must skip two or more numbers; a jump back must not be to 1 (a restart)."""
    out = []
    for n, cand in enumerate(cands):
        if 0 < n < len(cands) - 1 and None not in (cands[n - 1].number, cand.number, cands[n + 1].number):
            prev, nxt = cands[n - 1].number, cands[n + 1].number
            if nxt == prev + 1 and (cand.number >= prev + 3 or 1 < cand.number < prev):
                continue
        out.append(cand)
    return out, len(cands) - len(out)


def _segments(cands):
    """Split at every heading whose number is not the previous number + 1."""
    segs: list[list[HeadingCandidate]] = []
    for cand in cands:
        if segs and cand.number == (segs[-1][-1].number or 0) + 1:
            segs[-1].append(cand)
        else:
            segs.append([cand])
    return segs


def _validate(cands, lines, words, config):
    blocks = [c for c in cands if _in_contents_block(c, lines)]
    cands = _merge_duplicates([c for c in cands if not _in_contents_block(c, lines)], words, config)
    cands, toc_run = _drop_contents_runs(cands, lines, words, config)
    toc_run += len(blocks)
    cands, strays = _drop_strays(cands)
    segs = _segments(cands)
    kept_segs, toc_seg = [], 0
    for n, seg in enumerate(segs):
        ends = [words[c.line] for c in seg[1:]] + [words[segs[n + 1][0].line] if n + 1 < len(segs) else words[-1]]
        mean = sum(e - words[c.body_start] for c, e in zip(seg, ends)) / len(seg)
        if n + 1 < len(segs) and len(seg) >= config.toc_min_run and mean < config.toc_segment_words:
            toc_seg += len(seg)
            continue
        kept_segs.append(seg)
    kept = [c for seg in kept_segs for c in seg]
    breaks = sum(1 for seg in kept_segs[1:] if seg[0].number != 1)
    if kept_segs and kept_segs[0][0].number not in (1, 2):
        breaks += 1
    info = {
        "candidates": len(cands) + toc_run + toc_seg + strays,
        "contents_entries": toc_run + toc_seg,
        "stray_headings": strays,
        "kept": len(kept),
        "numbering_breaks": breaks,
    }
    return kept, info


def _body(lines: list[str], start: int, end: int) -> str:
    """Lines [start, end) without surrounding blanks and trailing division headings.

    A division heading is a VOLUME/BOOK/PART line, optionally followed (after blank lines)
    by a short title line of its own ("PART TWO", "", "THE DEPARTURE"); it belongs to the
    next chapter's front, so the chapter ends where its own prose ends.
    """
    chunk = lines[start:end]
    while chunk:
        if not chunk[-1].strip() or is_structural(chunk[-1]):
            chunk.pop()
            continue
        k = len(chunk) - 2
        while k >= 0 and not chunk[k].strip():
            k -= 1
        if (
            k >= 0
            and len(chunk) - 1 - k <= 3
            and is_structural(chunk[k])
            and title_like(chunk[-1])
            and len(chunk[-1].split()) <= 8
        ):
            del chunk[k:]
            continue
        break
    while chunk and not chunk[0].strip():
        chunk.pop(0)
    return "\n".join(chunk)


def _build(kept, lines, words, config) -> list[DetectedChapter]:
    chapters: list[DetectedChapter] = []
    first = kept[0]
    if first.number == 2 and words[first.line] >= config.lead_min_words:
        body = _body(lines, 0, first.line)
        chapters.append(DetectedChapter(0, "", "", 1, "", body, 0))
    for n, cand in enumerate(kept):
        end = kept[n + 1].line if n + 1 < len(kept) else len(lines)
        body = _body(lines, cand.body_start, end)
        chapters.append(
            DetectedChapter(len(chapters), cand.heading, cand.title, cand.number, cand.numeral, body, cand.line)
        )
    return _reindex([c for c in chapters if c.body.strip()])


def _reindex(chapters: list[DetectedChapter]) -> list[DetectedChapter]:
    return [dataclasses.replace(c, index=i) for i, c in enumerate(chapters)]
