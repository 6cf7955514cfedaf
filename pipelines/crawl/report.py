"""The crawl's files under `--output`: the page cache `pages/`, the report (`rejects/`,
`stats.json`, `CARD.md`, `README.md`), and the check that `--output` is a crawl's folder.

Every file is written atomically (a temporary name outside the readers' `*.parquet` / report
names, then a rename) and with stop signals held off (`stopping.shielded`), so an interrupted
crawl leaves whole cache parts and a whole report.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re

import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems

from annotators.core.card import complete_card
from annotators.core.hf_card import readme as hf_readme
from annotators.stories.card import crawl_card
from annotators.stories.site_spec import SiteSpec
from pipelines.crawl.crawler import Progress
from pipelines.crawl.fetch import FetchConfig
from pipelines.crawl.stopping import shielded
from pipelines.engine import join, read_bytes, write_bytes
from pipelines.engine.commit import output_job
from pipelines.engine.parquet_files import parquet_bytes
from pipelines.engine.paths import is_local_path
from schemas.common import REJECTS_SCHEMA, SCHEMA_VERSION, Reject
from schemas.crawl import PAGES_SCHEMA, Page

LOG = logging.getLogger("storybench.crawl")
PART_NUMBER = re.compile(r"part-(\d+)\.parquet$")
# When a run ends, cache parts are merged into parts of up to MERGED_ROWS rows and MERGED_BYTES
# bytes of parquet (so a merge never holds more than that in memory); a part at either size stays.
MERGED_ROWS = 200
MERGED_BYTES = 64 * 1024 * 1024
MARKER = "stats.json"  # written before the first request: a folder without it is not the crawler's


class ForeignOutput(ValueError):
    """`--output` holds files the crawler did not write; it will not write among them."""


class PageCache:
    """The parquet part files of `DIR/pages`. Every `flush_every` new rows (default 1: each page
    as it is fetched, so even a killed crawl keeps every page it had) become a part; when a run
    ends (done, max_pages, SIGTERM, Ctrl-C) `compact` merges the small parts into parts of up
    to MERGED_ROWS rows."""

    def __init__(self, folder: str, flush_every: int = 1):
        self.folder, self.flush_every = folder, max(1, flush_every)
        self._buffer: list[Page] = []
        self._parts = self._existing_parts()
        self._size: dict[str, tuple[int, int]] = {}  # (rows, bytes) of each part read or written

    def _existing_parts(self) -> list[str]:
        try:
            found = FileSystems.match([join(self.folder, "part-*.parquet")])[0].metadata_list
        except Exception:  # no folder yet
            return []
        return sorted(m.path for m in found)

    def _read(self, path: str) -> pa.Table:
        data = read_bytes(path)
        table = pq.read_table(pa.BufferReader(data))
        self._size[path] = (table.num_rows, len(data))
        return table

    def load(self) -> list[Page]:
        """Every cached row; an unreadable part is renamed `*.corrupt` and its URLs refetched."""
        pages: list[Page] = []
        for path in self._parts:
            try:
                table = self._read(path)
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

    def _next_part(self) -> str:
        numbers = [int(m.group(1)) for p in self._parts if (m := PART_NUMBER.search(p))]
        return join(self.folder, f"part-{max(numbers, default=-1) + 1:05d}.parquet")

    def flush(self) -> None:
        """Write buffered rows as the next part file (temp name, then rename: never half a file;
        a stop signal during the write takes effect after it)."""
        if not self._buffer:
            return
        with shielded():
            self._write_part(parquet_bytes([p.to_row() for p in self._buffer], PAGES_SCHEMA), len(self._buffer))
            self._buffer.clear()

    def _write_part(self, data: bytes, rows: int) -> str:
        final = self._next_part()
        write_atomically(final, data)
        self._parts.append(final)
        self._size[final] = (rows, len(data))
        return final

    def compact(self) -> None:
        """Merge runs of small parts into parts of up to MERGED_ROWS rows / MERGED_BYTES, each
        written before its small parts are deleted (a crash between the two leaves those rows
        twice, which `load` and the stories job tolerate: the cache is keyed by URL, and a
        second copy of a story is an exact duplicate)."""
        for group in self._merge_groups():
            with shielded():
                tables = [self._read(p) for p in group]
                self._write_part(_merged_parquet(tables), sum(t.num_rows for t in tables))
                FileSystems.delete(group)
                self._parts = [p for p in self._parts if p not in group]

    def _merge_groups(self) -> list[list[str]]:
        groups: list[list[str]] = [[]]
        rows = size = 0
        for part in self._parts:
            part_rows, part_bytes = self._size.get(part, (MERGED_ROWS, MERGED_BYTES))
            if rows + part_rows > MERGED_ROWS or size + part_bytes > MERGED_BYTES:
                groups.append([])
                rows = size = 0
            groups[-1].append(part)
            rows, size = rows + part_rows, size + part_bytes
        return [g for g in groups if len(g) > 1]


def _merged_parquet(tables: list[pa.Table]) -> bytes:
    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(sink, PAGES_SCHEMA, compression="zstd") as writer:
        writer.write_table(pa.concat_tables([t.cast(PAGES_SCHEMA) for t in tables]))
    return sink.getvalue().to_pybytes()


def write_atomically(path: str, data: bytes) -> None:
    """Write `path` whole or not at all: a temporary `<path>.tmp` (which no reader's glob
    matches: `pipelines.stories --pages` reads `*.parquet`), then a rename over `path`."""
    tmp = path + ".tmp"
    write_bytes(tmp, data)
    FileSystems.rename([tmp], [path])  # replaces `path` (os.rename locally; copy + delete on GCS)


def crawl_stats(spec: SiteSpec, config: FetchConfig, pages: list[Page], progress: Progress, spec_path: str) -> dict:
    """stats.json: every URL decided is a page (written) or a failure (rejected)."""
    reasons: dict[str, int] = {}
    for page in pages:
        if page.error:
            reasons[page.error] = reasons.get(page.error, 0) + 1
    rejected = sum(reasons.values())
    stage = {
        "read": len(pages),
        "written": len(pages) - rejected,
        "rejected": rejected,
        "outputs": len(pages) - rejected,
        "rejected_by_reason": dict(sorted(reasons.items())),
        "balanced": True,
    }
    return {
        "job": "crawl",
        "schema_version": SCHEMA_VERSION,
        "seed": None,
        "runner": "single-process",
        "beam_version": "-",
        "inputs": [spec_path],
        "config": {"site": spec.to_json(), "fetch": dataclasses.asdict(config)},
        "stages": {"crawl": stage},
        "tables": {"pages": len(pages)},
        "exports": {},
        "balanced": True,
        "this_run": dataclasses.asdict(progress),
        "requested_pages_total": sum(1 for p in pages if p.requested and p.kind != "robots"),
    }


def write_report(output: str, stats: dict, pages: list[Page]) -> None:
    rows = [Reject("crawl", p.url, p.error, p.detail).to_row() for p in sorted(pages, key=lambda p: p.url) if p.error]
    write_atomically(join(output, "rejects", "part-00000-of-00001.parquet"), parquet_bytes(rows, REJECTS_SCHEMA))
    write_atomically(join(output, "stats.json"), (json.dumps(stats, indent=2, ensure_ascii=False) + "\n").encode())
    card_text = complete_card(crawl_card(stats), stats)
    write_atomically(join(output, "CARD.md"), card_text.encode("utf-8"))
    tables = {**stats["tables"], "rejects": len(rows)}  # the README's configs: every table folder
    write_atomically(join(output, "README.md"), hf_readme({**stats, "tables": tables}, card_text).encode("utf-8"))


def check_output(output: str) -> None:
    """Refuse an `--output` that is a file, or a folder holding files but no crawl's stats.json
    (as the Beam jobs refuse to replace a folder without stats.json): the crawl writes into
    its folder, so it would overwrite a user's README.md or mix its cache with another job's."""
    if is_local_path(output) and os.path.exists(output) and not os.path.isdir(output):
        raise ForeignOutput(f"--output {output}: is a file, not a folder")
    try:
        existing = FileSystems.match([output.rstrip("/") + "/**"])[0].metadata_list
    except Exception:  # no such folder: the crawl makes it
        return
    if not existing:
        return
    stats = join(output, MARKER)
    if not FileSystems.exists(stats):
        raise ForeignOutput(
            f"--output {output} holds files but no {MARKER}: it is not a crawl's output, "
            "so the crawler will not write into it; choose another --output"
        )
    job = output_job(stats)
    if job != "crawl":
        raise ForeignOutput(
            f"--output {output} is not a crawl's output ({MARKER} is "
            f"{'of job ' + repr(job) if job else 'unreadable'}); choose another --output"
        )
