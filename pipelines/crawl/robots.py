"""robots.txt rules (RFC 9309), so the crawler never requests a disallowed URL.

The group whose `User-agent` equals our product token (case-insensitive, e.g.
"storybench" for "storybench/0.1 (...)") wins; otherwise the `*` group applies. Within a
group the longest matching rule wins and `Allow` wins ties; `*` matches any run of
characters and a trailing `$` anchors the end. `Crawl-delay` of the chosen group is kept so
the crawler can wait longer than the spec.

Fetch outcomes (RFC 9309 section 2.3.1): 2xx -> parse; 4xx (e.g. no robots.txt) -> allow
all; 5xx, unreachable or unreadable (too slow, too large, a body that does not decode) ->
disallow all (the crawler records why and fetches nothing).
Known-bad inputs guarded against: BOM, CRLF, comments, rules before any User-agent line,
undecodable bytes, huge files (only the first 500 KiB are read, as RFC 9309 allows).
"""

from __future__ import annotations

import dataclasses
import re
from typing import NamedTuple
from urllib.parse import unquote, urlsplit

MAX_ROBOTS_BYTES = 500 * 1024  # RFC 9309 section 2.5: parse at least the first 500 KiB


@dataclasses.dataclass(frozen=True)
class Rule:
    allow: bool
    path: str

    def matches(self, target: str) -> bool:
        return _pattern(self.path).match(target) is not None


@dataclasses.dataclass(frozen=True)
class Robots:
    """The rules that apply to our user agent on one host."""

    rules: tuple[Rule, ...] = ()
    crawl_delay: float | None = None
    disallow_all: bool = False
    note: str = ""

    def allowed(self, url: str) -> bool:
        if self.disallow_all:
            return False
        target = _target(url)
        if target == "/robots.txt":
            return True
        best: Rule | None = None
        for rule in self.rules:
            if not rule.path or not rule.matches(target):
                continue
            if (
                best is None
                or len(rule.path) > len(best.path)
                or (len(rule.path) == len(best.path) and rule.allow and not best.allow)
            ):
                best = rule
        return best is None or best.allow


def _target(url: str) -> str:
    parts = urlsplit(url)
    path = parts.path or "/"
    return f"{path}?{parts.query}" if parts.query else path


def _pattern(path: str) -> re.Pattern:
    anchored = path.endswith("$")
    body = path[:-1] if anchored else path
    regex = ".*".join(re.escape(unquote(piece)) for piece in body.split("*"))
    return re.compile(regex + ("$" if anchored else ""))


class Group(NamedTuple):
    """One robots.txt group: the user agents it names and its (field, value) lines."""

    agents: list[str]
    lines: list[tuple[str, str]]


def _groups(text: str) -> list[Group]:
    """The file's groups in order: consecutive User-agent lines share a group."""
    groups: list[Group] = []
    last_was_agent = False
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if ":" not in line:
            continue
        field, value = (s.strip() for s in line.split(":", 1))
        field = field.lower()
        if field == "user-agent":
            if not last_was_agent:
                groups.append(Group([], []))
            groups[-1].agents.append(value.lower())
            last_was_agent = True
        elif field in ("allow", "disallow", "crawl-delay") and groups:
            groups[-1].lines.append((field, value))
            last_was_agent = False
    return groups


def parse_robots(data: bytes | str, agent: str) -> Robots:
    """Rules for product token `agent` from robots.txt content."""
    if isinstance(data, bytes):
        data = data[:MAX_ROBOTS_BYTES].decode("utf-8", errors="replace")
    text = data.lstrip("\ufeff")
    agent = agent.lower()
    groups = _groups(text)
    chosen = [g.lines for g in groups if agent in g.agents]
    if not chosen:
        chosen = [g.lines for g in groups if "*" in g.agents]
    rules: list[Rule] = []
    delay: float | None = None
    for lines in chosen:
        for field, value in lines:
            if field == "crawl-delay":
                try:
                    delay = max(delay or 0.0, float(value))
                except ValueError:
                    continue
            else:
                rules.append(Rule(field == "allow", value))
    return Robots(tuple(rules), delay)


def robots_for_status(status: int | None, body: bytes, agent: str, error: str = "") -> Robots:
    """RFC 9309 2.3.1: what a robots.txt fetch outcome means for the crawl."""
    if status is not None and 200 <= status < 300 and not error:
        return parse_robots(body, agent)
    if status is not None and 400 <= status < 500:
        return Robots(note=f"robots.txt status {status}: all allowed")
    answered = status is not None and not 200 <= status < 300
    why = (f"status {status}" if answered else error) or "unreachable"
    return Robots(disallow_all=True, note=f"robots.txt {why}: nothing fetched")


def agent_token(user_agent: str) -> str:
    """The product token robots.txt groups name: `storybench` of `storybench/0.1 (+url)`."""
    token = re.split(r"[/\s]", user_agent.strip(), maxsplit=1)[0]
    return token or "*"
