"""AO3 works for ChapterBreak: parse pages and dumps, assemble chapters, apply Appendix A filters.

Inputs (chapter structure always comes from the work's own markup, paper section 2):
- the site's work pages (`dl.work.meta`, `div#chapters > div.chapter#chapter-N`; a one-chapter
  work has its text straight in `div#chapters`); one page may hold one chapter of a longer
  work, so pages are parsed into parts and grouped by work id;
- the archive's HTML download (`div#preface`, `div#chapters` with `div.meta.group` headings);
- JSON lines: a work object (or `{work_id: work}`) with metadata and a `chapters` list.
Known-bad inputs: series/listing pages with no text, empty chapters, chapters missing from a
multi-page work. Author notes are removed (Appendix A): the site's and download's note
blocks by structure, and "Notes for the Chapter:" / "Summary for the Chapter:" /
"Author's Note:" blocks (FanFicFare-style dumps) with the note that follows each marker.
"""
from __future__ import annotations

import dataclasses
import json
import re

from annotators.ao3_html import html_parts
from annotators.ao3_text import clean_chapter_text
from annotators.outcome import Drop


@dataclasses.dataclass(frozen=True)
class Ao3Config:
    """AO3 filters of ChapterBreak Appendix A (each can be switched off with None/0)."""

    language: str | None = "English"  # App. A: "written in English language"
    rating: str | None = "General Audiences"  # App. A: "rated General Audience by the author"
    min_words: int = 10_000  # App. A: "at least 10K words"
    more_than_chapters: int = 10  # App. A: "more than 10 chapters"


@dataclasses.dataclass(frozen=True)
class Ao3Chapter:
    position: int  # 1-based, from the work's markup
    heading: str  # normalised "Chapter N" or "Chapter N: Title"
    title: str
    text: str


@dataclasses.dataclass(frozen=True)
class Ao3Part:
    """What one page or JSON line says about one work."""

    work_id: str
    input_id: str
    title: str = ""
    language: str | None = None
    rating: str | None = None
    words: int | None = None  # the work's own word count, when stated
    posted: int | None = None  # chapters posted ("12/20" -> 12)
    chapters: tuple[Ao3Chapter, ...] = ()


def normalise_heading(position: int, title: str) -> str:
    """"Chapter N" plus the chapter's own title, whatever the source printed."""
    title = re.sub(r"^\s*chapter\s+\d+\s*[:.\-\u2013\u2014]?\s*", "", title or "", flags=re.I).strip()
    return f"Chapter {position}: {title}" if title else f"Chapter {position}"


def parse_html(input_id: str, raw: bytes) -> list[Ao3Part] | Drop:
    """One AO3 HTML file (site page or download) -> its work part(s), or Drop."""
    return html_parts(input_id, raw, Ao3Part, Ao3Chapter, normalise_heading)


def parse_json_line(input_id: str, raw: bytes) -> list[Ao3Part] | Drop:
    """One JSON line holding a work with a `chapters` list -> [Ao3Part], or Drop."""
    if not raw.strip():
        return Drop("empty_line")
    try:
        obj = json.loads(raw.decode("utf-8", errors="strict"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return Drop("malformed_json", str(exc)[:200])
    if isinstance(obj, dict) and len(obj) == 1 and isinstance(next(iter(obj.values())), dict):
        key, obj = next(iter(obj.items()))
        obj = {"work_id": key, **obj}
    if not isinstance(obj, dict):
        return Drop("malformed_json", "a line must hold a JSON object")
    chapters = obj.get("chapters")
    if not isinstance(chapters, list) or not chapters:
        return Drop("no_chapter_list", "the work has no `chapters` list")
    out = []
    for n, ch in enumerate(chapters, start=1):
        ch = ch if isinstance(ch, dict) else {"text": str(ch)}
        title = str(ch.get("title") or ch.get("heading") or "")
        out.append(Ao3Chapter(n, normalise_heading(n, title), title, clean_chapter_text(str(ch.get("text") or ""))))
    words = obj.get("num_words", obj.get("words"))
    return [Ao3Part(
        work_id=str(obj.get("work_id") or obj.get("id") or input_id), input_id=input_id,
        title=str(obj.get("title") or ""), language=obj.get("language"),
        rating=obj.get("rating"), words=int(words) if str(words or "").isdigit() else None,
        posted=len(chapters), chapters=tuple(out))]


def assemble(work_id: str, parts: list[Ao3Part]) -> tuple[Ao3Part, list[Ao3Chapter]] | Drop:
    """Merge a work's parts (sorted by input id) into its chapters in reading order."""
    parts = sorted(parts, key=lambda p: p.input_id)
    by_position: dict[int, Ao3Chapter] = {}
    for part in parts:
        for ch in part.chapters:
            by_position.setdefault(ch.position, ch)
    posted = max([p.posted or 0 for p in parts] + [max(by_position, default=0)])
    missing = [n for n in range(1, posted + 1) if n not in by_position]
    if missing:
        return Drop("missing_chapters", f"work {work_id}: chapters {missing[:20]} of {posted} not in the input")
    chapters = [by_position[n] for n in sorted(by_position)]
    empty = [c.position for c in chapters if not c.text.strip()]
    if empty:
        return Drop("empty_chapter", f"work {work_id}: chapters {empty[:20]} have no text")
    meta = {f: next((getattr(p, f) for p in parts if getattr(p, f)), None)
            for f in ("title", "language", "rating", "words")}
    return dataclasses.replace(parts[0], posted=posted, chapters=(), **meta), chapters


def filter_reasons(meta: Ao3Part, chapters: list[Ao3Chapter], config: Ao3Config) -> list[str]:
    """Appendix A filters that the work fails (empty = keep), in a fixed order."""
    reasons = []
    if config.language and (meta.language or "").strip().lower() != config.language.lower():
        reasons.append("not_english" if meta.language else "language_unknown")
    if config.rating and (meta.rating or "").strip().lower() != config.rating.lower():
        reasons.append("not_general_audiences" if meta.rating else "rating_unknown")
    words = meta.words if meta.words is not None else sum(len(c.text.split()) for c in chapters)
    if config.min_words and words < config.min_words:
        reasons.append("too_few_words")
    if config.more_than_chapters and len(chapters) <= config.more_than_chapters:
        reasons.append("too_few_chapters")
    return reasons

