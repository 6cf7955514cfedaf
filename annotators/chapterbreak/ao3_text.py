"""Text of AO3 chapters: HTML blocks to paragraphs, and author-note removal (Appendix A).

ChapterBreak Appendix A: "For each chapter, we remove the text within the range of
'Notes for the Chapter:', 'Summary for the Chapter:' and 'Author's Note:'". Those markers
are what FanFicFare writes (in bold) before each note block of an AO3 download. Here a
marker removes itself and the note that follows it: in HTML the next sibling element (the
blockquote), in plain text the next paragraph (or the rest of the marker's own line).
"""

from __future__ import annotations

import re

NOTE_MARKERS = ("Notes for the Chapter:", "Summary for the Chapter:", "Author's Note:", "Author\u2019s Note:")
_MARKER_RE = re.compile(r"^\W*(?:" + "|".join(re.escape(m.rstrip(":")) for m in NOTE_MARKERS) + r")\s*:?\W*", re.I)
_BR = "\u2028"  # stands for <br> while whitespace is collapsed
_BLOCKS = ["p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "pre", "blockquote", "center", "div", "hr"]


def is_marker(text: str) -> bool:
    return bool(_MARKER_RE.match(text.strip())) and len(text.strip()) < 200


def clean_chapter_text(text: str) -> str:
    """Plain chapter text (or an HTML fragment) without note blocks, paragraphs "\\n\\n"-separated."""
    if re.search(r"<(p|br|div|blockquote|b|strong)\b", text, re.I):
        from bs4 import BeautifulSoup

        return note_free_paragraphs(BeautifulSoup(text, "lxml"))
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text.replace("\r\n", "\n")) if p.strip()]
    out, skip = [], False
    for para in paragraphs:
        if is_marker(para):
            skip = not _MARKER_RE.sub("", para, count=1).strip()  # marker alone: note is next
            continue
        if skip:
            skip = False
            continue
        out.append(para)
    return "\n\n".join(out)


def remove_notes(root) -> None:
    """Delete FanFicFare note blocks and every marker element with the note that follows it."""
    for div in root.select("div.fff_chapter_notes, h3.landmark"):
        div.decompose()
    for tag in list(root.find_all(["b", "strong", "p", "h3", "h4"])):
        if getattr(tag, "decomposed", False) or not is_marker(tag.get_text(" ", strip=True)):
            continue
        note = tag.find_next_sibling()
        if note is not None and note.name in ("blockquote", "div", "p"):
            note.decompose()
        tag.decompose()


def note_free_paragraphs(root) -> str:
    """Paragraph texts of an HTML element (leaf blocks), whitespace-normalised, "\\n\\n"-joined,
    after deleting the author-note blocks from `root` (Appendix A; `remove_notes`)."""
    remove_notes(root)
    for br in root.find_all("br"):
        br.replace_with(_BR)
    leaves = [el for el in root.find_all(_BLOCKS) if el.name == "hr" or not el.find(_BLOCKS)]
    out = []
    for el in leaves or [root]:
        if el.name == "hr":
            continue
        lines = [" ".join(line.split()) for line in el.get_text("").split(_BR)]
        text = "\n".join(line for line in lines if line)
        if text:
            out.append(text)
    return "\n\n".join(out)
