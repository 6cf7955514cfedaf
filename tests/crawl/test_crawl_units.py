"""Unit tests of the crawl annotators: site specs, robots.txt, retry timing, charsets, HTML."""

from __future__ import annotations

import datetime as dt
import json
import pathlib

import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotators.core.outcome import Drop
from annotators.stories.html_extract import extract_links, extract_story
from annotators.stories.site_spec import SpecError, host_key, load_spec, normalize_url, parse_spec
from annotators.text.charset import COMMON, decode_bytes, latin_share, meta_charset
from pipelines.crawl.fetch import FetchConfig, Fetcher, parse_retry_after, retry_delay
from pipelines.crawl.robots import agent_token, parse_robots, robots_for_status
from tests.fixtures.site.server import SiteServer

SAMPLE_SPECS = sorted((pathlib.Path(__file__).resolve().parents[2] / "samples" / "sites").glob("*.*"))

SPEC = {
    "name": "fables",
    "start_urls": ["http://Example.org:80/index.html#top"],
    "allowed_hosts": ["example.org"],
    "follow": r"/list/\d+\.html$",
    "story": r"/story/\d+\.html$",
    "title": "h1",
    "body": "#content",
    "license": "CC BY-SA 4.0",
}


# ------------------------------------------------------------------ site specs
def test_spec_normalises_urls_and_matches_pages():
    spec = parse_spec(json.dumps(SPEC))
    assert spec.start_urls == ("http://example.org:80/index.html",)
    assert spec.follow == (r"/list/\d+\.html$",) and spec.delay_seconds == 1.0 and spec.max_redirects == 5
    assert spec.is_story("http://example.org/story/12.html")
    assert not spec.is_story("http://evil.example/story/12.html")
    assert spec.is_follow("https://example.org/list/2.html") and not spec.wanted("http://example.org/about")


def test_spec_yaml_and_errors():
    yaml_text = "\n".join(f"{k}: {json.dumps(v)}" for k, v in SPEC.items())
    assert parse_spec(yaml_text, yaml_format=True).name == "fables"
    with pytest.raises(SpecError, match="lacks"):
        parse_spec(json.dumps({k: v for k, v in SPEC.items() if k != "body"}))
    with pytest.raises(SpecError, match="bad regex"):
        parse_spec(json.dumps({**SPEC, "story": "(unclosed"}))
    with pytest.raises(SpecError, match="not on an allowed host"):
        parse_spec(json.dumps({**SPEC, "allowed_hosts": ["other.org"]}))
    with pytest.raises(SpecError, match="unknown"):
        parse_spec(json.dumps({**SPEC, "delay": 3}))
    with pytest.raises(SpecError, match="unreadable"):
        parse_spec("{not json")


@pytest.mark.parametrize("path", SAMPLE_SPECS, ids=lambda p: p.name)
def test_shipped_example_specs_load(path):
    spec = load_spec(str(path))
    assert spec.name == path.stem and spec.is_follow(spec.start_urls[0]) and spec.license


@pytest.mark.parametrize(
    "url,base,expected",
    [
        ("../b.html#x", "http://h.org/a/c.html", "http://h.org/b.html"),
        ("HTTP://H.org", None, "http://h.org/"),
        ("mailto:a@b.org", "http://h.org/", None),
        ("javascript:void(0)", "http://h.org/", None),
        ("/p?q=1#f", "https://h.org:8443/x", "https://h.org:8443/p?q=1"),
    ],
)
def test_normalize_url(url, base, expected):
    assert normalize_url(url, base) == expected


def test_host_key_drops_default_ports():
    assert host_key("http://a.org:80/x") == "a.org"
    assert host_key("https://a.org:443/") == "a.org"
    assert host_key("http://127.0.0.1:8000/") == "127.0.0.1:8000"


# ------------------------------------------------------------------ robots.txt
ROBOTS = """\ufeff# comments and odd spacing are fine
User-agent: *
Disallow: /private/
Allow: /private/open.html
Disallow: /*.pdf$
Crawl-delay: 2

User-agent: storybench
User-agent: other
Disallow: /only-us/
"""


def test_robots_star_group_longest_match_and_wildcards():
    robots = parse_robots(ROBOTS.encode("utf-8"), "somebot")
    assert not robots.allowed("http://h/private/x.html")
    assert robots.allowed("http://h/private/open.html")
    assert not robots.allowed("http://h/files/book.pdf") and robots.allowed("http://h/files/book.pdf?x=1")
    assert robots.allowed("http://h/robots.txt") and robots.crawl_delay == 2.0


