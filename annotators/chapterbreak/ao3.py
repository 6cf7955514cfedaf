"""AO3 works for ChapterBreak: parse pages and dumps, assemble chapters, apply Appendix A filters.

Inputs (chapter structure always comes from the work's own markup, paper section 2):
- the site's work pages (`dl.work.meta`, `div#chapters > div.chapter#chapter-N`; a one-chapter
  work has its text straight in `div#chapters`); one page may hold one chapter of a longer
  work, so pages are parsed into parts and grouped by work id;
- the archive's HTML download (`div#preface`, `div#chapters` with `div.meta.group` headings);
- JSON lines: a work object (or `{work_id: work}`) with metadata and a `chapters` list;
  tag fields (rating, language, ...) may be a string or a list of strings; blank lines are
  skipped (not a work);
- JSON lines of ChapterBreak's long-fic dump (reference/PEERS.md 2.2): `{work_id: {title,
  fandom, genre, Summary, num_chaps, num_words, text}}`; `text` is split at its chapter
  heading lines (TAB + ordinal + ". " + title, e.g. "\t9. Chapter 12"; or, failing those,
  "Chapter N[: title]" paragraphs numbered 1, 2, ...), and the count must equal `num_chaps`
  when given (else rejected: chapter_count_mismatch). That dump is the paper's already
  filtered set, so a work from it that states no language or rating is not rejected for it.
Known-bad inputs: series/listing pages with no text, empty chapters, chapters missing from a
multi-page work. Author notes are removed (Appendix A): the site's and download's note
blocks by structure, and "Notes for the Chapter:" / "Summary for the Chapter:" /
"Author's Note:" blocks (FanFicFare-style dumps) with the note that follows each marker.
"""

from __future__ import annotations

import dataclasses
import re

from annotators.chapterbreak.ao3_html import html_parts
from annotators.chapterbreak.ao3_text import clean_chapter_text
from annotators.core import jsonl
from annotators.core.outcome import Drop


@dataclasses.dataclass(frozen=True)
class Ao3Config:
    """AO3 filters of ChapterBreak Appendix A (each can be switched off with None/0)."""

    language: str | None = dataclasses.field(
        default="English",
        metadata={"help": "keep works in this language ('' disables; App. A: 'written in English language')"},
    )
    rating: str | None = dataclasses.field(
        default="General Audiences",
        metadata={"help": "keep works of this rating ('' disables; App. A: 'rated General Audience')"},
    )
    min_words: int = dataclasses.field(default=10_000, metadata={"help": "App. A: at least 10K words", "min": 0})
    more_than_chapters: int = dataclasses.field(
        default=10, metadata={"help": "App. A: more than 10 chapters", "min": 0}
    )


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
    prefiltered: bool = False  # from ChapterBreak's filtered long-fic dump (no rating/language fields)


_CHAPTER_PREFIX = re.compile(r"^\s*chapter\s+\d+\s*[:.\-\u2013\u2014]?\s*", re.I)
_ORDINAL_PREFIX = re.compile(r"^\s*\d+\s*[.:)\-\u2013\u2014]\s*")
_NUMBER_ONLY = re.compile(r"^\s*(?:(?:chapter|ch\.?|part)\s*)?\d+\s*[.:]?\s*$", re.I)


def normalise_heading(position: int, title: str) -> str:
    """ "Chapter N" plus the chapter's own title, whatever the source printed.

    Numbering the source puts in the title is dropped, because it would tell the gold from
    the negatives by counting: a leading "Chapter M" / "M." ordinal, and a title that is
    then only a chapter number ("9. Chapter 12" -> "Chapter 9"; "3. The Storm" -> "Chapter
    3: The Storm"). Numbers inside a real title stay; the examples rewrite those equal to
    the chapter's own number (`examples.rewrite_heading`).
    """
    title = " ".join((title or "").split())
    title = _CHAPTER_PREFIX.sub("", title)
    if _ORDINAL_PREFIX.match(title) and not _NUMBER_ONLY.match(title):
        title = _ORDINAL_PREFIX.sub("", title, count=1)
    title = "" if _NUMBER_ONLY.match(title) else title.strip()
    return f"Chapter {position}: {title}" if title else f"Chapter {position}"


def tag_text(value) -> str | None:
    """A tag field as text: a string, or a list of strings joined by ", " (None if absent)."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        items = [str(v).strip() for v in value if v is not None and str(v).strip()]
        return ", ".join(items) or None
    if isinstance(value, dict):
        return None
    return str(value).strip() or None


def _count(value) -> int | None:
    """A stated count: 12345, "12345" or "12,345"; None when absent or not a number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    text = str(value or "").replace(",", "").strip()
    return int(text) if text.isdigit() else None


_TAB_HEADING = re.compile(r"^\t(?P<num>\d{1,4})\. (?P<title>.*\S)?\s*$")
_CHAPTER_HEADING = re.compile(
    r"^\s*chapter\s+(?P<num>\d{1,4})\b\s*[:.\-\u2013\u2014]?\s*(?P<title>(?:\S(?:.*\S)?)?)\s*$", re.I
)  # title: to the last non-space, in linear time


