"""`pipelines.crawl` against the loopback fixture site: requests made, cache rows, resume."""

from __future__ import annotations

import collections
import json

import pyarrow.parquet as pq
import pytest
from conftest import check_rejects

import pipelines.crawl.fetch as http_fetch
from pipelines import crawl
from tests.fixtures.site.server import CRAWL_FLAGS, SLOW_SECONDS, WWW, SiteServer, site_spec

pytestmark = pytest.mark.slow  # end-to-end job runs: `make test-fast` leaves them out

FIRST_RUN = [  # every request of a full crawl, in order (breadth-first, robots.txt first)
    "/robots.txt",
    "/index.html",
    "/list/page-1.html",
    "/stories/story-01.html",
    "/stories/story-02.html",
    "/stories/story-03.html",
    "/stories/story-04.html",
    "/stories/story-05.html",
    "/mirror/story-05.html",
    "/list/page-2.html",
    "/stories/story-06.html",
    "/stories/story-07-old.html",
    "/stories/story-07.html",
    "/stories/story-08.html",
    "/stories/story-08.html",
    "/stories/story-08.html",
    "/stories/story-09.html",
    "/stories/story-17.html",
    "/stories/story-10.html",
    "/stories/story-11.html",
    "/stories/story-12.pdf",
    "/stories/story-13.html",
    "/stories/story-15.html",
    "/stories/story-16.html",
    "/stories/story-16.html",
    "/stories/story-16.html",
]
ROWS = {  # cache row per URL path: (kind, status, error, attempts)
    "/robots.txt": ("robots", 200, None, 1),
    "/index.html": ("list", 200, None, 1),
    "/list/page-1.html": ("list", 200, None, 1),
    "/list/page-2.html": ("list", 200, None, 1),
    "/stories/story-01.html": ("story", 200, None, 1),
    "/stories/story-02.html": ("story", 200, None, 1),
    "/stories/story-03.html": ("story", 200, None, 1),
    "/stories/story-04.html": ("story", 200, None, 1),
    "/stories/story-05.html": ("story", 200, None, 1),
    "/mirror/story-05.html": ("story", 200, None, 1),
    "/stories/story-06.html": ("story", 200, None, 1),
    "/stories/story-07-old.html": ("story", 200, None, 2),
    "/stories/story-08.html": ("story", 200, None, 3),
    "/stories/story-09.html": ("story", 200, None, 1),
    "/stories/story-10.html": ("story", 200, None, 1),
    "/stories/story-11.html": ("story", 200, "too_large", 1),
    "/stories/story-12.pdf": ("story", 200, "not_html", 1),
    "/stories/story-13.html": ("story", 404, "http_404", 1),
    "/stories/vip/story-14.html": ("story", None, "robots_disallowed", 0),
    "/stories/story-15.html": ("story", 302, "off_host_redirect", 1),
    "/stories/story-16.html": ("story", None, "retries_exhausted", 3),
    "/stories/story-17.html": ("story", 200, None, 1),
}


def run_crawl(tmp, server, *extra, **spec_overrides):
    spec_path = tmp / "site.json"
    spec_path.write_text(json.dumps(site_spec(server, **spec_overrides)), encoding="utf-8")
    return crawl.run(["--site", str(spec_path), "--output", str(tmp / "crawl"), *CRAWL_FLAGS, *extra])


def cache_rows(tmp, server) -> dict:
    rows = pq.read_table(tmp / "crawl" / "pages").to_pylist()
    return {r["url"][len(server.base) :]: r for r in rows}


@pytest.fixture(scope="module")
def full_crawl(tmp_path_factory):
    """One full crawl and one re-run over the same output, with both servers' logs."""
    tmp = tmp_path_factory.mktemp("crawl")
    with SiteServer(root=None) as offsite, SiteServer(offsite=offsite.base, slow_seconds=SLOW_SECONDS) as site:
        # cache parts of 20 rows: a part written per page would compete (in this one process) with
        # the server thread that stamps the request times the politeness test measures
        first = run_crawl(tmp, site, "--flush_every", "20")
        first_log = list(site.log)
        second = run_crawl(tmp, site, "--flush_every", "20")
        yield {
            "tmp": tmp,
            "site": site,
            "offsite": offsite,
            "first": first,
            "second": second,
            "first_log": first_log,
            "second_log": site.log[len(first_log) :],
        }


def test_first_run_requests_exactly_the_allowed_pages(full_crawl):
    assert [e["path"] for e in full_crawl["first_log"]] == FIRST_RUN


def test_no_disallowed_offsite_or_repeated_request(full_crawl):
    paths = [e["path"] for e in full_crawl["first_log"]]
    assert not any(p.startswith("/stories/vip/") for p in paths)
    assert full_crawl["offsite"].log == []
    repeats = {p: n for p, n in collections.Counter(paths).items() if n > 1}
    assert repeats == {"/stories/story-08.html": 3, "/stories/story-16.html": 3}  # retries only


