"""The crawler against a loopback server that misbehaves every way the fault sweep found
(issue 28): each fault ends in seconds with the row and reason listed here, the crawl never
leaves its hosts or requests a disallowed path, every URL is accounted for, and a re-run
requests nothing."""

from __future__ import annotations

import json
import time

import pyarrow.parquet as pq
import pytest
from conftest import check_rejects

from annotators.text.charset import decode_bytes
from pipelines import crawl
from tests.crawl.fault_server import BIG, META_GBK, FaultServer, story

pytestmark = pytest.mark.slow  # end-to-end job runs: `make test-fast` leaves them out

FLAGS = ["--timeout", "1", "--backoff_base", "0.05", "--max_tries", "3", "--user_agent", "storybench-test/1.0"]
MAX_BYTES = 100_000

# path on the main server -> (error, HTTP requests for the row, requests the server saw for the path)
EXPECTED = {
    "/robots.txt": (None, 1, 1),
    "/index.html": (None, 1, 1),
    "/meta-gbk.html": (None, 1, 1),  # charset only in <meta>: its link below is still found
    "/s/meta-linked.html": (None, 1, 1),
    "/s/gzip.html": (None, 1, 1),
    "/s/bomb.html": ("too_large", 1, 1),  # 50 MB of gzip: inflated only up to max_bytes
    "/s/bad-gzip.html": ("bad_gzip", 1, 1),
    "/s/cut-gzip.html": ("bad_gzip", 1, 1),  # cut short: once kept as a whole page
    "/s/unknown-encoding.html": ("bad_gzip", 1, 1),
    "/s/bad-location.html": ("bad_response", 1, 1),
    "/s/pdf.html": ("not_html", 1, 1),
    "/s/plain.html": ("not_html", 1, 1),
    "/s/no-type.html": ("not_html", 1, 1),
    "/s/no-type-html.html": (None, 1, 1),
    "/s/big-length.html": ("too_large", 1, 1),
    "/s/big-stream.html": ("too_large", 1, 1),
    "/s/retry-seconds.html": (None, 2, 2),  # 429 Retry-After: 1, then 200
    "/s/retry-date.html": (None, 2, 2),  # 429 Retry-After: <HTTP date>, then 200
    "/s/retry-hour.html": ("retry_after_too_long", 1, 1),
    "/s/unavailable-once.html": (None, 2, 2),  # 503 then 200
    "/s/always-500.html": ("retries_exhausted", 3, 3),
    "/s/missing-plain.html": ("http_404", 1, 1),  # a 404 served as text/plain
    "/s/gone.html": ("http_410", 1, 1),
    "/s/chain-0.html": (None, 4, 1),  # three redirects, then the page
    "/s/longchain-0.html": ("too_many_redirects", 6, 1),
    "/s/loop-a.html": ("too_many_redirects", 6, 3),
    "/s/offsite.html": ("off_host_redirect", 1, 1),
    "/s/to-private.html": ("robots_disallowed", 1, 1),
    "/s/reset.html": ("retries_exhausted", 3, 3),  # connection reset on every try
    "/s/reset-once.html": (None, 2, 2),
    "/s/drip.html": ("too_slow", 1, 1),  # a byte every 0.1 s: the deadline, not 200 s
    "/s/drip-headers.html": ("too_slow", 1, 1),
    "/private/secret.html": ("robots_disallowed", 0, 0),
}
REDIRECT_HOPS = {
    "/s/chain-1.html": 1,
    "/s/chain-2.html": 1,
    "/s/chain-3.html": 1,
    "/s/loop-b.html": 3,
    **{f"/s/longchain-{i}.html": 1 for i in range(1, 6)},
}


def write_spec(tmp, servers, **overrides) -> str:
    spec = {
        "name": "fault-site",
        "start_urls": [f"{s.base}/index.html" for s in servers],
        "allowed_hosts": [s.host for s in servers],
        "follow": [r"/index\.html$", r"/meta-gbk\.html$"],
        "story": r"/(s|private)/",
        "title": "h1",
        "body": "div.b",
        "license": "test pages",
        "delay_seconds": 0,
        "max_pages": 200,
        "max_bytes": MAX_BYTES,
        "max_redirects": 5,
    }
    spec.update(overrides)
    path = tmp / "site.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    return str(path)


def rows_by_path(folder, server) -> dict:
    rows = pq.read_table(folder / "pages").to_pylist()
    return {r["url"][len(server.base) :]: r for r in rows if r["url"].startswith(server.base + "/")}