def test_robots_own_group_replaces_star_group():
    robots = parse_robots(ROBOTS, agent_token("storybench/0.1 (+https://x)"))
    assert not robots.allowed("http://h/only-us/a") and robots.allowed("http://h/private/x.html")
    assert robots.crawl_delay is None


def test_robots_fetch_outcomes():
    assert robots_for_status(404, b"", "a").allowed("http://h/anything")
    blocked = robots_for_status(503, b"", "a")
    assert not blocked.allowed("http://h/index.html") and "nothing fetched" in blocked.note
    assert not robots_for_status(None, b"", "a", "connection_error").allowed("http://h/")


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="abc/._-?=", max_size=20))
def test_robots_disallow_root_blocks_every_path_but_robots_txt(path):
    robots = parse_robots("User-agent: *\nDisallow: /\n", "x")
    url = "http://h/" + path
    assert robots.allowed(url) == (url.split("?")[0] == "http://h/robots.txt")


# ------------------------------------------------------------------ retry timing
NOW = dt.datetime(2024, 5, 1, 12, 0, 0, tzinfo=dt.UTC)


def test_retry_delay_backoff_and_retry_after():
    config = FetchConfig(backoff_base=0.5, backoff_max=3.0, max_retry_after=60)
    assert [retry_delay(a, None, config, NOW) for a in (1, 2, 3, 4)] == [0.5, 1.0, 2.0, 3.0]
    assert retry_delay(1, "7", config, NOW) == 7.0
    assert retry_delay(3, "1", config, NOW) == 2.0  # backoff is longer than what was asked
    assert retry_delay(1, "Wed, 01 May 2024 12:00:30 GMT", config, NOW) == 30.0
    assert retry_delay(1, "3600", config, NOW) is None  # too long: give up, do not hammer
    assert parse_retry_after("soon", NOW) is None and parse_retry_after("", NOW) is None


def test_fetcher_retries_redirect_cap_and_size_cap():
    sleeps: list[float] = []
    with SiteServer() as site:
        fetcher = Fetcher(
            FetchConfig(backoff_base=0.01, max_tries=4), max_bytes=500, max_redirects=3, sleep=sleeps.append
        )
        flaky = fetcher.fetch(f"{site.base}/stories/story-08.html")
        assert (flaky.status, flaky.error, flaky.attempts) == (200, "too_large", 3)
        assert flaky.detail.startswith("content-length")
        assert sleeps == [1.0, 0.02]  # Retry-After: 1, then backoff 0.01 * 2
        busy = fetcher.fetch(f"{site.base}/busy")
        assert (busy.status, busy.error, busy.attempts) == (429, "retry_after_too_long", 1)
        loop = fetcher.fetch(f"{site.base}/loop/0")
        assert (loop.error, loop.redirects) == ("too_many_redirects", tuple(f"{site.base}/loop/{i}" for i in (1, 2, 3)))
        refused = fetcher.fetch(f"{site.base}/loop/0", gate=lambda u: "off_host_redirect")
        assert (refused.error, refused.final_url, refused.attempts) == ("off_host_redirect", f"{site.base}/loop/0", 1)
        assert site.paths().count("/loop/4") == 0 and site.paths().count("/loop/1") == 1


# ------------------------------------------------------------------ charsets
STORY = "从前有一个小村子，村子里住着一位老渔夫。他每天早上都出海打鱼，晚上回家的时候总是很开心。"
TRAD = "從前有一個小村子，村子裡住著一位老漁夫。他每天早上都出海打魚，晚上回家的時候總是很開心。"


@pytest.mark.parametrize(
    "body,content_type,encoding,evidence",
    [
        (STORY.encode("utf-8"), "text/html; charset=UTF-8", "utf-8", "http"),
        (b'<meta charset="gbk">' + STORY.encode("gbk"), "text/html", "gb18030", "meta"),
        (STORY.encode("gbk"), None, "gb18030", "detected"),
        (TRAD.encode("big5"), "text/html", "big5hkscs", "detected"),
        (STORY.encode("gbk"), "text/html; charset=utf-8", "gb18030", "detected"),  # a lying header is ignored
        (b"\xef\xbb\xbf" + STORY.encode("utf-8"), "text/html; charset=gbk", "utf-8-sig", "bom"),
        # a Latin header is weak evidence: a <meta> or detection giving plausible Chinese wins
        (b"<meta charset='gbk'>" + STORY.encode("gbk"), "text/html; charset=ISO-8859-1", "gb18030", "meta"),
        (STORY.encode("gbk"), "text/html; charset=windows-1252", "gb18030", "detected"),
        (TRAD.encode("big5"), "text/html; charset=latin1", "big5hkscs", "detected"),
        (STORY.encode("utf-8"), "text/html; charset=us-ascii", "utf-8", "detected"),
        (b'<meta charset="iso-8859-1">' + STORY.encode("gbk"), "text/html", "gb18030", "detected"),
    ],
)
def test_decode_bytes_evidence_order(body, content_type, encoding, evidence):
    decoded = decode_bytes(body, content_type)
    assert (decoded.encoding, decoded.evidence) == (encoding, evidence)
    assert decoded.text.endswith(TRAD if encoding.startswith("big5") else STORY)


