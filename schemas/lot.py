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


@dataclasses.dataclass(frozen=True)
class TaskExample:
    """The fields every LOT task table opens with; `to_row()` is the table row."""

    example_id: str
    story_id: str
    split: str

    def to_row(self) -> dict[str, Any]:
        return dict(vars(self))  # the fields in order (all flat values: no deep copy needed)


@dataclasses.dataclass(frozen=True)
class ClozeTExample(TaskExample):
    story: str
    plot0: str
    plot1: str
    label: str
    right_index: int
    annotator: str = ""


@dataclasses.dataclass(frozen=True)
class SenPosExample(TaskExample):
    story: str
    sentence: str
    label: int
    n_candidates: int
    removed_index: int
    reviewed: bool = False


@dataclasses.dataclass(frozen=True)
class PlotComExample(TaskExample):
    story: str
    plot: str
    removed_index: int
    origin: str = "auto"


@dataclasses.dataclass(frozen=True)
class OutGenExample(TaskExample):
    title: str
    outline: tuple[str, ...]
    story: str
    outline_source: str = "rake"
    title_source: str = "input"  # input | first_sentence | none (untitled)

    def to_row(self) -> dict[str, Any]:
        row = dict(vars(self))
        row["outline"] = list(self.outline)
        return row


_ARROW_TYPES = {"str": pa.string(), "int": pa.int64(), "bool": pa.bool_(), "tuple[str, ...]": pa.list_(pa.string())}


def _table_schema(example: type, table: str) -> pa.Schema:
    """A task table's schema from its example dataclass: a non-nullable column per field, in order."""
    return with_version(
        pa.schema([pa.field(f.name, _ARROW_TYPES[f.type], nullable=False) for f in dataclasses.fields(example)]), table
    )


CLOZET_SCHEMA = _table_schema(ClozeTExample, "clozet")
SENPOS_SCHEMA = _table_schema(SenPosExample, "senpos")
PLOTCOM_SCHEMA = _table_schema(PlotComExample, "plotcom")
OUTGEN_SCHEMA = _table_schema(OutGenExample, "outgen")

SCHEMAS = {"clozet": CLOZET_SCHEMA, "senpos": SENPOS_SCHEMA, "plotcom": PLOTCOM_SCHEMA, "outgen": OUTGEN_SCHEMA}
# Fields of the original LongLM JSONL files, in their order (PEERS.md 1.2).
JSONL_FIELDS = {
    "clozet": ("story", "plot0", "plot1", "label"),
    "senpos": ("story", "sentence", "label"),
    "plotcom": ("story", "plot"),
    "outgen": ("title", "outline", "story"),
}
# Text fields per task (overlap audit: no n-gram crosses two fields).
TEXT_FIELDS = {
    "clozet": ("story", "plot0", "plot1"),
    "senpos": ("story", "sentence"),
    "plotcom": ("story", "plot"),
    "outgen": ("title", "story", "outline"),
}


def to_jsonl(task: str, row: dict[str, Any]) -> dict[str, Any]:
    """The original LongLM record for a table row (field names and types as released)."""
    return {field: row[field] for field in JSONL_FIELDS[task]}


def example_order(row: dict[str, Any]) -> tuple[str, str]:
    """The order of a task table's rows and of every file exported from it: split, then id."""
    return row["split"], row["example_id"]
