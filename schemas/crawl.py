"""The raw page cache `DIR/pages` the crawler writes and `pipelines.stories` reads.

One row per URL the crawler decided on: fetched pages (with status, headers and body bytes),
pages it refused to fetch (robots.txt) and failures (with `error`, a reason code, and
`detail`). `url` is the requested URL, the cache key that makes re-runs fetch nothing twice;
`final_url` is where redirects ended.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pyarrow as pa

from schemas.common import with_version
from schemas.ids import stable_id

PAGES_SCHEMA = with_version(
    pa.schema(
        [
            pa.field("page_id", pa.string(), nullable=False),
            pa.field("site", pa.string(), nullable=False),
            pa.field("url", pa.string(), nullable=False),
            pa.field("final_url", pa.string(), nullable=False),
            pa.field("kind", pa.string(), nullable=False),  # robots | list | story
            pa.field("status", pa.int64(), nullable=True),  # None: never answered / not requested
            pa.field("headers", pa.string(), nullable=False),  # JSON object, lower-case names
            pa.field("body", pa.binary(), nullable=False),
            pa.field("fetched_at", pa.string(), nullable=False),  # UTC ISO-8601
            pa.field("error", pa.string(), nullable=True),
            pa.field("detail", pa.string(), nullable=False),
            pa.field("attempts", pa.int64(), nullable=False),  # HTTP requests made for this row
            pa.field("redirects", pa.list_(pa.string()), nullable=False),
            pa.field("referrer", pa.string(), nullable=False),
            pa.field("depth", pa.int64(), nullable=False),
        ]
    ),
    "pages",
)


@dataclasses.dataclass(frozen=True)
class Page:
    """One cache row; `ok` pages carry an HTML (or robots.txt) body worth reading."""

    site: str
    url: str
    final_url: str
    kind: str
    status: int | None
    headers: str
    body: bytes
    fetched_at: str
    error: str | None = None
    detail: str = ""
    attempts: int = 0
    redirects: tuple[str, ...] = ()
    referrer: str = ""
    depth: int = 0

    @property
    def page_id(self) -> str:
        return stable_id("page", self.site, self.url)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def requested(self) -> bool:
        return self.attempts > 0

    def to_row(self) -> dict[str, Any]:
        row = dataclasses.asdict(self)
        row["redirects"] = list(self.redirects)
        return {"page_id": self.page_id, **row}

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Page:
        fields = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in row.items() if k in fields}
        values["redirects"] = tuple(values.get("redirects") or ())
        values["body"] = values.get("body") or b""
        return cls(**values)
