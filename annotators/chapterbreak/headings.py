"""Which single lines of a plain-text book are chapter headings (ChapterBreak section 2).

Each `*_candidate(lines, i)` looks at line i and returns a HeadingCandidate or None. The
checks are local (line shape, the paragraph around it); `annotators.chapterbreak.chapters` then removes
contents lists and checks numbering. Known traps guarded here: prose lines beginning with
"Chapter 3 of the report...", mid-paragraph mentions, captions that only refer to a chapter
("(See Chapter VIII.)"), and roman-looking words ("Chapter mild").
"""

from __future__ import annotations

import dataclasses
import re

from annotators.chapterbreak.numerals import NUMERAL, numeral_value

_END = r"(?=$|[\s.:;,\-\u2014\u2013)\]_*!?])"
HEADING_LINE = re.compile(rf"^[\s_*]*(?P<word>chapter|chap\.)\s+(?P<num>{NUMERAL}){_END}(?P<rest>.*)$", re.I)
CHAPTER_PHRASE = re.compile(rf"\b(?P<word>chapter|chap\.)\s+(?P<num>{NUMERAL}){_END}", re.I)
# `rest` runs to the line's last non-space (not `\S.*?` before `\s*$`, which reads the trailing
# spaces again at every character: quadratic on a long line; issue 28)
NUMERAL_LINE = re.compile(r"^\s*(?P<num>[IVXLC]+|\d{1,3})(?P<sep>\.?)(?:\s+(?P<rest>\S(?:.*\S)?))?\s*$")
_STRUCTURAL = re.compile(rf"^[\s_*]*(?:volume|vol\.|book|part)\s+(?:the\s+)?(?:{NUMERAL}|\w+)\b.{{0,60}}$", re.I)
_SEPARATORS = ".:;,-\u2014\u2013)]_*"
_SMALL = {
    "a",
    "an",
    "the",
    "of",
    "in",
    "and",
    "to",
    "on",
    "at",
    "for",
    "by",
    "with",
    "from",
    "or",
    "but",
    "as",
    "into",
    "upon",
    "is",
    "his",
    "her",
    "its",
    "their",
    "o'",
    "de",
    "la",
}
MAX_TITLE_WORDS = 16
MAX_HEADING_CHARS = 110


@dataclasses.dataclass(frozen=True)
class HeadingCandidate:
    line: int  # where the chapter starts (heading or caption line)
    body_start: int  # first line after the heading (and its title lines)
    heading: str
    title: str
    number: int | None
    numeral: str
    kind: str  # chapter | illustration | numeral


def is_blank(lines: list[str], i: int) -> bool:
    return i < 0 or i >= len(lines) or not lines[i].strip()


def is_heading_like(line: str) -> bool:
    """Line shape of a chapter heading or contents entry: "chapter" + a valid numeral first."""
    match = HEADING_LINE.match(line)
    return bool(match) and len(line.strip()) <= MAX_HEADING_CHARS and _numeral_ok(match.group("num"))


def is_structural(line: str) -> bool:
    """A VOLUME / BOOK / PART heading line (kept out of chapter bodies)."""
    return bool(_STRUCTURAL.match(line)) and len(line.strip()) <= 70


def title_like(text: str) -> bool:
    """Short, capitalised, not a sentence fragment: "THE SHADOW", "The Pool of Tears"."""
    text = text.strip().strip("_*").strip()
    words = text.split()
    if not words or len(words) > MAX_TITLE_WORDS or len(text) > 100 or text[-1] in ",;":
        return False
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return False
    if all(ch.isupper() for ch in letters):
        return True
    content = [w.strip("\"'\u201c\u2018([_*") for w in words]
    content = [w for w in content if w and w[0].isalpha() and w.lower() not in _SMALL]
    capital = sum(1 for w in content if w[0].isupper())
    return bool(content) and content[0][0].isupper() and capital >= 0.75 * len(content)


def _paragraph_start(lines: list[str], i: int) -> bool:
    """Line i starts a paragraph: blank before it, or a VOLUME/BOOK line, or a caption's end."""
    if is_blank(lines, i - 1):
        return True
    prev = lines[i - 1].strip()
    return is_structural(prev) or (prev.endswith("]") and "[" in "".join(lines[max(0, i - 10) : i]))


def _title_after(lines: list[str], j: int) -> tuple[str, int]:
    """(title lines as printed, first body line) when lines from j hold a title paragraph:
    one or two title-like lines, or a title wrapped onto its next line(s) (`wrapped_title`)."""
    k = j
    while k < len(lines) and k - j < 3 and not lines[k].strip():
        k += 1
    block = []
    while k + len(block) < len(lines) and lines[k + len(block)].strip() and len(block) < 4:
        block.append(lines[k + len(block)].strip())
    if not block or len(block) > 3 or sum(len(b.split()) for b in block) > MAX_TITLE_WORDS:
        return "", j
    if not (len(block) <= 2 and all(title_like(b) for b in block)) and not wrapped_title(block):
        return "", j
    return "\n".join(block), k + len(block)


MAX_WRAP_LINES = 3  # a title wrapped onto at most this many lines in all
_SENTENCE_END = tuple(".!?")