def split_dump_text(text: str) -> list[tuple[str, str]]:
    """(heading title, chapter text) per chapter of a long-fic dump `text`, in order.

    Headings are lines "\t<ordinal>. <title>" (the dump's layout), else paragraph lines
    "Chapter N[: title]"; either way numbered 1, 2, 3, ... in order, so a stray "3. ..." in
    prose is not a heading. Text before the first heading is not a chapter.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for pattern, paragraph in ((_TAB_HEADING, False), (_CHAPTER_HEADING, True)):
        found, expected = [], 1
        for i, line in enumerate(lines):
            match = pattern.match(line)
            if not match or int(match.group("num")) != expected or len(line.strip()) > 150:
                continue
            if paragraph and not (
                (i == 0 or not lines[i - 1].strip()) and (i + 1 >= len(lines) or not lines[i + 1].strip())
            ):
                continue
            found.append((i, line.strip()))
            expected += 1
        if found:
            ends = [i for i, _ in found[1:]] + [len(lines)]
            return [(title, "\n".join(lines[i + 1 : end])) for (i, title), end in zip(found, ends)]
    return []


def parse_ao3_html(input_id: str, raw: bytes) -> list[Ao3Part] | Drop:
    """One AO3 HTML file (site page or download) -> its work part(s), or Drop."""
    return html_parts(input_id, raw, Ao3Part, Ao3Chapter, normalise_heading)


def parse_json_line(input_id: str, raw: bytes) -> list[Ao3Part] | Drop:
    """One JSON line holding a work (a `chapters` list, or a long-fic dump `text`) -> [Ao3Part].

    A blank line is no work: [] (read and skipped, not a rejected book).
    """
    if not raw.strip():
        return []
    try:
        obj = jsonl.loads(raw.decode("utf-8", errors="strict"))
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError; RecursionError: nested too deeply
        return Drop("malformed_json", jsonl.malformed_detail(str(exc)[:200], raw))
    if isinstance(obj, dict) and len(obj) == 1 and isinstance(next(iter(obj.values())), dict):
        key, obj = next(iter(obj.items()))
        obj = {"work_id": key, **obj}
    if not isinstance(obj, dict):
        return Drop("not_an_object", "a line must hold a JSON object")
    chapters, prefiltered = obj.get("chapters"), False
    if chapters is None and isinstance(obj.get("text"), str):
        chapters, prefiltered = split_dump_text(obj["text"]), True
        if not chapters:
            return Drop("no_chapter_headings", "long-fic dump `text` has no chapter heading lines")
        stated = _count(obj.get("num_chaps"))
        if stated is not None and stated != len(chapters):
            return Drop("chapter_count_mismatch", f"num_chaps={stated} but {len(chapters)} chapter headings in `text`")
        chapters = [{"title": title, "text": body} for title, body in chapters]
    if not isinstance(chapters, list) or not chapters:
        return Drop("no_chapter_list", "the work has no `chapters` list and no dump `text`")
    out = []
    for n, ch in enumerate(chapters, start=1):
        text = ch.get("text") if isinstance(ch, dict) else ch
        if not isinstance(text, str) and not (isinstance(ch, dict) and text is None):
            # null, a number or a list once became a chapter whose text was "None" or "1"
            what = type(text).__name__
            return Drop("bad_field_type", f"chapter {n} is a {what}, not text or an object with a `text` string")
        ch = ch if isinstance(ch, dict) else {"text": ch}
        title = tag_text(ch.get("title")) or tag_text(ch.get("heading")) or ""
        out.append(Ao3Chapter(n, normalise_heading(n, title), title, clean_chapter_text(str(ch.get("text") or ""))))
    words = obj.get("num_words", obj.get("words"))
    return [
        Ao3Part(
            work_id=str(obj.get("work_id") or obj.get("id") or input_id),
            input_id=input_id,
            title=tag_text(obj.get("title")) or "",
            language=tag_text(obj.get("language")),
            rating=tag_text(obj.get("rating")),
            words=_count(words),
            posted=len(chapters),
            chapters=tuple(out),
            prefiltered=prefiltered,
        )
    ]


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
    meta = {
        f: next((getattr(p, f) for p in parts if getattr(p, f)), None) for f in ("title", "language", "rating", "words")
    }
    meta["title"] = meta["title"] or ""  # an untitled work (the books table's title is never null)
    meta["prefiltered"] = all(p.prefiltered for p in parts)
    return dataclasses.replace(parts[0], posted=posted, chapters=(), **meta), chapters


def filter_reasons(meta: Ao3Part, chapters: list[Ao3Chapter], config: Ao3Config) -> list[str]:
    """Appendix A filters that the work fails (empty = keep), in a fixed order."""
    reasons = []
    language, rating = tag_text(meta.language), tag_text(meta.rating)
    if config.language and (language or "").lower() != config.language.lower():
        if language or not meta.prefiltered:
            reasons.append("not_english" if language else "language_unknown")
    if config.rating and (rating or "").lower() != config.rating.lower():
        if rating or not meta.prefiltered:
            reasons.append("not_general_audiences" if rating else "rating_unknown")
    words = meta.words if meta.words is not None else sum(len(c.text.split()) for c in chapters)
    if config.min_words and words < config.min_words:
        reasons.append("too_few_words")
    if config.more_than_chapters and len(chapters) <= config.more_than_chapters:
        reasons.append("ten_or_fewer_chapters")
    return reasons
