"""The stories table (`output/stories/stories`) and the Story record LOT builds from."""

from __future__ import annotations

import dataclasses
from typing import Any

import pyarrow as pa

from schemas.common import with_version

STORIES_SCHEMA = with_version(
    pa.schema(
        [
            pa.field("story_id", pa.string(), nullable=False),
            pa.field("title", pa.string(), nullable=False),
            pa.field("text", pa.string(), nullable=False),
            pa.field("source", pa.string(), nullable=False),
            pa.field("url", pa.string(), nullable=False),
            pa.field("license", pa.string(), nullable=False),
            pa.field("lang", pa.string(), nullable=False),
            pa.field("outline", pa.list_(pa.string()), nullable=True),
            pa.field("input_id", pa.string(), nullable=False),
            pa.field("fetched_at", pa.string(), nullable=True),
            pa.field("n_chars", pa.int64(), nullable=False),
            pa.field("cluster_id", pa.string(), nullable=True),
            pa.field("cluster_size", pa.int64(), nullable=True),
            pa.field("cluster_members", pa.list_(pa.string()), nullable=True),
            # added by pipelines.stories: codec and evidence ("gb18030 (meta)") of crawled text
            pa.field("encoding", pa.string(), nullable=True),
        ]
    ),
    "stories",
)


@dataclasses.dataclass(frozen=True)
class Story:
    """One cleaned story. `outline` is an existing human outline, when the input had one."""

    story_id: str
    text: str
    title: str = ""
    source: str = ""
    url: str = ""
    license: str = ""
    lang: str = "zh"
    outline: tuple[str, ...] | None = None
    input_id: str = ""
    fetched_at: str | None = None
    cluster_id: str | None = None
    cluster_size: int | None = None
    cluster_members: tuple[str, ...] | None = None
    encoding: str | None = None

    def to_row(self) -> dict[str, Any]:
        row = dict(vars(self))  # every field is a str, int, None or tuple of str: no deep copy needed
        row["outline"] = list(self.outline) if self.outline is not None else None
        row["cluster_members"] = list(self.cluster_members) if self.cluster_members is not None else None
        row["n_chars"] = len(self.text)
        return row
