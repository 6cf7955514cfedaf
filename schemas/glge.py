"""GLGE difficulty-level records (GLGE paper section 2.4; SPEC "GLGE").

A task in the GLGE layout is six aligned line files, `{train,dev,test}.{src,tgt}`.
`GlgeTask` carries their raw bytes (so dev, test and Easy are copied byte for byte);
`TaskLevels` carries the per-line scores and the line indices chosen for every level;
`LEVELS_SCHEMA` is the parquet table of all levels (one row per training line per level).
Records that travel between Beam steps are frozen dataclasses (pickled, never schema-coded);
NamedTuples are only used inside one step.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import pyarrow as pa

from schemas.common import with_version

SPLITS = ("train", "dev", "test")
SIDES = ("src", "tgt")
FILES = tuple(f"{split}.{side}" for split in SPLITS for side in SIDES)
LEVELS = ("easy", "medium", "medium+", "hard")

LEVELS_SCHEMA = with_version(
    pa.schema(
        [
            pa.field("example_id", pa.string(), nullable=False),
            pa.field("task", pa.string(), nullable=False),
            pa.field("level", pa.string(), nullable=False),
            pa.field("split", pa.string(), nullable=False),
            pa.field("line_index", pa.int64(), nullable=False),  # 0-based line in Easy train
            pa.field("score", pa.float64(), nullable=True),  # null: no tokens left
            pa.field("n_tokens", pa.int64(), nullable=False),
            pa.field("low_freq_rank", pa.int64(), nullable=True),  # 0 = lowest score; null: no tokens
        ]
    ),
    "glge_levels",
)


@dataclasses.dataclass(frozen=True)
class GlgeTask:
    """One task's six files as raw bytes, with the names used in error messages.

    `lang` picks the tokenizer profile: "en" (GLGE tasks) or "zh" (LOT tasks).
    `files` maps "train.src" ... "test.tgt" to bytes; `names` maps them to display names.
    """

    task: str
    lang: str
    files: dict[str, bytes]
    names: dict[str, str]
    origin: str = "glge"


@dataclasses.dataclass(frozen=True)
class LevelRow:
    example_id: str
    task: str
    level: str
    split: str
    line_index: int
    score: float | None
    n_tokens: int
    low_freq_rank: int | None

    def to_row(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class TaskLevels:
    """Scores and selections of one task, plus the files it needs to write them.

    `selected[level]` is the ascending tuple of chosen training line indices;
    `summary` holds the JSON-able per-level sizes and test/train overlap rates.
    """

    task: str
    files: dict[str, bytes]
    scores: tuple[float | None, ...]
    n_tokens: tuple[int, ...]
    ranks: tuple[int | None, ...]
    selected: dict[str, tuple[int, ...]]
    summary: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """One task to build, found when the job runs (the `load` stage's input).

    `kind` is "glge" (six files under `location/{task}_data/org_data/`) or a LOT table kind
    ("plotcom", "outgen") whose parquet files are `parquet_paths` under `location`.
    """

    task: str
    kind: str
    location: str
    parquet_paths: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class TaskSummary:
    """What writing one task's level files reports: its per-level summary for stats.json."""

    task: str
    summary: dict[str, Any]


class LotTable(NamedTuple):
    """The rows of one LOT parquet file, with its path (for error messages and order)."""

    path: str
    rows: list[dict[str, Any]]


class LotRow(NamedTuple):
    """A checked LOT row; examples are ordered by (example_id, table, row_number)."""

    example_id: str
    table: str
    row_number: int
    row: dict[str, Any]


class SrcTgt(NamedTuple):
    """One example as the two lines of a GLGE task (source and target)."""

    src: str
    tgt: str


class LevelFile(NamedTuple):
    """One output file: `{level}/{task}_data/org_data/{key}` holding `data`."""

    level: str
    key: str
    data: bytes