def test_a_latin_declaration_stands_for_latin_text():
    french = "<p>Un été à Paris : café crème, déjà fini. Ça va très bien.</p>"
    for body, content_type in [
        (french.encode("latin-1"), "text/html; charset=ISO-8859-1"),
        (b"<meta charset='gbk'>" + french.encode("latin-1"), "text/html; charset=latin-1"),
        (b"<p>plain ASCII</p>", "text/html; charset=iso-8859-1"),
    ]:
        decoded = decode_bytes(body, content_type)
        assert (decoded.encoding, decoded.evidence) == ("cp1252", "http")
        assert decoded.text == body.decode("latin-1")
    # GBK of rare characters only: GB18030 decodes strictly but is not plausible prose, so Latin stands
    rare = "魑魅魍魉饕餮".encode("gbk")
    assert decode_bytes(rare, "text/html; charset=ISO-8859-1") == decode_bytes(rare, "text/html; charset=cp1252")
    assert decode_bytes(rare, "text/html; charset=ISO-8859-1").encoding == "cp1252"


def _stray(text: str, n: int = 1) -> bytes:
    """`text` as UTF-8 with `n` windows-1252 apostrophes (0x92) spread through it."""
    data, step = text.encode("utf-8"), len(text) // (n + 1)
    marks = [len(text[: step * (k + 1)].encode("utf-8")) for k in range(n)]
    return b"".join(data[a:b] + (b"\x92" if b < len(data) else b"") for a, b in zip([0, *marks], [*marks, len(data)]))


LONG = (STORY * 50)[:2000]  # 2,000 characters: two stray bytes may be read as U+FFFD


@pytest.mark.parametrize(
    "body,content_type,evidence,replaced",
    [
        (b'<meta charset="utf-8">' + _stray(STORY), "text/html", "meta", 1),
        (_stray(LONG, 2), "text/html; charset=utf-8", "http", 2),
        (_stray(LONG, 2), None, "detected", 2),  # UTF-8's sequences check themselves: no declaration needed
        (b"\xef\xbb\xbf" + _stray(STORY), None, "bom", 1),
        # a Latin header (a server's default) with UTF-8 in <meta>: plausible Chinese beats it
        (b'<meta charset="utf-8">' + _stray(STORY), "text/html; charset=ISO-8859-1", "meta", 1),
        ("\ufffd".encode("utf-8") + _stray(STORY), None, "detected", 1),  # a U+FFFD the page spells is no error
    ],
)
def test_utf8_with_a_few_stray_bytes_reads_as_a_browser_reads_it(body, content_type, evidence, replaced):
    """A page nothing decodes strictly that is UTF-8 but for a few invalid bytes: with replace,
    each invalid sequence is U+FFFD (at most one per 1,000 characters); without, None as before."""
    assert decode_bytes(body, content_type) is None or "charset=ISO-8859-1" in str(content_type)
    decoded = decode_bytes(body, content_type, replace=True)
    assert (decoded.encoding, decoded.evidence, decoded.replaced) == ("utf-8", evidence, replaced)
    assert decoded.text.count("\ufffd") == replaced + body.count("\ufffd".encode("utf-8"))
    assert decoded.text.replace("\ufffd", "") == body.replace(b"\x92", b"").decode("utf-8-sig").replace("\ufffd", "")


@pytest.mark.parametrize(
    "body,content_type",
    [
        (_stray(LONG, 3), "text/html; charset=utf-8"),  # 3 in 2,000 characters: over one per 1,000
        (_stray(STORY, 2), None),  # 2 in a page under 1,000 characters
        (b'<meta charset="utf-8">' + STORY.encode("gbk") + b"\xff", "text/html"),  # GBK said to be UTF-8
    ],
)
def test_more_invalid_utf8_than_stray_bytes_stays_undecodable(body, content_type):
    assert decode_bytes(body, content_type, replace=True) is None