def test_polite_one_at_a_time_with_user_agent_and_delay(full_crawl):
    log, site = full_crawl["first_log"], full_crawl["site"]
    assert site.max_in_flight == 1
    assert {e["agent"] for e in log} == {"storybench-test/1.0 (+loopback)"}
    gaps = [later["start"] - earlier["end"] for earlier, later in zip(log, log[1:])]
    # delay_seconds 0.01 between the end of one response and the next request. The server stamps
    # "end" after its handler returns, so a loaded machine can shorten one measured gap by the
    # time the server thread waited to run: the median holds the full delay, every gap most of it
    # (without the delay, gaps are about 1 ms). On a busy machine one gap in a run can lose most
    # of it that way; the delay itself is unit-tested with a fake clock (test_crawl_units).
    assert sorted(gaps)[len(gaps) // 2] >= 0.009 and sorted(gaps)[1] >= 0.005, gaps
    retries = [e["start"] for e in log if e["path"] == "/stories/story-08.html"]
    assert retries[1] - retries[0] >= 0.95  # Retry-After: 1 honoured


def test_cache_rows_record_status_and_reason(full_crawl):
    rows = cache_rows(full_crawl["tmp"], full_crawl["site"])
    assert {p: (r["kind"], r["status"], r["error"], r["attempts"]) for p, r in rows.items()} == ROWS
    base = full_crawl["site"].base
    assert rows["/stories/story-07-old.html"]["final_url"] == f"{base}/stories/story-07.html"
    assert rows["/stories/story-15.html"]["detail"] == (
        f"redirect to {full_crawl['offsite'].base}/stories/story-15.html"
    )
    assert rows["/stories/story-11.html"]["body"] == b""
    assert rows["/stories/story-16.html"]["detail"] == "timeout on all 3 tries"
    assert rows["/stories/story-02.html"]["body"] == (WWW / "stories" / "story-02.html").read_bytes()
    assert json.loads(rows["/stories/story-01.html"]["headers"])["content-type"] == "text/html; charset=utf-8"
    assert json.loads(rows["/stories/story-17.html"]["headers"])["content-type"] == "text/html; charset=ISO-8859-1"
    assert rows["/stories/story-17.html"]["body"] == (WWW / "stories" / "story-17.html").read_bytes()


def test_second_run_requests_nothing(full_crawl):
    assert full_crawl["second_log"] == []
    assert full_crawl["second"].fetched == 0 and full_crawl["second"].cached == len(ROWS) - 1


def test_stats_account_for_every_url(full_crawl):
    stats = json.loads((full_crawl["tmp"] / "crawl" / "stats.json").read_text(encoding="utf-8"))
    stage = stats["stages"]["crawl"]
    assert (stage["read"], stage["written"], stage["rejected"]) == (22, 16, 6)
    assert stage["rejected_by_reason"] == {
        "http_404": 1,
        "not_html": 1,
        "off_host_redirect": 1,
        "retries_exhausted": 1,
        "robots_disallowed": 1,
        "too_large": 1,
    }
    assert stats["requested_pages_total"] == 20
    check_rejects(full_crawl["tmp"] / "crawl")
    rejects = pq.read_table(full_crawl["tmp"] / "crawl" / "rejects").to_pylist()
    assert len(rejects) == 6 and {r["stage"] for r in rejects} == {"crawl"}


def test_max_pages_stops_and_a_resumed_crawl_skips_cached_pages(tmp_path):
    with SiteServer(root=None) as offsite, SiteServer(offsite=offsite.base, slow_seconds=SLOW_SECONDS) as site:
        stopped = run_crawl(tmp_path, site, "--max_pages", "4")
        assert stopped.stopped == "max_pages"
        assert site.paths() == FIRST_RUN[:5]  # robots.txt is not counted as a page
        resumed = run_crawl(tmp_path, site)
        assert site.paths()[5:] == FIRST_RUN[5:]
        assert resumed.cached == 4 and resumed.stopped == "done"
        assert len(cache_rows(tmp_path, site)) == len(ROWS)


def test_ctrl_c_keeps_what_was_fetched(tmp_path, monkeypatch):
    real_fetch, calls = http_fetch.Fetcher.fetch, []

    def interrupted(self, url, **kw):
        calls.append(url)
        if len(calls) == 5:
            raise KeyboardInterrupt
        return real_fetch(self, url, **kw)

    with SiteServer(root=None) as offsite, SiteServer(offsite=offsite.base, slow_seconds=SLOW_SECONDS) as site:
        monkeypatch.setattr(http_fetch.Fetcher, "fetch", interrupted)
        with pytest.raises(KeyboardInterrupt):
            run_crawl(tmp_path, site)
        assert sorted(cache_rows(tmp_path, site)) == sorted(FIRST_RUN[:4])
        stats = json.loads((tmp_path / "crawl" / "stats.json").read_text(encoding="utf-8"))
        assert stats["this_run"]["stopped"] == "interrupted"
        monkeypatch.setattr(http_fetch.Fetcher, "fetch", real_fetch)
        run_crawl(tmp_path, site)
        assert site.paths() == FIRST_RUN  # nothing fetched twice across the interruption


def test_every_file_is_written_whole_under_the_output(full_crawl):
    """The crawl keeps its resumable cache in --output, so it never replaces the folder: each
    file is written under a temporary name and renamed, and nothing is left beside the output."""
    tmp = full_crawl["tmp"]
    assert sorted(p.name for p in tmp.iterdir()) == ["crawl", "site.json"]
    files = sorted(str(p.relative_to(tmp / "crawl")) for p in (tmp / "crawl").rglob("*") if p.is_file())
    # parts of 20 rows as the pages are fetched (part-00000, part-00001), merged when the run ended
    assert files == [
        "CARD.md",
        "README.md",
        "pages/part-00002.parquet",
        "rejects/part-00000-of-00001.parquet",
        "stats.json",
    ]
