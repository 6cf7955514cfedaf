"""Raw stories from cached pages or local dumps, and their cleaned `Story` records.

Three sources feed `pipelines.stories` (SPEC "Crawl and clean"): rows of the crawler's page
cache (decoded with `charset`, read with the site spec's selectors), JSON lines with
`story` or `text` (optional `title`, `source`, `url`, `license`, `id`, `outline`) and
plain-text files (one story each, any of UTF-8/GBK/GB18030/Big5). Each step returns a
record or a `Drop` with a reason; `to_story` then rejects mojibake (a wrong charset), cleans
and filters (`annotators.stories.clean`).
A page is a story only when it was fetched without error and its final URL matches the
spec's `story` pattern; list pages and robots.txt are dropped as `not_story_page`. A page
that no charset decodes strictly but that is UTF-8 save a few invalid byte sequences keeps
them as U+FFFD, as a browser shows it (`charset.decode_bytes(replace=True)`); its
`encoding` says how many.
"""

from __future__ import annotations

import dataclasses
import json

from annotators.core import jsonl
from annotators.core.ids import stable_id
from annotators.core.outcome import Drop
from annotators.core.sniff import not_text_reason, utf16_evidence
from annotators.stories.clean import CleanConfig, check_decoding, check_story, clean_text, single_line_title
from annotators.stories.html_extract import extract_story
from annotators.stories.site_spec import SiteSpec
from annotators.text.charset import REPLACED_PER_CHARS, Decoded, decode_bytes, utf8_replaced
from schemas.stories import Story


@dataclasses.dataclass(frozen=True)
class RawStory:
    """A story before cleaning, with where it came from."""

    input_id: str
    title: str
    body: str
    source: str
    url: str = ""
    license: str = ""
    fetched_at: str | None = None
    encoding: str | None = None
    outline: tuple[str, ...] | None = None
    given_id: str = ""
    replaced: int = 0  # invalid UTF-8 byte sequences read as U+FFFD (pages only)


def page_to_raw(row: dict, spec: SiteSpec) -> RawStory | Drop:
    """A cached page row -> RawStory, or the reason it is not one."""
    if row.get("error"):
        return Drop(row["error"], row.get("detail") or "")
    final_url = row.get("final_url") or row["url"]
    if row.get("kind") == "robots" or not spec.is_story(final_url):
        return Drop("not_story_page", f"{row.get('kind', '?')} page {final_url}")
    try:
        content_type = json.loads(row.get("headers") or "{}").get("content-type")
    except (ValueError, AttributeError):
        content_type = None
    body = row.get("body") or b""
    decoded = decode_bytes(body, content_type, replace=True)
    if decoded is None:
        text, replaced = utf8_replaced(body)
        return Drop(
            "undecodable",
            "no charset among header, meta, UTF-8, GB18030, Big5 fits (as UTF-8: "
            f"{replaced:,} invalid byte sequences in {len(text):,} characters, over 1 per {REPLACED_PER_CHARS:,})",
        )
    extracted = extract_story(decoded.text, spec.title, spec.body)
    if isinstance(extracted, Drop):
        return extracted
    title, body = extracted
    return RawStory(
        row["url"],
        title,
        body,
        spec.name,
        final_url,
        spec.license,
        row.get("fetched_at"),
        page_encoding(decoded),
        replaced=decoded.replaced,
    )


def page_encoding(decoded: Decoded) -> str:
    """`codec (evidence)`, e.g. `utf-8 (meta)`; with the invalid sequences read as U+FFFD, if any:
    `utf-8 (meta, 1 invalid byte sequence as U+FFFD)`."""
    if not decoded.replaced:
        return f"{decoded.encoding} ({decoded.evidence})"
    plural = "s" if decoded.replaced != 1 else ""
    return f"{decoded.encoding} ({decoded.evidence}, {decoded.replaced} invalid byte sequence{plural} as U+FFFD)"


def json_line_to_raw(input_id: str, raw: bytes, *, source: str, license: str) -> RawStory | Drop:
    """One JSON line of a story dump -> RawStory (fields as in SPEC `pipelines.lot --stories`)."""
    if not raw.strip():
        return Drop("blank_line", "")
    if utf16_evidence(raw):  # a UTF-16 dump (its lines cannot be cut at b"\n"): one utf16 row
        return not_text_reason(raw)
    decoded = decode_bytes(raw, html=False)
    if decoded is None:
        return Drop("undecodable", "line is not UTF-8, GB18030 or Big5")
    try:
        record = jsonl.loads(decoded.text)
    except (ValueError, RecursionError) as exc:  # RecursionError: JSON nested too deeply
        return Drop("malformed_json", jsonl.malformed_detail(str(exc)[:200], decoded.text))
    if not isinstance(record, dict):
        return Drop("not_an_object", type(record).__name__)
    text = record.get("story", record.get("text"))
    if text is None or (isinstance(text, str) and not text.strip()):
        return Drop("missing_field", "no non-empty `story` or `text` string")
    if not isinstance(text, str):
        return Drop("bad_field_type", f"`story`/`text` is a {type(text).__name__}, not a string")
    outline = record.get("outline")
    outline = tuple(str(o) for o in outline) if isinstance(outline, list) else None
    return RawStory(
        input_id,
        str(record.get("title") or ""),
        text,
        str(record.get("source") or source),
        str(record.get("url") or ""),
        str(record.get("license") or license),
        None,
        decoded.encoding,
        outline,
        str(record.get("id") or ""),
    )


def text_file_to_raw(input_id: str, raw: bytes, *, source: str, license: str) -> RawStory | Drop:
    """A whole text file -> RawStory with an empty title."""
    decoded = decode_bytes(raw, html=False)
    if decoded is None:
        return Drop("undecodable", "file is not UTF-8, GB18030 or Big5")
    if not decoded.text.strip():
        return Drop("empty_file", "")
    return RawStory(input_id, "", decoded.text, source, "", license, None, f"{decoded.encoding} ({decoded.evidence})")


def to_story(raw: RawStory, config: CleanConfig = CleanConfig()) -> Story | Drop:
    """Reject mojibake, clean and filter; the story id is a stable hash of (source, input id or given id)."""
    dropped = check_decoding(raw.body, raw.encoding, config)
    if dropped is not None:
        return dropped
    text = clean_text(raw.body, config)
    dropped = check_story(text, config)
    if dropped is not None:
        return dropped
    story_id = stable_id("story", raw.source, raw.given_id or raw.input_id)
    return Story(
        story_id=story_id,
        text=text,
        title=single_line_title(raw.title),
        source=raw.source,
        url=raw.url,
        license=raw.license,
        lang="zh",
        outline=raw.outline,
        input_id=raw.input_id,
        fetched_at=raw.fetched_at,
        encoding=raw.encoding,
    )