def test_a_latin_page_said_to_be_utf8_stays_latin_under_replace():
    """Real windows-1252 text under a Latin header is not UTF-8 with stray bytes: a few invalid
    sequences alone do not overrule the header, the text must read as Chinese."""
    body = b'<meta charset="utf-8"><p>' + "Tom’s café, ".encode("cp1252") + b"and more plain words. " * 60
    decoded = decode_bytes(body, "text/html; charset=ISO-8859-1", replace=True)
    assert (decoded.encoding, decoded.replaced) == ("cp1252", 0) and "Tom’s café" in decoded.text


def test_latin_share_separates_mojibake_from_latin_prose():
    assert latin_share(STORY.encode("gbk").decode("cp1252")) == 1.0
    assert latin_share(STORY.encode("utf-8").decode("latin-1")) == 1.0
    assert latin_share("Un été à Paris, café crème et déjà fini.") == 7 / 32  # 7 accented letters of 32
    assert latin_share(STORY) == 0.0 and latin_share(" \n") == 0.0


def test_meta_charset_http_equiv_form():
    assert meta_charset(b'<meta http-equiv="Content-Type" content="text/html; charset=gb2312">') == "gb2312"


@settings(max_examples=50, deadline=None)
@given(st.text(alphabet=sorted(COMMON) + list("，。！？“”"), min_size=8, max_size=80))
def test_gbk_and_utf8_round_trip(text):
    assert decode_bytes(text.encode("utf-8")).text == text
    assert decode_bytes(text.encode("gbk"), "text/html").text == text


# ------------------------------------------------------------------ HTML
PAGE = """<html><head><base href="/stories/"><script>var x = "<p>广告</p>";</script></head><body>
<h1 class="t">  借 伞 </h1><a href="a.html#c">A</a><a href="/list/2.html">2</a><a href="a.html">again</a>
<a href="mailto:x@y.org">mail</a><div id="content">第一段<a href="/tag/1">小林</a>走了。<br>第二段&nbsp;开始。
<p>第三段。</p><!-- 注释 --><style>p {}</style></div></body></html>"""


def test_a_list_page_with_a_stray_byte_still_gives_its_links(caplog):
    """Decoded strictly, a UTF-8 list page holding one windows-1252 apostrophe gave no links,
    so no story under it was crawled, and nothing said so."""
    from pipelines.crawl.crawler import Crawler
    from schemas.crawl import Page

    spec = parse_spec(json.dumps(SPEC))
    crawler = Crawler(spec, Fetcher(FetchConfig(), max_bytes=10), [], lambda page: None)
    links = "".join(f'<li><a href="/story/{i}.html">第{i}个故事</a></li>' for i in range(30))
    html = f'<html><meta charset="utf-8"><p>Tom\x92s 故事集</p><ul>{links}</ul></html>'
    body = html.encode("utf-8").replace(b"\xc2\x92", b"\x92")  # the one stray byte
    url = "http://example.org/list/1.html"
    page = Page("fables", url, url, "list", 200, "{}", body, "2026-01-01T00:00:00Z")
    assert crawler._links(page) == [f"http://example.org/story/{i}.html" for i in range(30)]
    garbage = Page("fables", url, url, "list", 200, "{}", bytes(range(128, 256)) * 20, "2026-01-01T00:00:00Z")
    assert crawler._links(garbage) == [] and "no links read from" in caplog.text


def test_extract_links_document_order_base_and_dedup():
    assert extract_links(PAGE, "http://h.org/list/1.html") == [
        "http://h.org/stories/a.html",
        "http://h.org/list/2.html",
        "http://h.org/tag/1",
    ]


def test_extract_story_blocks_become_lines():
    assert extract_story(PAGE, "h1.t", "#content") == ("借 伞", "第一段小林走了。\n第二段 开始。\n第三段。")
    assert extract_story(PAGE, "h2", "#content")[0] == ""
    assert extract_story(PAGE, "h1", "#missing") == Drop("body_not_found", "no element matches '#missing'")
    assert extract_story("<div id=content> <script>x</script></div>", "h1", "#content").reason == "empty_body"
    assert extract_story(PAGE, "h1", "div[").reason == "bad_selector"


