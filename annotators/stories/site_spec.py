"""Site specs: which pages of one story site to crawl and how to read them (SPEC "Crawl").

LOT crawled ~16 public Chinese story sites (paper section 3, appendix; PEERS.md 1.3). A
spec names the start URLs, the hosts the crawler may touch, which links to follow (list
pages), which URLs are story pages, the CSS selectors of title and body, the licence
recorded with every story, and the politeness limits. Specs are JSON or YAML files.

Known-bad specs rejected at load time (a `SpecError` naming the field): unreadable JSON/YAML,
missing or unknown fields, fields of the wrong type, bad regexes, start URLs that are not
http(s) or outside `allowed_hosts`, negative or non-finite limits.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from typing import Any
from urllib.parse import urldefrag, urljoin, urlsplit, urlunsplit

REQUIRED = ("name", "start_urls", "allowed_hosts", "follow", "story", "title", "body", "license")


class SpecError(ValueError):
    """The site spec is malformed; the message names the field."""


def selector_problem(selector: str) -> str | None:
    """Why soupsieve (BeautifulSoup's `select_one`, what the stories job extracts with) cannot
    compile a CSS selector, or None."""
    import soupsieve

    try:
        soupsieve.compile(selector)
    except Exception as exc:  # soupsieve's SelectorSyntaxError, or a TypeError/ValueError for odd input
        return f"{type(exc).__name__}: {str(exc).splitlines()[0]}"[:200]
    return None


@dataclasses.dataclass(frozen=True)
class SiteSpec:
    """One site. Regexes are searched (`re.search`) in the absolute, normalised URL."""

    name: str
    start_urls: tuple[str, ...]
    allowed_hosts: tuple[str, ...]
    follow: tuple[str, ...]
    story: str
    title: str
    body: str
    license: str
    delay_seconds: float = 1.0  # at most one request per second per host by default
    max_pages: int = 10000
    max_bytes: int = 2_000_000
    max_redirects: int = 5

    def __post_init__(self):
        for pattern in (*self.follow, self.story):
            try:
                re.compile(pattern)
            except (re.error, OverflowError, RecursionError, ValueError) as exc:
                raise SpecError(f"bad regex {pattern!r}: {exc}") from None
        for field, selector in (("title", self.title), ("body", self.body)):
            problem = selector_problem(selector)
            if problem:  # else every page became a bad_selector reject, with exit 0
                raise SpecError(f"bad CSS selector {field} {selector!r}: {problem}")
        if self.delay_seconds < 0 or self.max_pages < 1 or self.max_bytes < 1 or self.max_redirects < 0:
            raise SpecError("delay_seconds and max_redirects must be >= 0; max_pages and max_bytes >= 1")
        for url in self.start_urls:
            if not self.host_allowed(url):
                raise SpecError(f"start url {url!r} is not on an allowed host")

    def host_allowed(self, url: str) -> bool:
        parts = urlsplit(url)
        return parts.scheme in ("http", "https") and host_key(url) in self.allowed_hosts

    def is_story(self, url: str) -> bool:
        return self.host_allowed(url) and re.search(self.story, url) is not None

    def is_follow(self, url: str) -> bool:
        return self.host_allowed(url) and any(re.search(p, url) for p in self.follow)

    def wanted(self, url: str) -> bool:
        """Queue this link? Only list pages and story pages on allowed hosts are crawled."""
        return self.is_story(url) or self.is_follow(url)

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def host_key(url: str) -> str:
    """`host` or `host:port` as written in `allowed_hosts` (default ports dropped)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:
        return host
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return f"{host}:{port}" if port and port != default else host


def normalize_url(url: str, base: str | None = None) -> str | None:
    """Absolute URL without fragment, scheme and host lower-cased; None if not http(s)."""
    try:
        absolute = urljoin(base, url.strip()) if base else url.strip()
        absolute, _ = urldefrag(absolute)
        parts = urlsplit(absolute)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    path = parts.path or "/"
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


TEXT_FIELDS = ("name", "story", "title", "body", "license")
LIST_FIELDS = ("start_urls", "allowed_hosts", "follow")
NUMBER_FIELDS = {"delay_seconds": float, "max_pages": int, "max_bytes": int, "max_redirects": int}


def _strings(key: str, raw: Any) -> tuple[str, ...]:
    """A list field: one string or a non-empty list of strings."""
    values = [raw] if isinstance(raw, str) else raw
    if not isinstance(values, list) or not values or not all(isinstance(v, str) and v.strip() for v in values):
        raise SpecError(f"{key} must be a string or a non-empty list of strings, not {raw!r}"[:200])
    return tuple(values)


def _number(key: str, raw: Any, cast: type) -> float | int:
    """A number field (a numeric string is read too); `int` fields take whole numbers only."""
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        raise SpecError(f"{key} must be a number, not {raw!r}"[:200])
    try:
        number = float(raw)
    except (ValueError, OverflowError):
        raise SpecError(f"{key} must be a number, not {raw!r}"[:200]) from None
    if not math.isfinite(number):
        raise SpecError(f"{key} must be a finite number, not {raw!r}"[:200])
    if cast is int:
        if not number.is_integer():
            raise SpecError(f"{key} must be a whole number, not {raw!r}"[:200])
        return int(number)
    return number


def _start_url(url: str) -> str:
    normal = normalize_url(url)
    if normal is None:
        raise SpecError(f"start url {url!r} is not an absolute http(s) URL")
    return normal


def spec_from_dict(data: dict[str, Any]) -> SiteSpec:
    """Validate a parsed spec; lists become tuples, a single `follow` string a 1-tuple.
    A field of the wrong type is a SpecError naming it, never a TypeError later."""
    if not isinstance(data, dict):
        raise SpecError(f"a site spec must be a mapping, not {type(data).__name__}")
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise SpecError(f"site spec lacks {missing}")
    known = {f.name for f in dataclasses.fields(SiteSpec)}
    unknown = sorted(set(map(str, data)) - known)
    if unknown:
        raise SpecError(f"unknown site spec fields {unknown}")
    values = dict(data)
    for key in TEXT_FIELDS:
        if not isinstance(values[key], str) or not values[key].strip():
            raise SpecError(f"{key} must be a non-empty string, not {values[key]!r}"[:200])
    for key in LIST_FIELDS:
        values[key] = _strings(key, values[key])
    values["allowed_hosts"] = tuple(h.strip().lower() for h in values["allowed_hosts"])
    values["start_urls"] = tuple(_start_url(u) for u in values["start_urls"])
    for key, cast in NUMBER_FIELDS.items():
        if key in values:
            values[key] = _number(key, values[key], cast)
    return SiteSpec(**values)


def parse_spec(text: str, *, yaml_format: bool = False) -> SiteSpec:
    """Parse JSON (or YAML when `yaml_format`) text into a validated SiteSpec."""
    try:
        if yaml_format:
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except Exception as exc:  # both parsers raise their own error types
        # PyYAML's message spans lines (the context, a caret): one line, with where it is
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        first = getattr(exc, "problem", None) or (str(exc).splitlines() or [type(exc).__name__])[0]
        raise SpecError(f"unreadable site spec: {first}{where}".strip()) from exc
    return spec_from_dict(data)


def load_spec(path: str) -> SiteSpec:
    """Read a spec file; `.yaml`/`.yml` files are YAML, everything else JSON."""
    with open(path, encoding="utf-8-sig") as f:
        text = f.read()
    return parse_spec(text, yaml_format=path.lower().endswith((".yaml", ".yml")))
