"""Stopping and misuse (issue 28): SIGTERM and SIGINT on a `python -m pipelines.crawl`
process keep what it fetched and a re-run requests none of it; a foreign `--output`, a bad
spec, a missing spec or a bad flag is one line on stderr and exit status 2, never a traceback."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest

from pipelines import crawl
from tests.crawl.fault_server import FaultServer

pytestmark = pytest.mark.slow  # end-to-end job runs: `make test-fast` leaves them out

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = 30
FLAGS = ["--timeout", "2", "--backoff_base", "0.05", "--max_tries", "2", "--user_agent", "storybench-test/1.0"]


def many_spec(tmp, server) -> str:
    spec = {
        "name": "many",
        "start_urls": [f"{server.base}/many.html"],
        "allowed_hosts": [server.host],
        "follow": r"/many\.html$",
        "story": r"/n/\d+\.html$",
        "title": "h1",
        "body": "div.b",
        "license": "test pages",
        "delay_seconds": 0,
    }
    path = tmp / "many.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    return str(path)


def cached_paths(folder, server) -> set[str]:
    return {r["url"][len(server.base) :] for r in pq.read_table(folder / "pages", columns=["url"]).to_pylist()}


def wait_for(condition, seconds: float) -> None:
    stop = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < stop, "timed out"
        time.sleep(0.05)


def interrupted_crawl(tmp_path, site, signum) -> tuple[list[str], int, str]:
    """Start `python -m pipelines.crawl` on 30 slow pages, send `signum` once it has requested
    six; returns the argv, its exit status and its stderr."""
    argv = ["--site", many_spec(tmp_path, site), "--output", str(tmp_path / "crawl"), *FLAGS]
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipelines.crawl", *argv, "--progress_seconds", "0.2"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        wait_for(lambda: sum(p.startswith("/n/") for p in site.paths()) >= 6, 60)
        proc.send_signal(signum)
        _, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    return argv, proc.returncode, stderr


def resume_fetches_nothing_it_had(tmp_path, site, argv, first: list[str]) -> None:
    kept = cached_paths(tmp_path / "crawl", site)
    assert {"/robots.txt", "/many.html"} <= kept and len(kept) >= 6 and kept <= set(first)
    resumed = crawl.run(argv)
    again = site.paths()[len(first) :]
    assert resumed.stopped == "done" and resumed.cached == len(kept) - 1  # robots.txt is not a visit
    assert not set(again) & kept  # nothing it had is requested again
    assert len(again) == len(set(again))
    assert cached_paths(tmp_path / "crawl", site) == set(first) | set(again)
    assert len(set(first) | set(again)) == PAGES + 2
    parts = sorted(p.name for p in (tmp_path / "crawl" / "pages").iterdir())
    assert len(parts) == 1 and parts[0].endswith(".parquet")  # the small parts merged


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_keeps_what_was_fetched_and_a_rerun_fetches_none_of_it(tmp_path, signum):
    with FaultServer(many=PAGES, page_delay=0.1) as site:
        argv, status, stderr = interrupted_crawl(tmp_path, site, signum)
        first = site.paths()
        assert status == 128 + signum, stderr
        assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
        assert (
            stderr.strip()
            .splitlines()[-1]
            .startswith(f"python -m pipelines.crawl: stopped by {signal.Signals(signum).name}; every page fetched")
        )
        assert "crawl many: fetched" in stderr  # the progress lines
        kept = cached_paths(tmp_path / "crawl", site)
        stats = json.loads((tmp_path / "crawl" / "stats.json").read_text(encoding="utf-8"))
        assert stats["this_run"]["stopped"] == "interrupted"
        assert stats["stages"]["crawl"]["read"] == len(kept)
        resume_fetches_nothing_it_had(tmp_path, site, argv, first)


def test_even_a_killed_crawl_keeps_every_page_it_had(tmp_path):
    with FaultServer(many=PAGES, page_delay=0.1) as site:
        argv, status, _ = interrupted_crawl(tmp_path, site, signal.SIGKILL)
        assert status == -signal.SIGKILL
        resume_fetches_nothing_it_had(tmp_path, site, argv, site.paths())


def test_a_folder_the_crawler_did_not_make_is_refused(tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "README.md").write_text("my notes\n", encoding="utf-8")
    with FaultServer(many=2) as site:
        argv = ["--site", many_spec(tmp_path, site), "--output", str(out), *FLAGS]
        assert crawl.main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "holds files but no stats.json" in err and "Traceback" not in err
        assert (out / "README.md").read_text(encoding="utf-8") == "my notes\n"
        assert sorted(p.name for p in out.iterdir()) == ["README.md"] and site.paths() == []

        (out / "stats.json").write_text(json.dumps({"job": "lot"}), encoding="utf-8")
        assert crawl.main(argv) == 2
        assert "is not a crawl's output (stats.json is of job 'lot')" in capsys.readouterr().err
        (tmp_path / "a-file").write_text("x", encoding="utf-8")
        assert crawl.main([*argv[:2], "--output", str(tmp_path / "a-file")]) == 2
        assert "is a file, not a folder" in capsys.readouterr().err
        assert site.paths() == []

        crawled = tmp_path / "crawled"  # the crawler's own folder is taken up again
        assert crawl.main([*argv[:2], "--output", str(crawled), *FLAGS]) == 0
        assert crawl.main([*argv[:2], "--output", str(crawled), *FLAGS]) == 0
        assert len(site.paths()) == 4  # robots.txt, many.html, two pages: once each


SPEC = {
    "name": "s",
    "start_urls": ["http://127.0.0.1:9/index.html"],
    "allowed_hosts": ["127.0.0.1:9"],
    "follow": "/index",
    "story": "/s/",
    "title": "h1",
    "body": "div",
    "license": "x",
}
BAD_SPECS = {  # spec file content -> what the one line says
    "{not json": "unreadable site spec",
    "[1, 2]": "a site spec must be a mapping, not list",
    "null": "a site spec must be a mapping, not NoneType",
    json.dumps({k: v for k, v in SPEC.items() if k != "story"}): "site spec lacks ['story']",
    json.dumps({**SPEC, "story": "(unclosed"}): "bad regex '(unclosed'",
    json.dumps({**SPEC, "follow": ["ok", "a{2,1}"]}): "bad regex 'a{2,1}'",
    json.dumps({**SPEC, "body": "div[[["}): "bad CSS selector body 'div[[[': SelectorSyntaxError",
    json.dumps({**SPEC, "start_urls": 5}): "start_urls must be a string or a non-empty list of strings",
    json.dumps({**SPEC, "start_urls": []}): "start_urls must be a string or a non-empty list of strings",
    json.dumps({**SPEC, "start_urls": ["ftp://x/"]}): "start url 'ftp://x/' is not an absolute http(s) URL",
    json.dumps({**SPEC, "allowed_hosts": [{"h": 1}]}): "allowed_hosts must be a string or",
    json.dumps({**SPEC, "name": 7}): "name must be a non-empty string",
    json.dumps({**SPEC, "delay_seconds": "soon"}): "delay_seconds must be a number",
    json.dumps({**SPEC, "delay_seconds": -1}): "delay_seconds and max_redirects must be >= 0",
    json.dumps({**SPEC, "max_pages": None}): "max_pages must be a number, not None",
    json.dumps({**SPEC, "max_pages": 2.5}): "max_pages must be a whole number",
    json.dumps({**SPEC, "max_bytes": True}): "max_bytes must be a number, not True",
    json.dumps({**SPEC, "delay_seconds": 1e400}): "delay_seconds must be a finite number",
    json.dumps({**SPEC, "extra": 1}): "unknown site spec fields ['extra']",
    json.dumps({**SPEC, "allowed_hosts": ["other.org"]}): "is not on an allowed host",
}


def one_line_error(capsys, argv) -> str:
    assert crawl.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("python -m pipelines.crawl: error: ") and "Traceback" not in err
    return err


@pytest.mark.parametrize("text", list(BAD_SPECS), ids=range(len(BAD_SPECS)))
def test_a_bad_spec_is_one_line(tmp_path, capsys, text):
    spec = tmp_path / "site.json"
    spec.write_text(text, encoding="utf-8")
    err = one_line_error(capsys, ["--site", str(spec), "--output", str(tmp_path / "out")])
    assert f"--site {spec}: " in err and BAD_SPECS[text] in err, err
    assert not (tmp_path / "out").exists()


def test_a_missing_or_unreadable_spec_or_a_bad_flag_is_one_line(tmp_path, capsys):
    out = ["--output", str(tmp_path / "out")]
    assert "no such file" in one_line_error(capsys, ["--site", str(tmp_path / "nope.json"), *out])
    assert "is a folder, not a spec file" in one_line_error(capsys, ["--site", str(tmp_path), *out])
    latin = tmp_path / "latin.json"
    latin.write_bytes(json.dumps({**SPEC, "name": "caf\u00e9"}, ensure_ascii=False).encode("latin-1"))
    assert "not UTF-8 text" in one_line_error(capsys, ["--site", str(latin), *out])
    bom = tmp_path / "bom.yaml"  # a BOM and YAML are fine: this one fails only on its flag
    bom.write_bytes("\ufeff".encode() + "\n".join(f"{k}: {json.dumps(v)}" for k, v in SPEC.items()).encode())
    assert crawl.load_spec_file(str(bom)).name == "s"
    assert "cannot be written" in one_line_error(capsys, ["--site", str(bom), "--output", "/proc/no-crawl-here"])
    for flag, value, says in [
        ("--timeout", "0", "--timeout must be a number above 0"),
        ("--timeout", "nan", "--timeout must be a number above 0"),
        ("--max_tries", "0", "--max_tries must be a number above 0"),
        ("--backoff_base", "-1", "--backoff_base must be a number of 0 or more"),
        ("--max_pages", "0", "--max_pages must be at least 1"),
    ]:
        assert says in one_line_error(capsys, ["--site", str(bom), *out, flag, value])
    for argv in (["--site", str(bom)], [*out, "--site", str(bom), "--timeout", "soon"], [*out, "--nope"]):
        with pytest.raises(SystemExit) as stop:
            crawl.main(argv)
        err = capsys.readouterr().err
        assert stop.value.code == 2 and err.count("\n") == 1 and err.endswith("(see --help)\n"), err
    assert not (tmp_path / "out").exists()


def test_a_bug_in_the_fetch_code_is_an_internal_error_row_and_exit_status_1(tmp_path, capsys, monkeypatch):
    import pipelines.crawl.fetch as http_fetch

    real_fetch = http_fetch.Fetcher.fetch

    def broken_on_one_page(self, url, **kw):
        if url.endswith("/n/01.html"):
            raise ValueError("a bug")
        return real_fetch(self, url, **kw)

    monkeypatch.setattr(http_fetch.Fetcher, "fetch", broken_on_one_page)
    with FaultServer(many=3) as site:
        assert crawl.main(["--site", many_spec(tmp_path, site), "--output", str(tmp_path / "crawl"), *FLAGS]) == 1
        assert site.hits == {"/robots.txt": 1, "/many.html": 1, "/n/00.html": 1, "/n/02.html": 1}
    assert "1 pages hit an internal error" in capsys.readouterr().err
    rows = {r["url"].rsplit("/", 1)[1]: r for r in pq.read_table(tmp_path / "crawl" / "pages").to_pylist()}
    assert (rows["01.html"]["error"], rows["01.html"]["detail"]) == ("internal_error", "ValueError: a bug")
    stats = json.loads((tmp_path / "crawl" / "stats.json").read_text(encoding="utf-8"))
    assert stats["stages"]["crawl"]["rejected_by_reason"] == {"internal_error": 1}


def test_sighup_in_process_stops_cleanly_too(tmp_path, capsys):
    """The terminal closing (SIGHUP) is a stop like SIGTERM; here sent to this very process."""
    import threading

    if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN:
        pytest.skip("SIGHUP is ignored here (run under nohup): the crawler leaves it alone by design")

    with FaultServer(many=PAGES, page_delay=0.05) as site:
        argv = ["--site", many_spec(tmp_path, site), "--output", str(tmp_path / "crawl"), *FLAGS]

        def hang_up():
            wait_for(lambda: sum(p.startswith("/n/") for p in site.paths()) >= 6, 30)
            os.kill(os.getpid(), signal.SIGHUP)

        sender = threading.Thread(target=hang_up, daemon=True)
        sender.start()
        assert crawl.main(argv) == 128 + signal.SIGHUP
        sender.join(5)
        assert "stopped by SIGHUP" in capsys.readouterr().err
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_DFL  # the handler is put back
        resume_fetches_nothing_it_had(tmp_path, site, argv, site.paths())


def test_a_yaml_spec_that_does_not_parse_is_one_line_with_where(tmp_path, capsys):
    """PyYAML's message spans several lines (its context and a caret)."""
    spec = tmp_path / "site.yaml"
    spec.write_text("name: x\nfollow: [1, 2\nstory: 3\n", encoding="utf-8")
    err = one_line_error(capsys, ["--site", str(spec), "--output", str(tmp_path / "out")])
    assert "unreadable site spec: expected ',' or ']', but got ':' (line 3, column 6)" in err, err
