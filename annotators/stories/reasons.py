"""Reject reasons of the crawl and stories jobs (shared ones: `annotators.core.reasons.SHARED`).

The crawl (`pipelines.crawl`) records a page it could not use with one of `CRAWL_REASONS`;
the stories job reads the page cache and passes those codes on to its own rejects (a failed
page is not a story), then adds the reasons of extraction, cleaning and deduplication
(LOT section 3 "Story Filtering"; SPEC "Crawl and clean").
"""

from __future__ import annotations

REASONS: dict[str, str] = {
    # the crawl (pipelines.crawl): why a URL gave no usable page
    "http_status": "the server answered with an HTTP error status, whatever the content type (the code "
    "is http_<status>: http_404 not found, http_410 gone, http_403 forbidden, ...)",
    "robots_disallowed": "robots.txt disallows the URL (or a redirect target), so it was never requested",
    "robots_unavailable": "robots.txt answered 5xx or was unreachable, which disallows the whole host "
    "(RFC 9309 2.3.1), so the URL was never requested",
    "crawl_delay_too_long": "the host's robots.txt asks a Crawl-delay over --max_retry_after, so none of "
    "its pages is requested",
    "too_large": "the body is larger than the site spec's max_bytes (declared or read)",
    "not_html": "the content type is not HTML (or, with none given, the body has no <html>)",
    "off_host_redirect": "a redirect points to a host outside the spec's allowed_hosts",
    "redirect_to_fetched": "a redirect points to a URL already fetched under another key",
    "bad_redirect": "a redirect's Location is not an http(s) URL",
    "too_many_redirects": "more redirects than the site spec's max_redirects",
    "retries_exhausted": "429, 5xx, timeout or connection errors on every try (max_tries)",
    "retry_after_too_long": "the server asked (Retry-After) for a longer pause than max_retry_after",
    "too_slow": "the response did not arrive whole within --timeout (the server sends, but too slowly: not retried)",
    "bad_gzip": "the body's Content-Encoding does not decode: a broken gzip or deflate stream, or "
    "an encoding the crawler cannot decode",
    "bad_response": "the server's answer cannot be parsed (e.g. a redirect whose Location is not a URL)",
    # the stories job: pages and dumps -> raw stories
    "not_story_page": "a cached page that is not a story page (robots.txt, a list page, a URL "
    "outside the spec's story pattern)",
    "bad_selector": "the site spec's CSS selector does not parse",
    "body_not_found": "no element of the page matches the site spec's body selector",
    "empty_body": "the body element holds no text",
    # cleaning and filtering (LOT section 3)
    "mojibake": "most characters are U+0080-U+00FF: Chinese bytes read with a wrong charset",
    "too_short": "fewer words than --min-words (LOT: 50)",
    "too_long": "more words than --max-words (with --paper-length-filter, LOT's 500; no limit by default)",
}

CRAWL_REASONS: tuple[str, ...] = (
    "http_status",
    "robots_disallowed",
    "robots_unavailable",
    "too_large",
    "not_html",
    "off_host_redirect",
    "redirect_to_fetched",
    "bad_redirect",
    "too_many_redirects",
    "retries_exhausted",
    "retry_after_too_long",
    "too_slow",
    "bad_gzip",
    "bad_response",
    "crawl_delay_too_long",
    "internal_error",
)

JOB_REASONS: tuple[str, ...] = CRAWL_REASONS + (
    # reading the page cache and the dumps
    "unreadable_file",
    "truncated_file",
    "line_too_long",
    "undecodable",
    "blank_line",
    "malformed_json",
    "not_an_object",
    "missing_field",
    "utf16",
    "binary_file",
    "encoding",
    "not_utf8",
    "bad_field_type",
    "empty_file",
    "not_story_page",
    "bad_selector",
    "body_not_found",
    "empty_body",
    "mojibake",
    "empty_after_cleaning",
    "not_chinese",
    "too_short",
    "too_long",
    "exact_duplicate",
    "near_duplicate",
    "duplicate_id",
    "internal_error",
)
