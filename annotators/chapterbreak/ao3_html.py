"""AO3 HTML pages -> work parts: the site's work pages and the archive's HTML download.

Site page: metadata in `dl.work.meta` (dd.rating, dd.language, dd.words, dd.chapters "2/?"),
chapters as `div#chapters > div.chapter#chapter-N` (title in `h3.title`, text in
`div.userstuff[role=article]`); a one-chapter work has `div.userstuff` straight in
`div#chapters`. Download: metadata in `div#preface dl.tags` (dt/dd pairs, "Stats" text),
chapters as `div.meta.group` (h2.heading) each followed by `div.userstuff`.
Series and listing pages (`li.blurb`, no `div#chapters`) have no text and are dropped.
"""

from __future__ import annotations

import collections
import re

from annotators.chapterbreak.ao3_text import note_free_paragraphs
from annotators.chapterbreak.gutenberg import decode_text, refuse_non_text, unify_newlines
from annotators.core.outcome import Drop
from annotators.text.charset import decode_bytes

_WORK_LINK = re.compile(r"/works/(\d+)")


def decode_page(raw: bytes) -> str | Drop:
    """The page's text: BOM, then `<meta charset>`, then UTF-8, else windows-1252 line by line.

    Empty and binary files are refused first, as for books (`gutenberg.refuse_non_text`).
    """
    refused = refuse_non_text(raw.removeprefix(b"\xef\xbb\xbf"))
    if refused is not None:
        return refused
    decoded = decode_bytes(raw, html=True)
    if decoded is None or (decoded.evidence == "detected" and decoded.encoding != "utf-8"):
        # AO3 is an English-language archive: bytes with no BOM or <meta> charset that are not
        # UTF-8 are windows-1252 (line by line, as Gutenberg's books); detection's GB18030 and
        # Big5 are Chinese sites' guesses (a cp1252 page read as GB18030 gave "wasn抰")
        got = decode_text(raw)
        return got if isinstance(got, Drop) else got[0]
    return unify_newlines(decoded.text)


def html_parts(input_id, raw, part_cls, chapter_cls, heading_fn):
    """The work part(s) one AO3 HTML file holds (see the module doc), or Drop."""
    text = decode_page(raw)
    if isinstance(text, Drop):
        return text
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(text, "lxml")
    chapters_div = soup.select_one("div#chapters")
    if chapters_div is None:
        blurbs = soup.select("li.blurb")
        if blurbs:
            return Drop("no_work_text", f"listing/series page with {len(blurbs)} work blurb(s)")
        return Drop("not_an_ao3_work", "no div#chapters")
    if soup.select_one("div#preface") is not None:
        meta, chapters = _download_meta(soup), _download_chapters(chapters_div, chapter_cls, heading_fn)
    else:
        meta, chapters = _site_meta(soup), _site_chapters(chapters_div, chapter_cls, heading_fn)
    if not chapters:
        return Drop("no_work_text", "div#chapters holds no chapter text")
    work_id = meta.pop("work_id") or _most_common_work_id(str(soup)) or input_id
    return [part_cls(work_id=work_id, input_id=input_id, chapters=tuple(chapters), **meta)]


def _most_common_work_id(html: str) -> str | None:
    counts = collections.Counter(_WORK_LINK.findall(html))
    if not counts:
        return None
    best = max(counts.values())
    return min((w for w, n in counts.items() if n == best), key=int)


def _int(text: str | None) -> int | None:
    digits = re.sub(r"[,.\s]", "", text or "")
    return int(digits) if digits.isdigit() else None


def _posted(text: str | None) -> int | None:
    match = re.match(r"\s*(\d+)\s*/", text or "")
    return int(match.group(1)) if match else None


def _site_meta(soup) -> dict:
    def dd(cls):
        el = soup.select_one(f"dl.work.meta dd.{cls}")
        return " ".join(el.get_text(" ").split()) if el else None

    title = soup.select_one("h2.title")
    return {
        "work_id": None,
        "title": " ".join(title.get_text(" ").split()) if title else "",
        "language": dd("language"),
        "rating": dd("rating"),
        "words": _int(dd("words")),
        "posted": _posted(dd("chapters")),
    }


def _site_chapters(chapters_div, chapter_cls, heading_fn):
    out = []
    blocks = chapters_div.select("div.chapter[id^=chapter-]")
    for block in blocks:
        position = _int(block["id"].split("-", 1)[1])
        body = block.select_one("div.userstuff")
        if position is None or body is None:
            continue
        title_el = block.select_one("h3.title")
        title = " ".join(title_el.get_text(" ").split()) if title_el else ""
        title = re.sub(r"^\s*chapter\s+\d+\s*:?\s*", "", title, flags=re.I)
        out.append(chapter_cls(position, heading_fn(position, title), title, note_free_paragraphs(body)))
    if not blocks:
        body = chapters_div.select_one("div.userstuff") or chapters_div
        out.append(chapter_cls(1, heading_fn(1, ""), "", note_free_paragraphs(body)))
    return [c for c in out if c.text.strip()] if any(c.text.strip() for c in out) else []


def _download_meta(soup) -> dict:
    fields = {}
    for dt in soup.select("div#preface dl.tags dt"):
        dd = dt.find_next_sibling("dd")
        fields[dt.get_text(" ", strip=True).rstrip(":").lower()] = " ".join(dd.get_text(" ").split()) if dd else ""
    stats = fields.get("stats", "")
    words = re.search(r"Words:\s*([\d,]+)", stats)
    chapters = re.search(r"Chapters:\s*(\d+)\s*/", stats)
    link = soup.select_one("div#preface p.message a[href*='/works/']")
    title = soup.select_one("div#preface .meta h1")
    return {
        "work_id": _WORK_LINK.search(link["href"]).group(1) if link else None,
        "title": title.get_text(" ", strip=True) if title else "",
        "language": fields.get("language"),
        "rating": fields.get("rating"),
        "words": _int(words.group(1)) if words else None,
        "posted": int(chapters.group(1)) if chapters else None,
    }


def _download_chapters(chapters_div, chapter_cls, heading_fn):
    out, title, position = [], None, 0
    for child in chapters_div.find_all("div", recursive=False):
        classes = child.get("class") or []
        if "meta" in classes and child.select_one("h2.heading"):
            title = " ".join(child.select_one("h2.heading").get_text(" ").split())
        elif "userstuff" in classes:
            position += 1
            text = note_free_paragraphs(child)
            out.append(chapter_cls(position, heading_fn(position, title or ""), title or "", text))
            title = None
    if not out:
        out.append(chapter_cls(1, heading_fn(1, ""), "", note_free_paragraphs(chapters_div)))
    return [c for c in out if c.text.strip()]
