"""The crawl loop: breadth-first over one site spec, resumable from a page cache.

LOT's stories came from crawling public story sites (paper section 3 and appendix). The
loop starts at the spec's start URLs, fetches robots.txt of each host first (RFC 9309:
4xx allows all, 5xx/unreachable fetches nothing), and queues only links that are list
pages (`follow`) or story pages (`story`) on allowed hosts, each URL once. A URL already in
the cache is never requested again; cached list pages are re-read from their stored bodies
so a resumed crawl rebuilds the same frontier. URLs robots.txt disallows are recorded (with
`error="robots_disallowed"`, `robots_unavailable` when robots.txt itself failed, or
`crawl_delay_too_long` when its Crawl-delay is over `max_retry_after`; no request made).
`max_pages` bounds the pages requested, counted over the whole cache and excluding
robots.txt. One Fetcher and one thread: never more than one request in flight per host.
An exception of the fetch code itself (a bug) is recorded as an `internal_error` row and
the crawl goes on.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import logging
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

from annotators.stories.html_extract import extract_links
from annotators.stories.site_spec import SiteSpec, host_key
from annotators.text.charset import decode_bytes
from pipelines.crawl.fetch import Fetcher
from pipelines.crawl.robots import Robots, agent_token, robots_for_status
from schemas.crawl import Page

LOG = logging.getLogger("storybench.crawl")


@dataclasses.dataclass
class Progress:
    """Running counts shown while crawling and written to stats.json."""

    fetched: int = 0  # pages requested in this run (robots.txt included)
    cached: int = 0  # pages taken from the cache instead
    failed: int = 0  # rows of this run with an error
    queued: int = 0
    requests: int = 0  # HTTP requests in this run, retries and redirect hops included
    internal_errors: int = 0  # rows of this run that a bug, not the site, failed (internal_error)
    stopped: str = "done"  # done | max_pages | interrupted

    def line(self) -> str:
        return (
            f"fetched {self.fetched}, cached {self.cached}, failed {self.failed}, "
            f"queued {self.queued}, requests {self.requests}"
        )


def robots_url(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/robots.txt"


def robots_refusal(robots: Robots, url: str) -> str | None:
    """`robots_unavailable` when robots.txt failed (5xx/unreachable: RFC 9309 disallows all),
    `robots_disallowed` when its rules forbid `url`, None when it may be requested."""
    if robots.allowed(url):
        return None
    if robots.disallow_all:
        return "crawl_delay_too_long" if robots.crawl_delay else "robots_unavailable"
    return "robots_disallowed"


class Crawler:
    """Crawl `spec` with `fetcher`; `on_page(page)` persists every new row as it is made."""

    def __init__(
        self,
        spec: SiteSpec,
        fetcher: Fetcher,
        cached: Iterable[Page],
        on_page: Callable[[Page], None],
        on_progress: Callable[[Progress], None] = lambda p: None,
    ):
        self.spec, self.fetcher = spec, fetcher
        self.on_page, self.on_progress = on_page, on_progress
        self.cache: dict[str, Page] = {p.url: p for p in cached}
        self.done_urls: set[str] = set()  # requested or final URLs: never requested again
        for page in self.cache.values():
            self._mark_done(page)
        self.requested_pages = sum(1 for p in self.cache.values() if p.requested and p.kind != "robots")
        self.robots: dict[str, Robots] = {}
        self.agent = agent_token(fetcher.config.user_agent)
        self.progress = Progress()
        self.current = ""  # the URL being fetched, for progress lines

    def _mark_done(self, page: Page) -> None:
        if page.requested:
            self.done_urls.update((page.url, page.final_url, *page.redirects))

    def _record(self, page: Page) -> Page:
        self.cache[page.url] = page
        self._mark_done(page)
        self.on_page(page)
        self.progress.fetched += page.requested
        self.progress.failed += page.error is not None
        self.progress.internal_errors += page.error == "internal_error"
        self.progress.requests = self.fetcher.requests_made
        return page

    def _page(self, fetched: Page, kind: str, referrer: str, depth: int) -> Page:
        """A fetched page as this crawl's cache row: its site, kind, referrer and depth."""
        return dataclasses.replace(fetched, site=self.spec.name, kind=kind, referrer=referrer, depth=depth)

    def _unfetched(
        self, url: str, kind: str, referrer: str, depth: int, *, error: str, detail: str, attempts: int
    ) -> Page:
        """The cache row of a page with no response (refused by robots.txt, or a fetch bug)."""
        return Page(
            self.spec.name,
            url,
            url,
            kind,
            None,
            "{}",
            b"",
            self.fetcher.now(),
            error,
            detail,
            attempts,
            referrer=referrer,
            depth=depth,
        )

    def robots_for(self, url: str) -> Robots:
        """The host's robots rules, from the cache or fetched once (html_only=False)."""
        host = host_key(url)
        if host not in self.robots:
            r_url = robots_url(url)
            page = self.cache.get(r_url)
            if page is None:
                self.fetcher.set_delay(host, self.spec.delay_seconds)
                result = self.fetcher.fetch(r_url, gate=self._host_gate, html_only=False)
                page = self._record(self._page(result, "robots", "", 0))
            rules = robots_for_status(page.status, page.body, self.agent, page.error or "")
            if (rules.crawl_delay or 0.0) > self.fetcher.config.max_retry_after:  # too slow to crawl at all
                rules = dataclasses.replace(
                    rules,
                    disallow_all=True,
                    note=(f"robots.txt asks a Crawl-delay of {rules.crawl_delay:g} s, over --max_retry_after"),
                )
            self.robots[host] = rules
            self.fetcher.set_delay(host, max(self.spec.delay_seconds, rules.crawl_delay or 0.0))
        return self.robots[host]

    def _host_gate(self, url: str) -> str | None:
        return None if self.spec.host_allowed(url) else "off_host_redirect"

    def gate(self, url: str) -> str | None:
        """Why `url` (a redirect hop) must not be requested, or None."""
        refusal = self._host_gate(url)
        if refusal is None:
            refusal = robots_refusal(self.robots_for(url), url)
        if refusal is None and url in self.done_urls:
            refusal = "redirect_to_fetched"
        return refusal

    def _visit(self, url: str, referrer: str, depth: int) -> Page | None:
        """The cached or newly made row for `url`; None when max_pages stops the crawl."""
        if url in self.cache:
            self.progress.cached += 1
            return self.cache[url]
        kind = "story" if self.spec.is_story(url) else "list"
        robots = self.robots_for(url)
        refusal = robots_refusal(robots, url)
        if refusal:
            why = robots.note or "disallowed by robots.txt"
            return self._record(self._unfetched(url, kind, referrer, depth, error=refusal, detail=why, attempts=0))
        if self.requested_pages >= self.spec.max_pages:
            self.progress.stopped = "max_pages"
            return None
        self.requested_pages += 1
        self.current = url
        try:
            result = self.fetcher.fetch(url, gate=self.gate)
        except Exception as exc:  # a bug, not the site: recorded (internal_error), the crawl goes on
            detail = f"{type(exc).__name__}: {exc}"[:300]
            return self._record(
                self._unfetched(url, kind, referrer, depth, error="internal_error", detail=detail, attempts=1)
            )
        finally:
            self.current = ""
        return self._record(self._page(result, kind, referrer, depth))

    def _links(self, page: Page) -> list[str]:
        if not page.ok or not page.body or not self.spec.is_follow(page.final_url):
            return []
        try:  # a list page with a few stray bytes still gives its links, as the stories job reads it
            decoded = decode_bytes(page.body, json.loads(page.headers).get("content-type"), replace=True)
            if decoded is None:
                LOG.warning("no links read from %s: no charset decodes it", page.url)
                return []
            return extract_links(decoded.text, page.final_url)
        except Exception as exc:  # a bug in link extraction: the page stays cached, its links are logged lost
            LOG.warning("no links read from %s: %s: %s", page.url, type(exc).__name__, exc)
            return []

    def run(self) -> Progress:
        """Crawl until the frontier is empty or `max_pages` pages have been requested."""
        queue = collections.deque((u, "", 0) for u in self.spec.start_urls)
        seen = set(self.spec.start_urls)
        while queue:
            url, referrer, depth = queue.popleft()
            self.progress.queued = len(queue)
            if url in self.done_urls and url not in self.cache:
                continue  # reached earlier as a redirect target: fetched under another key
            page = self._visit(url, referrer, depth)
            if page is None:
                break
            for link in self._links(page):
                if link not in seen and self.spec.wanted(link):
                    seen.add(link)
                    queue.append((link, page.final_url, depth + 1))
            self.progress.queued = len(queue)
            self.on_progress(self.progress)
        return self.progress
