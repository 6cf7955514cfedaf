"""Parquet files written and sized: `write_parquet` streams sorted rows to one file, one row
group at a time; `parquet_bytes` makes a small table in memory; `row_bytes` estimates a row's
size from its values alone (what decides row groups and shard counts, the same on every runner).

Why a module of its own: the sorted table writer (pipelines.engine.sorted_tables), the crawl
job's page cache and the tests all write parquet the same way: zstd, nulls checked against
the schema, and no row group at all in an empty file. It does not import Beam: a local run's
pool workers write shards with it (pipelines.engine.merge_runs).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pipelines.engine.merge_runs import create

ROW_GROUP_ROWS = 65536  # rows per parquet row group at most: a shard is written group by group
ROW_GROUP_BYTES = 4 << 20  # ... and at most about this much row data (estimated) per group


def _check_nulls(table: pa.Table, schema: pa.Schema) -> None:
    for field in schema:
        if not field.nullable and table.column(field.name).null_count:
            raise ValueError(f"null values in non-nullable field {field.name!r}")


def _row_groups(rows: Iterable[dict], sized: bool = False):
    """Lists of rows, each closed at ROW_GROUP_ROWS rows or ROW_GROUP_BYTES of row data (a rule
    of the rows alone, so the layout never depends on the runner). `sized`: the rows come as
    (row, row_bytes(row)) pairs, the size already measured."""
    group, held = [], 0
    for item in rows:
        row, size = item if sized else (item, row_bytes(item))
        group.append(row)
        held += size
        if len(group) >= ROW_GROUP_ROWS or held >= ROW_GROUP_BYTES:
            yield group
            group, held = [], 0
    if group:
        yield group


def write_parquet(path: str, rows: Iterable[dict], schema: pa.Schema, *, sized: bool = False) -> int:
    """Sorted rows streamed to a parquet file at `path`, one row group at a time: only one row
    group's rows are ever dicts at once and the file is never held whole (`sized`: rows come
    as (row, row_bytes(row)) pairs). Returns the rows."""
    n = 0
    with create(path) as f:
        with pq.ParquetWriter(pa.PythonFile(f, mode="w"), schema, compression="zstd") as writer:
            for group in _row_groups(rows, sized):
                table = pa.Table.from_pylist(group, schema=schema)
                _check_nulls(table, schema)
                writer.write_table(table, row_group_size=ROW_GROUP_ROWS)
                n += len(group)
            # An empty table is its schema and no row group: a 0-row group makes readers that
            # size batches by row groups fail (Hugging Face datasets: "BatchSize must be greater
            # than 0"), while every reader takes a file without groups as 0 rows.
    return n


def parquet_bytes(rows: list[dict], schema: pa.Schema) -> bytes:
    """A small table as parquet bytes (no row group when empty, as `write_parquet`)."""
    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(sink, schema, compression="zstd") as writer:
        if rows:
            table = pa.Table.from_pylist(rows, schema=schema)
            _check_nulls(table, schema)
            writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _value_bytes(value: Any) -> int:
    """A value's size estimate: a string's or bytes' length, 8 per other scalar, and 8 plus
    its items' for a list, tuple or dict (values only)."""
    if isinstance(value, (str, bytes)):
        return len(value)
    if isinstance(value, (list, tuple)):
        if all(type(v) is str for v in value):  # most often: a list of words or sentences
            return sum(map(len, value)) + 8
        return sum(map(_value_bytes, value)) + 8
    if isinstance(value, dict):
        return sum(map(_value_bytes, value.values())) + 8
    return 8


def row_bytes(row: dict) -> int:
    return sum(map(_value_bytes, row.values()))