@pytest.fixture(scope="module")
def fault_crawl(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("faults")
    with (
        FaultServer(index_links=False) as offsite,
        FaultServer(offsite=offsite.base) as site,
        FaultServer(robots="500", index_links=False) as robots_500,
        FaultServer(robots="404", index_links=False) as robots_404,
        FaultServer(robots="hour", index_links=False) as robots_hour,
    ):
        spec = write_spec(tmp, [site, robots_500, robots_404, robots_hour])
        argv = ["--site", spec, "--output", str(tmp / "crawl"), *FLAGS]
        started = time.monotonic()
        first = crawl.run(argv)
        seconds = time.monotonic() - started
        hits = {
            name: dict(s.hits)
            for name, s in (
                ("site", site),
                ("offsite", offsite),
                ("r500", robots_500),
                ("r404", robots_404),
                ("hour", robots_hour),
            )
        }
        second = crawl.run(argv)
        rerun = {
            name: s.paths()[sum(hits[name].values()) :]
            for name, s in (
                ("site", site),
                ("offsite", offsite),
                ("r500", robots_500),
                ("r404", robots_404),
                ("hour", robots_hour),
            )
        }
        yield {
            "tmp": tmp,
            "folder": tmp / "crawl",
            "site": site,
            "r500": robots_500,
            "r404": robots_404,
            "hour": robots_hour,
            "first": first,
            "second": second,
            "seconds": seconds,
            "hits": hits,
            "rerun": rerun,
        }


def test_every_fault_ends_with_its_reason(fault_crawl):
    rows = rows_by_path(fault_crawl["folder"], fault_crawl["site"])
    assert {p: (r["error"], r["attempts"]) for p, r in rows.items()} == {
        p: (error, attempts) for p, (error, attempts, _) in EXPECTED.items()
    }
    assert rows["/s/missing-plain.html"]["status"] == 404 and rows["/s/gone.html"]["status"] == 410
    assert rows["/s/big-length.html"]["detail"] == f"content-length {BIG}"
    assert rows["/s/bomb.html"]["detail"] == rows["/s/big-stream.html"]["detail"] == f"over {MAX_BYTES} bytes"
    assert rows["/s/reset.html"]["detail"] == "connection_error on all 3 tries"
    assert rows["/s/always-500.html"]["detail"] == "http_500 on all 3 tries"
    assert rows["/s/drip.html"]["detail"] == "no whole response within 1 s (--timeout)"
    assert rows["/s/bad-gzip.html"]["detail"].startswith("Content-Encoding gzip does not decode")
    assert rows["/s/cut-gzip.html"]["detail"].startswith("Content-Encoding gzip: the stream ends early, after ")
    assert rows["/s/unknown-encoding.html"]["detail"] == "Content-Encoding x-squash is not one the crawler decodes"
    assert rows["/s/bad-location.html"]["detail"] == "ValueError: Invalid IPv6 URL"
    assert rows["/s/offsite.html"]["detail"].startswith("redirect to http://127.0.0.1:")


def test_bodies_are_kept_as_served(fault_crawl):
    rows, base = rows_by_path(fault_crawl["folder"], fault_crawl["site"]), fault_crawl["site"].base
    assert rows["/s/gzip.html"]["body"] == story("gzip")  # stored inflated
    assert rows["/meta-gbk.html"]["body"] == META_GBK  # bytes as served; decoded by its <meta>
    decoded = decode_bytes(rows["/meta-gbk.html"]["body"], "text/html")
    assert (decoded.encoding, decoded.evidence) == ("gb18030", "meta") and "故事目录" in decoded.text
    assert rows["/s/meta-linked.html"]["referrer"] == f"{base}/meta-gbk.html"
    chain = rows["/s/chain-0.html"]
    assert chain["final_url"] == f"{base}/s/chain-3.html" and chain["body"] == story("chain-3")
    assert chain["redirects"] == [f"{base}/s/chain-{i}.html" for i in (1, 2, 3)]
    for path, (error, _, _) in EXPECTED.items():
        if error:
            assert rows[path]["body"] == b"", path


def test_requests_stay_on_allowed_paths_and_hosts(fault_crawl):
    hits = fault_crawl["hits"]
    assert hits["site"] == {**{p: n for p, (_, _, n) in EXPECTED.items() if n}, **REDIRECT_HOPS}
    assert hits["offsite"] == {}  # neither the off-host link nor the off-host redirect
    assert not any(p.startswith("/private/") for p in hits["site"])


def test_robots_txt_500_or_an_hour_of_crawl_delay_fetches_nothing_and_404_allows_all(fault_crawl):
    r500 = rows_by_path(fault_crawl["folder"], fault_crawl["r500"])
    assert fault_crawl["hits"]["r500"] == {"/robots.txt": 3}  # 5xx retried, then the host is off limits
    assert {p: r["error"] for p, r in r500.items()} == {
        "/robots.txt": "retries_exhausted",
        "/index.html": "robots_unavailable",
    }
    hour = rows_by_path(fault_crawl["folder"], fault_crawl["hour"])  # Crawl-delay: 3600 is not waited for
    assert fault_crawl["hits"]["hour"] == {"/robots.txt": 1}
    assert {p: r["error"] for p, r in hour.items()} == {"/robots.txt": None, "/index.html": "crawl_delay_too_long"}
    r404 = rows_by_path(fault_crawl["folder"], fault_crawl["r404"])
    assert {p: (r["error"], r["status"]) for p, r in r404.items()} == {
        "/robots.txt": ("http_404", 404),
        "/index.html": (None, 200),
        "/s/fine.html": (None, 200),
    }


def test_every_url_is_accounted_for_and_the_crawl_ends_in_seconds(fault_crawl):
    stats = json.loads((fault_crawl["folder"] / "stats.json").read_text(encoding="utf-8"))
    stage = stats["stages"]["crawl"]
    rows = pq.read_table(fault_crawl["folder"] / "pages").num_rows
    assert stage["read"] == rows == len(EXPECTED) + 2 + 3 + 2
    assert stage["read"] == stage["written"] + stage["rejected"]
    assert stage["rejected"] == check_rejects(fault_crawl["folder"])
    errors = [e for e, _, _ in EXPECTED.values() if e] + [
        "retries_exhausted",
        "robots_unavailable",
        "http_404",
        "crawl_delay_too_long",
    ]
    assert stage["rejected_by_reason"] == {e: errors.count(e) for e in sorted(set(errors))}
    assert stats["this_run"]["stopped"] == "done"
    # the Retry-After pauses (1 s, 1-2 s) and the two drips' deadlines (1 s each) are most of it
    assert fault_crawl["seconds"] < 20, fault_crawl["seconds"]


def test_a_rerun_requests_nothing(fault_crawl):
    assert fault_crawl["rerun"] == {"site": [], "offsite": [], "r500": [], "r404": [], "hour": []}
    assert fault_crawl["second"].fetched == 0 and fault_crawl["second"].requests == 0
