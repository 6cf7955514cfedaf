"""Links, title and story text out of a decoded HTML page (SPEC "Crawl and clean").

`extract_links` gives the crawler the page's links in document order (absolute, without
fragments, each once). `extract_story` applies a site spec's CSS selectors: the title is the
first match's text with whitespace collapsed ("" when the selector finds nothing), the body
is the first match's text with one line per block element (<p>, <br>, <div>, <li>, ...);
newlines inside text nodes also end a line, because many story sites paste plain text
with its line breaks into one element (Chinese has no spaces to lose there).
Scripts, styles, forms and comments are dropped; anchor text is kept because story sites
wrap ordinary words in tag links, and URL-looking text is removed later by `annotators.stories.clean`.
Known-bad inputs guarded against: broken markup (lxml repairs it), missing selectors,
<br>-only layouts, non-breaking and ideographic spaces.
"""

from __future__ import annotations

import re

from bs4 import BeautifulSoup
from bs4.element import CData, Comment, Declaration, Doctype, NavigableString, ProcessingInstruction, Tag

from annotators.core.outcome import Drop
from annotators.stories.site_spec import normalize_url

BLOCK = {
    "p",
    "div",
    "br",
    "li",
    "ul",
    "ol",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "blockquote",
    "section",
    "article",
    "tr",
    "table",
    "pre",
    "dd",
    "dt",
    "dl",
    "hr",
    "header",
    "footer",
}
SKIP = {"script", "style", "noscript", "iframe", "form", "button", "select", "textarea", "template", "svg", "head"}
_NOT_TEXT = (Comment, CData, Declaration, Doctype, ProcessingInstruction)


def lxml_soup(html: str) -> BeautifulSoup:
    """The page parsed by lxml, which repairs broken markup."""
    return BeautifulSoup(html, "lxml")


def extract_links(html: str | BeautifulSoup, base_url: str) -> list[str]:
    """Absolute http(s) links of <a href> in document order, without fragments, each once.

    A <base href> in the page changes the base, as browsers do.
    """
    soup = html if isinstance(html, BeautifulSoup) else lxml_soup(html)
    base_tag = soup.find("base", href=True)
    base = normalize_url(base_tag["href"], base_url) if base_tag else None
    base = base or base_url
    seen: dict[str, None] = {}
    for anchor in soup.find_all("a", href=True):
        url = normalize_url(anchor["href"], base)
        if url is not None:
            seen.setdefault(url, None)
    return list(seen)


def _collect(node: Tag, out: list[str]) -> None:
    for child in node.children:
        if isinstance(child, _NOT_TEXT):
            continue
        if isinstance(child, NavigableString):
            out.append(str(child))
        elif isinstance(child, Tag) and child.name not in SKIP:
            block = child.name in BLOCK
            if block:
                out.append("\n")
            _collect(child, out)
            if block:
                out.append("\n")


def block_lines_text(node: Tag) -> str:
    """Text of an element, one line per block element, blank lines removed."""
    pieces: list[str] = []
    _collect(node, pieces)
    text = "".join(pieces).replace("\u00a0", " ")
    lines = (re.sub(r"[ \t\r\f\v]+", " ", line).strip() for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


def extract_story(html: str, title_selector: str, body_selector: str) -> tuple[str, str] | Drop:
    """(title, body text) by the spec's selectors, or Drop(body_not_found | empty_body)."""
    soup = lxml_soup(html)
    try:
        body_node = soup.select_one(body_selector)
        title_node = soup.select_one(title_selector)
    except Exception as exc:  # soupsieve raises its own error types on a bad selector
        return Drop("bad_selector", f"{type(exc).__name__}: {exc}"[:300])
    if body_node is None:
        return Drop("body_not_found", f"no element matches {body_selector!r}")
    body = block_lines_text(body_node)
    if not body:
        return Drop("empty_body", f"{body_selector!r} has no text")
    title = " ".join(block_lines_text(title_node).split()) if title_node is not None else ""
    return title, body
