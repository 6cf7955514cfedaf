"""Schema helpers shared by every table, and the rejects table every job writes."""
from __future__ import annotations

import dataclasses
from typing import Any, Iterable

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


def to_arrow(rows: Iterable[dict], schema: pa.Schema) -> pa.Table:
    """Build a table from row dicts; raises if a required field is missing or mistyped."""
    rows = list(rows)
    missing = [f.name for f in schema if rows and f.name not in rows[0]]
    if missing:
        raise ValueError(f"rows lack schema fields {missing}")
    return pa.Table.from_pylist(rows, schema=schema)


def validate_rows(rows: Iterable[dict], schema: pa.Schema) -> pa.Table:
    """Check every row against `schema` (types and non-null fields) and return the table."""
    table = to_arrow(rows, schema)
    for field in schema:
        if not field.nullable and table.column(field.name).null_count:
            raise ValueError(f"null values in non-nullable field {field.name!r}")
    return table