# ------------------------------------------------------------------ flags, robots refusals, card
def test_crawl_flags_keep_their_spellings_and_defaults():
    from pipelines import crawl
    from pipelines.engine import config_from_args

    parser = crawl.build_parser()
    args = parser.parse_args(["--site", "s.json", "--output", "out"])
    assert config_from_args(args, FetchConfig, timeout_seconds=args.timeout) == FetchConfig()
    assert (args.max_pages, args.flush_every, args.progress_seconds) == (None, 1, 10.0)
    args = parser.parse_args(
        [
            "--site",
            "s.json",
            "--output",
            "out",
            "--user_agent",
            "x/1",
            "--timeout",
            "5",
            "--max-tries",
            "2",
            "--backoff_base",
            "0.5",
            "--max_retry_after",
            "9",
            "--max_pages",
            "3",
            "--flush-every",
            "4",
        ]
    )
    assert config_from_args(args, FetchConfig, timeout_seconds=args.timeout) == FetchConfig(
        "x/1", 5.0, 2, 0.5, max_retry_after=9.0
    )
    assert (args.max_pages, args.flush_every) == (3, 4)
    with pytest.raises(SystemExit):
        parser.parse_args(["--site", "s.json", "--output", "out", "--no-such-flag"])


def test_robots_refusal_tells_a_failed_robots_txt_from_a_rule():
    from pipelines.crawl.crawler import robots_refusal

    rules = parse_robots(b"User-agent: *\nDisallow: /vip/\n", "storybench")
    assert robots_refusal(rules, "http://h.org/vip/1.html") == "robots_disallowed"
    assert robots_refusal(rules, "http://h.org/story/1.html") is None
    assert robots_refusal(robots_for_status(503, b"", "storybench"), "http://h.org/a") == "robots_unavailable"
    assert robots_refusal(robots_for_status(None, b"", "storybench", "timeout"), "http://h.org/a") == (
        "robots_unavailable"
    )


def test_crawl_card_lists_the_crawl_reasons():
    from annotators.stories.card import crawl_card

    stats = {"job": "crawl", "schema_version": "1.0", "stages": {}, "tables": {"pages": 0}, "this_run": {"fetched": 0}}
    card = crawl_card(stats)
    assert "This run: {'fetched': 0}.\n\n## Reject reasons this job can give" in card
    assert "| `robots_unavailable` |" in card and "| `http_status` |" in card and "| `mojibake` |" not in card


# ------------------------------------------------------------------ the page cache
def test_page_cache_merges_small_parts_and_never_reuses_a_part_name(tmp_path, monkeypatch):
    from pipelines.crawl import report
    from schemas.crawl import Page

    monkeypatch.setattr(report, "MERGED_ROWS", 10)
    pages = [
        Page(
            "s",
            f"http://h.org/{i}",
            f"http://h.org/{i}",
            "story",
            200,
            "{}",
            b"<html>%d" % i,
            "2026-01-01T00:00:00Z",
            attempts=1,
        )
        for i in range(25)
    ]
    cache = report.PageCache(str(tmp_path))
    for page in pages:
        cache.add(page)  # one part per page
    assert len(list(tmp_path.glob("part-*.parquet"))) == 25
    cache.compact()
    parts = sorted(p.name for p in tmp_path.glob("part-*.parquet"))
    assert parts == ["part-00025.parquet", "part-00026.parquet", "part-00027.parquet"]  # 10, 10, 5 rows
    assert [pq.read_metadata(tmp_path / p).num_rows for p in parts] == [10, 10, 5]
    (tmp_path / "part-00026.parquet").write_bytes(b"not parquet")
    again = report.PageCache(str(tmp_path))
    assert sorted(p.url for p in again.load()) == sorted(p.url for p in pages[:10] + pages[20:])
    again.add(pages[10])
    assert (tmp_path / "part-00028.parquet").exists() and (tmp_path / "part-00026.parquet.corrupt").exists()


def test_fetcher_waits_the_host_delay_after_the_previous_response():
    now, sleeps = [100.0], []
    fetcher = Fetcher(FetchConfig(), max_bytes=10, clock=lambda: now[0], sleep=sleeps.append)
    fetcher.set_delay("h.org", 2.0)
    fetcher._wait_turn("h.org")  # nothing fetched from the host yet: no wait
    fetcher._last_end["h.org"] = 100.0
    now[0] = 100.5
    fetcher._wait_turn("h.org")
    fetcher._wait_turn("other.org")  # another host does not wait for this one
    now[0] = 103.0
    fetcher._wait_turn("h.org")  # the delay has passed
    assert sleeps == [1.5]
