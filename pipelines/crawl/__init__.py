"""`python -m pipelines.crawl --site SPEC --output DIR`: polite, resumable crawl of one site.

Not a Beam job on purpose: politeness means one request at a time per host, which a single
process does best (SPEC "Crawl and clean"). The loop is `pipelines.crawl.crawler`; this module
is the command line, the page cache `DIR/pages` (parquet parts written atomically every
`--flush_every` rows and on exit, Ctrl-C included) and the report: `DIR/rejects/` (pages
that failed, with reasons), `DIR/stats.json` and `DIR/CARD.md`. Re-running with the same
`--output` requests nothing already in the cache.

How it commits: the cache is resumable, so the output folder is never replaced wholesale
(unlike the Beam jobs' staging). Every file is written under `--output` only, each one
atomically (a temporary name outside the readers' `*.parquet` / report names, then a rename),
so an interrupted crawl leaves whole cache parts and the previous whole report. The fetch flags come from
`pipelines.crawl.fetch.FetchConfig`; the card text and reject reasons from `annotators.stories`.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
from typing import Sequence

import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems

from pipelines.crawl.crawler import Crawler, Progress
from pipelines.crawl.fetch import FetchConfig, Fetcher
from annotators.stories.site_spec import SiteSpec, parse_spec
from annotators.core.card import complete_card
from annotators.core.hf_card import readme as hf_readme
from annotators.stories.card import crawl_card
from pipelines.engine import add_config_flags, config_from_args, join, read_bytes, write_bytes
from pipelines.engine.files import parquet_bytes
# not a Beam job: no PipelineOptions, so unknown flags are errors; flags still take `-` or `_`
from pipelines.engine import alias_separators
from schemas.common import REJECTS_SCHEMA, SCHEMA_VERSION, Reject
from schemas.crawl import PAGES_SCHEMA, Page

LOG = logging.getLogger("storybench.crawl")


class PageCache:
    """The parquet part files of `DIR/pages`: read them all, append new rows in batches."""

    def __init__(self, folder: str, flush_every: int = 20):
        self.folder, self.flush_every = folder, max(1, flush_every)
        self._buffer: list[Page] = []
        self._parts = self._existing_parts()

    def _existing_parts(self) -> list[str]:
        try:
            found = FileSystems.match([join(self.folder, "part-*.parquet")])[0].metadata_list
        except Exception:  # no folder yet
            return []
        return sorted(m.path for m in found)

    def load(self) -> list[Page]:
        """Every cached row; an unreadable part is renamed `*.corrupt` and its URLs refetched."""
        pages: list[Page] = []
        for path in self._parts:
            try:
                table = pq.read_table(pa.BufferReader(read_bytes(path)))
            except Exception as exc:
                LOG.warning("unreadable cache part %s (%s): renamed, its pages will be refetched", path, exc)
                FileSystems.rename([path], [path + ".corrupt"])
                continue
            pages.extend(Page.from_row(row) for row in table.to_pylist())
        self._parts = [p for p in self._parts if FileSystems.exists(p)]
        return pages

    def add(self, page: Page) -> None:
        self._buffer.append(page)
        if len(self._buffer) >= self.flush_every:
            self.flush()

    def flush(self) -> None:
        """Write buffered rows as the next part file (temp name, then rename: never half a file)."""
        if not self._buffer:
            return
        name = f"part-{len(self._parts):05d}.parquet"
        final = join(self.folder, name)
        write_atomically(final, parquet_bytes([p.to_row() for p in self._buffer], PAGES_SCHEMA))
        self._parts.append(final)
        self._buffer.clear()


def write_atomically(path: str, data: bytes) -> None:
    """Write `path` whole or not at all: a temporary `<path>.tmp` (which no reader's glob
    matches: `pipelines.stories --pages` reads `*.parquet`), then a rename over `path`."""
    tmp = path + ".tmp"
    write_bytes(tmp, data)
    FileSystems.rename([tmp], [path])  # replaces `path` (os.rename locally; copy + delete on GCS)


def crawl_stats(spec: SiteSpec, config: FetchConfig, pages: list[Page], progress: Progress,
                spec_path: str) -> dict:
    """stats.json: every URL decided is a page (written) or a failure (rejected)."""
    reasons: dict[str, int] = {}
    for page in pages:
        if page.error:
            reasons[page.error] = reasons.get(page.error, 0) + 1
    rejected = sum(reasons.values())
    stage = {"read": len(pages), "written": len(pages) - rejected, "rejected": rejected,
             "outputs": len(pages) - rejected, "rejected_by_reason": dict(sorted(reasons.items())),
             "balanced": True}
    return {"job": "crawl", "schema_version": SCHEMA_VERSION, "seed": None, "runner": "single-process",
            "beam_version": "-", "inputs": [spec_path],
            "config": {"site": spec.to_json(), "fetch": dataclasses.asdict(config)},
            "stages": {"crawl": stage}, "tables": {"pages": len(pages)}, "exports": {},
            "balanced": True, "this_run": dataclasses.asdict(progress),
            "requested_pages_total": sum(1 for p in pages if p.requested and p.kind != "robots")}


def write_report(output: str, stats: dict, pages: list[Page]) -> None:
    rows = [Reject("crawl", p.url, p.error, p.detail).to_row()
            for p in sorted(pages, key=lambda p: p.url) if p.error]
    write_atomically(join(output, "rejects", "part-00000-of-00001.parquet"), parquet_bytes(rows, REJECTS_SCHEMA))
    write_atomically(join(output, "stats.json"), (json.dumps(stats, indent=2, ensure_ascii=False) + "\n").encode())
    card_text = complete_card(crawl_card(stats), stats)
    write_atomically(join(output, "CARD.md"), card_text.encode("utf-8"))
    tables = {**stats["tables"], "rejects": len(rows)}  # the README's configs: every table folder
    write_atomically(join(output, "README.md"), hf_readme({**stats, "tables": tables}, card_text).encode("utf-8"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pipelines.crawl", description=__doc__.splitlines()[0])
    parser.add_argument("--site", required=True, help="site spec (JSON, or YAML by extension)")
    parser.add_argument("--output", required=True, help="output folder; DIR/pages is the cache")
    timeout = {f.name: f for f in dataclasses.fields(FetchConfig)}["timeout_seconds"]  # flag: --timeout
    parser.add_argument("--timeout", type=float, default=timeout.default,
                        help=f"{timeout.metadata['help']} (default: {timeout.default})")
    add_config_flags(parser, FetchConfig, exclude=("timeout_seconds",))
    parser.add_argument("--max_pages", type=int, default=None, help="override the spec's max_pages")
    parser.add_argument("--flush_every", type=int, default=20, help="cache rows per parquet part")
    alias_separators(parser)
    return parser


def run(argv: Sequence[str] | None = None) -> Progress:
    """Crawl; returns this run's Progress. Ctrl-C flushes the cache and the report, then re-raises."""
    args = build_parser().parse_args(argv)
    spec = parse_spec(read_bytes(args.site).decode("utf-8"), yaml_format=args.site.endswith((".yaml", ".yml")))
    if args.max_pages is not None:
        spec = dataclasses.replace(spec, max_pages=args.max_pages)
    config = config_from_args(args, FetchConfig, timeout_seconds=args.timeout)
    cache = PageCache(join(args.output, "pages"), args.flush_every)
    fetcher = Fetcher(config, max_bytes=spec.max_bytes, max_redirects=spec.max_redirects)
    crawler = Crawler(spec, fetcher, cache.load(), cache.add,
                      lambda p: LOG.info("crawl %s: %s", spec.name, p.line()))
    try:
        progress = crawler.run()
    except KeyboardInterrupt:
        crawler.progress.stopped = "interrupted"
        raise
    finally:
        cache.flush()
        pages = sorted(crawler.cache.values(), key=lambda p: p.url)
        write_report(args.output, crawl_stats(spec, config, pages, crawler.progress, args.site), pages)
        LOG.info("crawl %s %s: %s", spec.name, crawler.progress.stopped, crawler.progress.line())
    return progress


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    try:
        run()
    except KeyboardInterrupt:
        sys.exit(130)
