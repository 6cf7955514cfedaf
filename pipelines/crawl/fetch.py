"""One polite HTTP fetch with `requests`: delay per host, retries with backoff, redirect and
size caps (SPEC "Crawl and clean"; LOT section 3 crawled public story sites).

A `Fetcher` is synchronous, so it never has more than one request in flight to any host;
before each request it waits until `delay_seconds` (or a longer robots.txt Crawl-delay)
have passed since the previous response from that host ended. 429, 5xx, timeouts and
connection errors are retried up to `max_tries` with exponential backoff
(`backoff_base * 2**(try-1)`, capped), honouring Retry-After (seconds or HTTP date); a
Retry-After above `max_retry_after` gives up at once rather than hammer the host.
Redirects are followed by hand (at most `max_redirects`), and every hop is first checked by
the caller's `gate` (allowed host, robots.txt, already fetched), so an off-host target is
never requested. Bodies over `max_bytes` and non-HTML content types are dropped with a reason.
Each request must end within `timeout_seconds` in all (a deadline, not only per socket read):
a server silent for 90% of it is a `timeout` (retried), one still sending when it is up is
`too_slow` (a drip; not retried). A non-2xx answer is `http_<status>`
whatever its content type, and a body whose Content-Encoding does not decode (or a gzip body
that ends before its end marker) is `bad_gzip`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import email.utils
import http.client
import json
import time
import zlib
from collections.abc import Callable

import requests
import urllib3
from urllib3.response import HTTPResponse

from annotators.stories.site_spec import host_key, normalize_url
from pipelines.crawl.stopping import DeadlineExceeded, deadline
from schemas.crawl import Page

REDIRECTS = (301, 302, 303, 307, 308)
DECODED = ("identity", *HTTPResponse.CONTENT_DECODERS)  # gzip, deflate (br, zstd when installed)
HTML_TYPES = ("text/html", "application/xhtml+xml")
RETRIED = ("timeout", "connection_error")  # never a page's error: they end as retries_exhausted
# A server silent for this share of --timeout is `timeout` (retried: it may be busy a moment); one
# still sending when the whole --timeout is up is `too_slow` (not retried: a drip drips again).
SILENT_SHARE = 0.9


@dataclasses.dataclass(frozen=True)
class FetchConfig:
    """Politeness and robustness settings (no paper values exist; common crawler practice)."""

    user_agent: str = dataclasses.field(
        default="storybench/0.1 (+https://github.com/storybench/storybench; research crawler)",
        metadata={"help": "User-Agent header; its product token picks the robots.txt group"},
    )
    timeout_seconds: float = dataclasses.field(
        default=30.0,
        metadata={"help": "seconds a request may take in all (headers and body), and the longest wait for any bytes"},
    )
    max_tries: int = dataclasses.field(
        default=4,
        metadata={  # one request and three retries
            "help": "requests per URL before giving up on 429, 5xx, timeouts and connection errors"
        },
    )
    backoff_base: float = dataclasses.field(
        default=1.0, metadata={"help": "seconds before the first retry; doubles every try"}
    )
    backoff_max: float = dataclasses.field(default=60.0, metadata={"help": "longest backoff between tries"})
    max_retry_after: float = dataclasses.field(
        default=300.0, metadata={"help": "a server asking (Retry-After) for a longer pause, in seconds, is left alone"}
    )


@dataclasses.dataclass(frozen=True)
class _Attempt:
    status: int | None
    headers: dict
    body: bytes = b""
    error: str | None = None
    detail: str = ""
    retry_after: str | None = None

    @property
    def retryable(self) -> bool:
        return self.error in RETRIED or (
            self.error is None and self.status is not None and (self.status == 429 or self.status >= 500)
        )


def retry_delay(
    attempt: int, retry_after: str | None, config: FetchConfig, now: dt.datetime | None = None
) -> float | None:
    """Seconds to wait after failed try number `attempt`, or None to give up (too long)."""
    backoff = min(config.backoff_max, config.backoff_base * 2 ** (attempt - 1))
    asked = parse_retry_after(retry_after, now or dt.datetime.now(dt.UTC))
    if asked is None:
        return backoff
    if asked > config.max_retry_after:
        return None
    return max(backoff, asked)


def parse_retry_after(value: str | None, now: dt.datetime) -> float | None:
    """Retry-After as seconds: delta-seconds or an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, (when - now).total_seconds())


