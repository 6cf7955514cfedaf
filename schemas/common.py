"""Schema helpers shared by every table, and the rejects table every job writes."""
from __future__ import annotations

import dataclasses
from typing import Any

import pyarrow as pa

SCHEMA_VERSION = "1.0"

REJECTS_SCHEMA = pa.schema(
    [
        pa.field("stage", pa.string(), nullable=False),
        pa.field("input_id", pa.string(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),
        pa.field("detail", pa.string(), nullable=False),
    ],
    metadata={"schema_version": SCHEMA_VERSION, "table": "rejects"},
)


@dataclasses.dataclass(frozen=True)
class Reject:
    """One input record a stage did not use, and why."""

    stage: str
    input_id: str
    reason: str
    detail: str = ""

    def to_row(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def with_version(schema: pa.Schema, table: str) -> pa.Schema:
    """Attach the schema version and table name as parquet metadata."""
    return schema.with_metadata({"schema_version": SCHEMA_VERSION, "table": table})
