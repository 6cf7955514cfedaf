"""`python -m pipelines.crawl --site SPEC --output DIR`: polite, resumable crawl of one site.

Not a Beam job on purpose: politeness means one request at a time per host, which a single
process does best (SPEC "Crawl and clean"). The loop is `pipelines.crawl.crawler`; this module
is the command line; `pipelines.crawl.report` writes the page cache `DIR/pages` (parquet parts
every `--flush_every` rows and on exit) and the report: `DIR/rejects/` (pages that failed,
with reasons), `DIR/stats.json`, `DIR/CARD.md`. Re-running with the same `--output` requests
nothing already in the cache.

Stopping: SIGTERM and SIGINT (Ctrl-C) end the crawl with the cache and the report written
(exit status 128 + the signal, one line, no traceback), so the same command resumes it. A
progress line goes to stderr every `--progress_seconds` (10). Misuse is one line and exit
status 2: a missing, unreadable or malformed spec, a bad flag, or an `--output` the crawler
did not make (a folder with files but no crawl's stats.json, which it writes before its first
request).

How it commits: the cache is resumable, so the output folder is never replaced wholesale
(unlike the Beam jobs' staging). Every file is written under `--output` only, each one
atomically, so an interrupted crawl leaves whole cache parts and the previous whole report.
The fetch flags come from `pipelines.crawl.fetch.FetchConfig`; the card text and reject
reasons from `annotators.stories`.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import math
import os
import signal
import sys
import threading
from collections.abc import Sequence

from pipelines.crawl.stopping import quiet_start

quiet_start()  # before the slow imports below: Ctrl-C while starting is one line, not a traceback

from apache_beam.io.filesystems import FileSystems  # noqa: E402 (after quiet_start)

from annotators.stories.site_spec import SiteSpec, SpecError, parse_spec
from pipelines.crawl.crawler import Crawler, Progress
from pipelines.crawl.fetch import FetchConfig, Fetcher
from pipelines.crawl.report import ForeignOutput, PageCache, check_output, crawl_stats, write_report  # noqa: F401
from pipelines.crawl.stopping import Stopped, shielded, stop_on_signals

# not a Beam job: no PipelineOptions, so unknown flags are errors; flags still take `-` or `_`
from pipelines.engine import JobArgumentParser, add_config_flags, config_from_args, join, read_bytes
from pipelines.engine.paths import is_local_path

LOG = logging.getLogger("storybench.crawl")


PROG = "python -m pipelines.crawl"


class UsageError(ValueError):
    """A bad spec, flag, input or output folder: one line for the user, exit status 2."""


class _Parser(JobArgumentParser):
    def error(self, message: str):
        """A flag error is one line too (argparse's usage block is on --help)."""
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--site", required=True, help="site spec (JSON, or YAML by extension)")
    parser.add_argument("--output", required=True, help="output folder; DIR/pages is the cache")
    timeout = {f.name: f for f in dataclasses.fields(FetchConfig)}["timeout_seconds"]  # flag: --timeout
    parser.add_argument(
        "--timeout",
        type=float,
        default=timeout.default,
        help=f"{timeout.metadata['help']} (default: {timeout.default})",
    )
    add_config_flags(parser, FetchConfig, exclude=("timeout_seconds",))
    parser.add_argument("--max_pages", type=int, default=None, help="override the spec's max_pages")
    parser.add_argument(
        "--flush_every",
        type=int,
        default=1,
        help="new cache rows per parquet part (default 1: a killed crawl loses no page; "
        "small parts are merged when the crawl ends)",
    )
    parser.add_argument(
        "--progress_seconds", type=float, default=10.0, help="seconds between progress lines on stderr (default: 10)"
    )
    return parser


def load_spec_file(path: str) -> SiteSpec:
    """The site spec at `path` (local or gs://), or a UsageError that says what is wrong with it."""
    if is_local_path(path) and os.path.isdir(path):
        raise UsageError(f"--site {path}: is a folder, not a spec file")
    if not FileSystems.exists(path):
        raise UsageError(f"--site {path}: no such file")
    try:
        text = read_bytes(path).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(f"--site {path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except Exception as exc:  # any filesystem's read error
        raise UsageError(f"--site {path}: cannot be read ({type(exc).__name__}: {exc})") from None
    try:
        return parse_spec(text, yaml_format=path.lower().endswith((".yaml", ".yml")))
    except SpecError as exc:
        raise UsageError(f"--site {path}: {exc}") from None


def check_flags(args: argparse.Namespace) -> None:
    positive = {
        "--timeout": args.timeout,
        "--max_tries": args.max_tries,
        "--flush_every": args.flush_every,
        "--progress_seconds": args.progress_seconds,
    }
    at_least_zero = {
        "--backoff_base": args.backoff_base,
        "--backoff_max": args.backoff_max,
        "--max_retry_after": args.max_retry_after,
    }
    for flag, value in positive.items():
        if not math.isfinite(value) or value <= 0:
            raise UsageError(f"{flag} must be a number above 0, not {value}")
    for flag, value in at_least_zero.items():
        if not math.isfinite(value) or value < 0:
            raise UsageError(f"{flag} must be a number of 0 or more, not {value}")
    if args.max_pages is not None and args.max_pages < 1:
        raise UsageError(f"--max_pages must be at least 1, not {args.max_pages}")


class ProgressLines:
    """A progress line every `seconds` while the crawl runs, from a thread, so a slow request
    or a long Retry-After pause does not silence it."""

    def __init__(self, crawler: Crawler, seconds: float):
        self.crawler, self.seconds = crawler, seconds
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="crawl-progress", daemon=True)

    def line(self) -> str:
        current = self.crawler.current
        return f"crawl {self.crawler.spec.name}: {self.crawler.progress.line()}" + (
            f"; fetching {current}" if current else ""
        )

    def _loop(self) -> None:
        while not self._done.wait(self.seconds):
            LOG.info("%s", self.line())

    def __enter__(self) -> ProgressLines:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._thread.join(timeout=1.0)


def _write_report(args, spec: SiteSpec, config: FetchConfig, crawler: Crawler) -> None:
    pages = sorted(crawler.cache.values(), key=lambda p: p.url)
    write_report(args.output, crawl_stats(spec, config, pages, crawler.progress, args.site), pages)


def run(argv: Sequence[str] | None = None) -> Progress:
    """Crawl; returns this run's Progress. A stop (Ctrl-C; SIGTERM too under `main`) writes the
    cache and the report, then re-raises; a bad spec, flag or `--output` raises UsageError."""
    args = build_parser().parse_args(argv)
    check_flags(args)
    spec = load_spec_file(args.site)
    if args.max_pages is not None:
        spec = dataclasses.replace(spec, max_pages=args.max_pages)
    config = config_from_args(args, FetchConfig, timeout_seconds=args.timeout)
    try:
        check_output(args.output)
    except ForeignOutput as exc:
        raise UsageError(str(exc)) from None
    cache = PageCache(join(args.output, "pages"), args.flush_every)
    fetcher = Fetcher(config, max_bytes=spec.max_bytes, max_redirects=spec.max_redirects)
    crawler = Crawler(spec, fetcher, cache.load(), cache.add)
    crawler.progress.stopped = "running"
    try:
        with shielded():  # stats.json before the first request: the folder is the crawl's from now on
            _write_report(args, spec, config, crawler)
    except OSError as exc:
        raise UsageError(f"--output {args.output}: cannot be written ({type(exc).__name__}: {exc})") from None
    LOG.info("crawl %s: %d pages already cached in %s", spec.name, len(crawler.cache), args.output)
    try:
        with ProgressLines(crawler, args.progress_seconds):
            progress = crawler.run()
        if progress.stopped == "running":
            progress.stopped = "done"
    except KeyboardInterrupt:
        crawler.progress.stopped = "interrupted"
        raise
    finally:
        with shielded(raise_pending=False):
            cache.flush()
            cache.compact()
            _write_report(args, spec, config, crawler)
        LOG.info("crawl %s %s: %s", spec.name, crawler.progress.stopped, crawler.progress.line())
    return progress


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: exit 0 when done, 2 (one line) on a usage error, 128 + the signal
    number when SIGTERM, SIGINT or SIGHUP stopped it (after writing what it fetched), 1 when
    writing failed or a page hit an internal error (a bug; the page is an `internal_error` row)."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    try:
        with stop_on_signals():
            progress = run(argv)
    except UsageError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:  # Stopped (SIGTERM, SIGINT), or Ctrl-C before the handlers
        signum = exc.signum if isinstance(exc, Stopped) else signal.SIGINT
        print(
            f"{PROG}: stopped by {signal.Signals(signum).name}; every page fetched so far is kept "
            "under --output, and the same command resumes the crawl",
            file=sys.stderr,
        )
        return 128 + signum
    except OSError as exc:  # the disk filled up, the output went away: what was written is whole
        print(
            f"{PROG}: error: writing under --output failed ({type(exc).__name__}: {exc}); the pages "
            "written before are kept, and the same command resumes the crawl",
            file=sys.stderr,
        )
        return 1
    if progress.internal_errors:
        print(
            f"{PROG}: {progress.internal_errors} pages hit an internal error (a bug to report): "
            "see the internal_error rows of rejects/",
            file=sys.stderr,
        )
        return 1
    return 0