def wrapped_title(parts: list[str]) -> bool:
    """Whether lines printed one under the other are one title wrapped at the line width
    ("Stubb and Flask kill a Right Whale; and Then Have a Talk" / "over Him."): every line
    but the last stops mid-phrase (no sentence end), the lines are a whole paragraph of at
    most MAX_WRAP_LINES lines and MAX_TITLE_WORDS words, the first line alone is title-like
    and the joined text is title-like. A first line of prose fails: it is not title-cased,
    or its paragraph runs on for more lines and words than a title has."""
    parts = [p.strip() for p in parts]
    if not 2 <= len(parts) <= MAX_WRAP_LINES or not all(parts):
        return False
    if any(p.rstrip("_*").endswith(_SENTENCE_END) for p in parts[:-1]):
        return False
    joined = " ".join(parts)
    return (
        len(joined.split()) <= MAX_TITLE_WORDS
        and len(joined) <= 2 * MAX_HEADING_CHARS
        and title_like(parts[0])
        and title_like(joined)
    )


def _paragraph_from(lines: list[str], i: int) -> list[str]:
    """Lines from i up to the next blank line (at most MAX_WRAP_LINES + 1), stripped."""
    out = []
    while i + len(out) < len(lines) and lines[i + len(out)].strip() and len(out) <= MAX_WRAP_LINES:
        out.append(lines[i + len(out)].strip())
    return out


def title_without_emphasis(title: str) -> str:
    """A title without emphasis marks and line breaks: "_Journal--continued_" -> "Journal--continued"."""
    return " ".join(title.replace("_", " ").replace("*", " ").split())


def _numeral_ok(num: str) -> bool:
    parsed = numeral_value(num)
    if parsed is None:
        return False
    return parsed[1] != "roman" or num.isupper() or num.islower()


def chapter_candidate(lines: list[str], i: int) -> HeadingCandidate | None:
    """A "Chapter <numeral> [title]" heading line at i, or None."""
    line = lines[i]
    match = HEADING_LINE.match(line)
    if not match or len(line.strip()) > MAX_HEADING_CHARS or not _numeral_ok(match.group("num")):
        return None
    if not _paragraph_start(lines, i):
        return None
    rest = match.group("rest").strip()
    title = rest.lstrip(_SEPARATORS + " ").strip()
    separated = bool(rest) and rest[0] in _SEPARATORS
    if title and not (title_like(title) or (separated and is_blank(lines, i + 1))):
        return None
    heading, heading_end = line.strip(), i + 1
    if not title:
        title, heading_end = _title_after(lines, i + 1)
        heading = f"{heading}\n{title}" if title else heading
        title = title_without_emphasis(title)
    elif not is_blank(lines, i + 1):
        wrap = _paragraph_from(lines, i)
        if wrapped_title([title] + wrap[1:]):  # "CHAPTER 73. Stubb and ... a Talk" / "over Him."
            heading, heading_end = "\n".join(wrap), i + len(wrap)
            title = title_without_emphasis(" ".join([title] + wrap[1:]))
        elif not title_like(lines[i + 1]):
            return None
    num = match.group("num")
    return HeadingCandidate(i, heading_end, heading, title, numeral_value(num)[0], num, "chapter")


def illustration_candidate(lines: list[str], i: int) -> HeadingCandidate | None:
    """An "[Illustration: ... Chapter I.]" caption at i that carries the chapter heading."""
    if not lines[i].lstrip().startswith("[Illustration") or not _paragraph_start(lines, i):
        return None
    end = i
    while end < len(lines) and end - i < 12 and "]" not in lines[end]:
        end += 1
    if end >= len(lines) or "]" not in lines[end]:
        return None
    caption = " ".join(text.strip() for text in lines[i : end + 1])
    inner = caption[caption.index("[") + 1 : caption.rindex("]")]
    inner = re.sub(r"^Illustration\s*:?\s*", "", inner, flags=re.I).strip()
    match = CHAPTER_PHRASE.search(inner)
    if not match or not _numeral_ok(match.group("num")):
        return None
    before = inner[: match.start()].lower()
    if re.search(r"(see|in|of|from|to)\s*$|\(\s*$", before):
        return None
    # The heading is the chapter phrase and what follows it; the picture's own caption
    # ("_The traveller at the gate._") is not part of the chapter and is dropped.
    heading = " ".join(re.sub(r"[_*]+", " ", inner[match.start() :]).split())
    title, body_start = _title_after(lines, end + 1)
    heading = f"{heading}\n{title}" if title else heading
    title = title_without_emphasis(title)
    return HeadingCandidate(
        i, body_start, heading, title, numeral_value(match.group("num"))[0], match.group("num"), "illustration"
    )


def numeral_candidate(lines: list[str], i: int) -> HeadingCandidate | None:
    """A bare "IV" / "IV. The Mail" / "12" heading paragraph at i (optional style)."""
    match = NUMERAL_LINE.match(lines[i])
    if not match or not is_blank(lines, i - 1) or not is_blank(lines, i + 1):
        return None
    num, rest = match.group("num"), (match.group("rest") or "").strip()
    parsed = numeral_value(num)
    if parsed is None or (rest and (match.group("sep") != "." or not title_like(rest))):
        return None
    title, body_start = (rest, i + 1) if rest else _title_after(lines, i + 1)
    heading = lines[i].strip() if rest or not title else f"{lines[i].strip()}\n{title}"
    title = title_without_emphasis(title)
    return HeadingCandidate(i, body_start, heading, title, parsed[0], num, "numeral")
