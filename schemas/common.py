"""Schema helpers shared by every table, and the rejects table every job writes."""

from __future__ import annotations

import dataclasses
import json
from json.encoder import encode_basestring
from typing import Any, NamedTuple

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


class Loc(NamedTuple):
    """Where one record parked on disk is (pipelines.engine.spill): its file, and its pickle's
    offset and length there. Defined here, with no Beam, so a pool worker can unpickle the
    blocks that carry locations (pipelines.engine.pool)."""

    path: str
    offset: int
    length: int


class JsonlEntry(NamedTuple):
    """One record of a grouped JSON-lines export (pipelines.engine WriteJsonlGroups): the
    group whose file it goes to, its sort key within that file, the record."""

    group: Any
    sort_key: Any
    record: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Reject:
    """One input record a stage did not use, and why."""

    stage: str
    input_id: str
    reason: str
    detail: Any = ""  # a message, or a dict of facts

    def to_row(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "input_id": self.input_id,
            "reason": self.reason,
            "detail": reject_detail(self.detail),
        }


def reject_detail(detail: Any) -> str:
    """A rejects row's `detail` as JSON text: a dict of facts as it is, a message as
    {"message": "..."}, so every detail parses with `json.loads`."""
    if isinstance(detail, str) and detail.startswith("{"):
        try:
            if isinstance(json.loads(detail), dict):
                return detail
        except ValueError:
            pass
    if not isinstance(detail, dict):  # json.dumps({"message": ...}) without building an encoder per row
        return '{"message": ' + encode_basestring(str(detail)) + "}"
    return json.dumps(detail, ensure_ascii=False, sort_keys=True, default=str)


def detail_message(detail: str) -> str:
    """The human-readable text of a rejects `detail` (its message, else the JSON as it is)."""
    try:
        value = json.loads(detail)
    except ValueError:
        return detail
    return value["message"] if isinstance(value, dict) and set(value) == {"message"} else detail


def with_version(schema: pa.Schema, table: str) -> pa.Schema:
    """Attach the schema version and table name as parquet metadata."""
    return schema.with_metadata({"schema_version": SCHEMA_VERSION, "table": table})