def _utc_now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _raw_chunks(resp: requests.Response):
    """The body's bytes as served (not decoded), with urllib3's errors as requests raises them
    from iter_content (so the caller's handling of a reset or a stalled read is the same)."""
    try:
        yield from resp.raw.stream(64 * 1024, decode_content=False)
    except urllib3.exceptions.ProtocolError as exc:
        raise requests.exceptions.ChunkedEncodingError(exc) from None
    except urllib3.exceptions.ReadTimeoutError as exc:
        raise requests.exceptions.ConnectionError(exc) from None
    except urllib3.exceptions.SSLError as exc:
        raise requests.exceptions.SSLError(exc) from None


class Fetcher:
    """Fetch URLs one at a time; `sleep`/`clock`/`now` are injectable for tests."""

    def __init__(
        self,
        config: FetchConfig,
        *,
        max_bytes: int,
        max_redirects: int = 5,
        session: requests.Session | None = None,
        sleep: Callable = time.sleep,
        clock: Callable = time.monotonic,
        now: Callable = _utc_now,
    ):
        self.config, self.max_bytes, self.max_redirects = config, max_bytes, max_redirects
        self.session = session or requests.Session()
        self.session.headers.update(
            {"User-Agent": config.user_agent, "Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1"}
        )
        self._sleep, self._clock, self.now = sleep, clock, now
        self._last_end: dict[str, float] = {}
        self._delay: dict[str, float] = {}
        self.requests_made = 0

    def set_delay(self, host: str, seconds: float) -> None:
        self._delay[host] = max(0.0, seconds)

    def _wait_turn(self, host: str) -> None:
        last = self._last_end.get(host)
        if last is not None:
            remaining = last + self._delay.get(host, 0.0) - self._clock()
            if remaining > 0:
                self._sleep(remaining)

    def _attempt(self, url: str, html_only: bool) -> _Attempt:
        """One GET (no redirects followed) that must end within `timeout_seconds` in all."""
        host = host_key(url)
        self._wait_turn(host)
        self.requests_made += 1
        try:
            with deadline(self.config.timeout_seconds):
                return self._exchange(url, html_only)
        except DeadlineExceeded:
            return _Attempt(
                None,
                {},
                error="too_slow",
                detail=(f"no whole response within {self.config.timeout_seconds:g} s (--timeout)"),
            )
        finally:
            self._last_end[host] = self._clock()

    def _exchange(self, url: str, html_only: bool) -> _Attempt:
        """The GET itself, reading the body only when it will be kept (a 2xx answer)."""
        try:
            with self.session.get(
                url, stream=True, allow_redirects=False, timeout=self.config.timeout_seconds * SILENT_SHARE
            ) as resp:
                headers = {k.lower(): v for k, v in sorted(resp.headers.items())}
                status = resp.status_code
                if status in REDIRECTS or status == 429 or status >= 500:
                    return _Attempt(status, headers, retry_after=headers.get("retry-after"))
                if not 200 <= status < 300:
                    return _Attempt(status, headers)  # http_<status> whatever its content type
                return self._read_body(resp, headers, html_only)
        except requests.Timeout as exc:
            return _Attempt(None, {}, error="timeout", detail=str(exc)[:300])
        except requests.RequestException as exc:
            return _Attempt(None, {}, error="connection_error", detail=f"{type(exc).__name__}: {exc}"[:300])
        except (ValueError, UnicodeError, LookupError, http.client.HTTPException) as exc:
            # what `requests` lets through from an answer it cannot parse (e.g. a Location of `http://[::1`)
            return _Attempt(None, {}, error="bad_response", detail=f"{type(exc).__name__}: {exc}"[:300])

    def _read_body(self, resp: requests.Response, headers: dict, html_only: bool) -> _Attempt:
        status = resp.status_code
        media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if html_only and media and media not in HTML_TYPES:
            return _Attempt(status, headers, error="not_html", detail=media)
        encodings = [e.strip() for e in headers.get("content-encoding", "").lower().split(",") if e.strip()]
        unknown = [e for e in encodings if e not in DECODED]
        if unknown:
            return _Attempt(
                status,
                headers,
                error="bad_gzip",
                detail=f"Content-Encoding {', '.join(unknown)} is not one the crawler decodes",
            )
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            return _Attempt(status, headers, error="too_large", detail=f"content-length {declared}")
        if encodings in (["gzip"], ["x-gzip"]):
            return self._gunzip(resp, status, headers, html_only)
        body = bytearray()
        try:
            for chunk in resp.iter_content(64 * 1024):  # decoded; urllib3 inflates a chunk at a time
                body.extend(chunk)
                if len(body) > self.max_bytes:
                    return _Attempt(status, headers, error="too_large", detail=f"over {self.max_bytes} bytes")
        except requests.exceptions.ContentDecodingError as exc:
            encoding = headers.get("content-encoding", "")
            return _Attempt(
                status, headers, error="bad_gzip", detail=f"Content-Encoding {encoding} does not decode: {exc}"[:300]
            )
        if html_only and not media and b"<html" not in bytes(body[:2048]).lower():
            return _Attempt(status, headers, error="not_html", detail="no content-type, no <html>")
        return _Attempt(status, headers, bytes(body))

    def _gunzip(self, resp: requests.Response, status: int, headers: dict, html_only: bool) -> _Attempt:
        """A gzip body inflated here, up to max_bytes, and checked to its end: urllib3's decoder
        (iter_content) returns what it inflated when a stream ends without its end marker,
        so a body cut short kept a page's first part as if whole. Members of a multi-member
        body follow each other."""
        body, read, d = bytearray(), 0, zlib.decompressobj(16 + zlib.MAX_WBITS)
        for raw in _raw_chunks(resp):
            read += len(raw)
            data = raw
            while data:
                try:
                    body.extend(d.decompress(data, self.max_bytes + 1 - len(body)))
                except zlib.error as exc:
                    detail = f"Content-Encoding gzip does not decode: {exc}"
                    return _Attempt(status, headers, error="bad_gzip", detail=detail[:300])
                if len(body) > self.max_bytes:
                    return _Attempt(status, headers, error="too_large", detail=f"over {self.max_bytes} bytes")
                if d.unconsumed_tail:
                    data = d.unconsumed_tail
                elif d.eof and d.unused_data.strip(b"\x00"):
                    data, d = d.unused_data, zlib.decompressobj(16 + zlib.MAX_WBITS)
                else:
                    data = b""
        if read and not d.eof:
            detail = f"Content-Encoding gzip: the stream ends early, after {read} bytes ({len(body)} bytes inflated)"
            return _Attempt(status, headers, error="bad_gzip", detail=detail)
        media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if html_only and not media and b"<html" not in bytes(body[:2048]).lower():
            return _Attempt(status, headers, error="not_html", detail="no content-type, no <html>")
        return _Attempt(status, headers, bytes(body))

    def _with_retries(self, url: str, html_only: bool) -> tuple[_Attempt, int]:
        for attempt in range(1, self.config.max_tries + 1):
            result = self._attempt(url, html_only)
            if not result.retryable:
                return result, attempt
            why = result.error or f"http_{result.status}"
            if attempt == self.config.max_tries:
                return dataclasses.replace(
                    result, error="retries_exhausted", detail=f"{why} on all {attempt} tries"
                ), attempt
            wait = retry_delay(attempt, result.retry_after, self.config)
            if wait is None:
                return dataclasses.replace(
                    result, error="retry_after_too_long", detail=f"{why}, Retry-After {result.retry_after}"
                ), attempt
            self._sleep(wait)
        raise AssertionError("unreachable")

    def fetch(self, url: str, *, gate: Callable[[str], str | None] = lambda u: None, html_only: bool = True) -> Page:
        """Fetch `url`, following allowed redirects; `gate(hop)` returns a refusal reason or None.
        The result is a page-cache row (schemas.crawl.Page) without its site, kind, referrer and
        depth, which the crawler fills in; `error` is a short reason code, None when usable."""
        current, hops, tries = url, [], 0
        while True:
            result, n = self._with_retries(current, html_only)
            tries += n
            location = result.headers.get("location")
            if result.error or result.status not in REDIRECTS or not location:
                return self._result(url, current, result, tries, hops)
            target = normalize_url(location, base=current)
            refusal = "bad_redirect" if target is None else gate(target)
            if refusal is None and len(hops) >= self.max_redirects:
                refusal = "too_many_redirects"
            if refusal:
                failed = dataclasses.replace(result, error=refusal, detail=f"redirect to {location}")
                return self._result(url, current, failed, tries, hops)
            hops.append(target)
            current = target

    def _result(self, url, final, attempt: _Attempt, tries: int, hops: list) -> Page:
        error, detail = attempt.error, attempt.detail
        if error is None and attempt.status is not None and not 200 <= attempt.status < 300:
            error, detail = f"http_{attempt.status}", f"status {attempt.status}"
        return Page(
            site="",
            url=url,
            final_url=final,
            kind="",
            status=attempt.status,
            headers=json.dumps(attempt.headers, sort_keys=True, ensure_ascii=False),
            body=attempt.body,
            fetched_at=self.now(),
            error=error,
            detail=detail,
            attempts=tries,
            redirects=tuple(hops),
        )
