"""LOT task tables (SPEC "Artifacts"; LOT paper section 3; PEERS.md 1.2 for JSONL fields).

Parquet tables carry ids, splits and provenance; `to_jsonl()` gives the original LongLM
field names and conventions (ClozeT label is the string "0"/"1", SenPos label an int that
is 1-based over `[MASK]`s, placeholders `<mask>` / `[MASK]` / `<MASK>`).
"""
from __future__ import annotations

import dataclasses
from typing import Any

import pyarrow as pa

from schemas.common import with_version

SPLITS = ("train", "val", "test")
CLOZET_MASK, SENPOS_MASK, PLOTCOM_MASK = "<mask>", "[MASK]", "<MASK>"
TASKS = ("clozet", "senpos", "plotcom", "outgen")

_COMMON = [
    pa.field("example_id", pa.string(), nullable=False),
    pa.field("story_id", pa.string(), nullable=False),
    pa.field("split", pa.string(), nullable=False),
]

CLOZET_SCHEMA = with_version(pa.schema(_COMMON + [
    pa.field("story", pa.string(), nullable=False),
    pa.field("plot0", pa.string(), nullable=False),
    pa.field("plot1", pa.string(), nullable=False),
    pa.field("label", pa.string(), nullable=False),
    pa.field("right_index", pa.int64(), nullable=False),
    pa.field("annotator", pa.string(), nullable=False),
]), "clozet")

SENPOS_SCHEMA = with_version(pa.schema(_COMMON + [
    pa.field("story", pa.string(), nullable=False),
    pa.field("sentence", pa.string(), nullable=False),
    pa.field("label", pa.int64(), nullable=False),
    pa.field("n_candidates", pa.int64(), nullable=False),
    pa.field("removed_index", pa.int64(), nullable=False),
    pa.field("reviewed", pa.bool_(), nullable=False),
]), "senpos")

PLOTCOM_SCHEMA = with_version(pa.schema(_COMMON + [
    pa.field("story", pa.string(), nullable=False),
    pa.field("plot", pa.string(), nullable=False),
    pa.field("removed_index", pa.int64(), nullable=False),
    pa.field("origin", pa.string(), nullable=False),
]), "plotcom")

OUTGEN_SCHEMA = with_version(pa.schema(_COMMON + [
    pa.field("title", pa.string(), nullable=False),
    pa.field("outline", pa.list_(pa.string()), nullable=False),
    pa.field("story", pa.string(), nullable=False),
    pa.field("outline_source", pa.string(), nullable=False),
    pa.field("title_source", pa.string(), nullable=False),  # input | first_sentence | none (untitled)
]), "outgen")

SCHEMAS = {"clozet": CLOZET_SCHEMA, "senpos": SENPOS_SCHEMA, "plotcom": PLOTCOM_SCHEMA,
           "outgen": OUTGEN_SCHEMA}
# Fields of the original LongLM JSONL files, in their order (PEERS.md 1.2).
JSONL_FIELDS = {"clozet": ("story", "plot0", "plot1", "label"),
                "senpos": ("story", "sentence", "label"),
                "plotcom": ("story", "plot"),
                "outgen": ("title", "outline", "story")}
# Text fields per task (overlap audit: no n-gram crosses two fields).
TEXT_FIELDS = {"clozet": ("story", "plot0", "plot1"), "senpos": ("story", "sentence"),
               "plotcom": ("story", "plot"), "outgen": ("title", "story", "outline")}


@dataclasses.dataclass(frozen=True)
class ClozeTExample:
    example_id: str
    story_id: str
    split: str
    story: str
    plot0: str
    plot1: str
    label: str
    right_index: int
    annotator: str = ""

    def to_row(self) -> dict[str, Any]:
        return dict(vars(self))  # the fields in order (all flat values: no deep copy needed)


@dataclasses.dataclass(frozen=True)
class SenPosExample:
    example_id: str
    story_id: str
    split: str
    story: str
    sentence: str
    label: int
    n_candidates: int
    removed_index: int
    reviewed: bool = False

    def to_row(self) -> dict[str, Any]:
        return dict(vars(self))  # the fields in order (all flat values: no deep copy needed)


@dataclasses.dataclass(frozen=True)
class PlotComExample:
    example_id: str
    story_id: str
    split: str
    story: str
    plot: str
    removed_index: int
    origin: str = "auto"

    def to_row(self) -> dict[str, Any]:
        return dict(vars(self))  # the fields in order (all flat values: no deep copy needed)


@dataclasses.dataclass(frozen=True)
class OutGenExample:
    example_id: str
    story_id: str
    split: str
    title: str
    outline: tuple[str, ...]
    story: str
    outline_source: str = "rake"
    title_source: str = "input"

    def to_row(self) -> dict[str, Any]:
        row = dict(vars(self))
        row["outline"] = list(self.outline)
        return row


def to_jsonl(task: str, row: dict[str, Any]) -> dict[str, Any]:
    """The original LongLM record for a table row (field names and types as released)."""
    return {field: row[field] for field in JSONL_FIELDS[task]}
