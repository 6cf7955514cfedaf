"""Every table the engine writes, empty ones included, reads in pandas, DuckDB, polars and
Hugging Face datasets as they are (issue: a 0-row row group broke `datasets`)."""

from __future__ import annotations

import json
import os

import apache_beam as beam
import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelines.engine import WriteTable
from pipelines.engine.parquet_files import parquet_bytes
from schemas.common import REJECTS_SCHEMA, Reject, detail_message, reject_detail
from tests.beam_report import pipeline

SCHEMA = pa.schema([pa.field("id", pa.string(), nullable=False), pa.field("n", pa.int64(), nullable=False)])


def write(folder, rows, shards=None):
    with pipeline() as p:
        _ = p | beam.Create(rows) | WriteTable(str(folder), SCHEMA, lambda r: r["id"], shards=shards)
    return folder


def hf_rows(folder, streaming: bool) -> int:
    datasets = pytest.importorskip("datasets")
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    datasets.disable_progress_bars()
    ds = datasets.load_dataset(
        "parquet",
        data_files=str(folder / "*.parquet"),
        streaming=streaming,
        cache_dir=str(folder.parent / f"hf-{folder.name}-{streaming}"),
    )
    return sum(1 for _ in ds["train"]) if streaming else ds["train"].num_rows


@pytest.mark.parametrize(
    "rows, shards", [([], None), ([], 3), ([{"id": "a", "n": 1}], 3), ([{"id": f"r{i}", "n": i} for i in range(50)], 2)]
)
def test_tables_read_everywhere(tmp_path, rows, shards):
    folder = write(tmp_path / "t", rows, shards)
    files = sorted(folder.glob("*.parquet"))
    assert files and all(pq.read_metadata(f).num_row_groups == 0 for f in files if pq.read_metadata(f).num_rows == 0)
    assert len(pd.read_parquet(folder)) == len(rows)
    assert duckdb.sql(f"select count(*) from '{folder}/*.parquet'").fetchall()[0][0] == len(rows)
    assert pl.read_parquet(str(folder / "*.parquet")).height == len(rows)
    assert hf_rows(folder, streaming=True) == len(rows)
    if rows:
        assert hf_rows(folder, streaming=False) == len(rows)


def test_small_tables_have_no_empty_row_group(tmp_path):
    data = parquet_bytes([], REJECTS_SCHEMA)
    assert pq.ParquetFile(pa.BufferReader(data)).metadata.num_row_groups == 0
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "part-0.parquet").write_bytes(data)
    assert hf_rows(tmp_path / "r", streaming=True) == 0


@pytest.mark.parametrize(
    "detail", ["", 'q"uo\\te', "中文\n\t\x00\x1f\u2028", "\ud800", 3, 2.5, None, ("a", 1), "{not json"]
)
def test_a_message_detail_is_the_json_text_json_dumps_makes(detail):
    """A detail that is not a dict is {"message": str(detail)}, written exactly as json.dumps
    (ensure_ascii=False, sort_keys=True) writes it, without json.dumps per row."""
    want = json.dumps({"message": str(detail)}, ensure_ascii=False, sort_keys=True, default=str)
    assert reject_detail(detail) == want


@pytest.mark.parametrize(
    "detail, message",
    [
        ("same text as a:1", "same text as a:1"),
        ("quote ' and \" and 中文", "quote ' and \" and 中文"),
        ({"found": 0, "tried": ["chapter"]}, None),
    ],
)
def test_reject_detail_is_json(detail, message):
    row = Reject("stage", "in:1", "reason", detail).to_row()
    value = json.loads(row["detail"])
    assert isinstance(value, dict) and reject_detail(row["detail"]) == row["detail"]
    assert value == ({"message": message} if message is not None else detail)
    assert detail_message(row["detail"]) == (message if message is not None else row["detail"])


def test_globstar_matches_zero_or_more_folders_and_folders_take_compressed_files(tmp_path):
    """`games/**/*.json` skipped the games at the top (Beam's `**/` needs one folder or more;
    Python's glob and the shells take zero); a folder counts `a.txt.gz` as a `.txt` file."""
    from pipelines.engine.paths import expand_input, input_names

    for name in ("a.json", "sub/b.json", "sub/deeper/c.json", "sub/d.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}\n")
    pattern = f"{tmp_path}/**/*.json"
    found = expand_input(pattern)
    assert sorted(input_names(found, pattern).values()) == ["a.json", "sub/b.json", "sub/deeper/c.json"]
    assert expand_input(f"{tmp_path}/*.json") == [f"{tmp_path}/a.json"]
    (tmp_path / "sub" / "e.txt.gz").write_bytes(b"")
    (tmp_path / "sub" / "f.jsonl.bz2").write_bytes(b"")
    assert [p.rsplit("/", 1)[1] for p in expand_input(str(tmp_path / "sub"), (".txt",))] == ["d.txt", "e.txt.gz"]
    assert [p.rsplit("/", 1)[1] for p in expand_input(str(tmp_path / "sub"), (".jsonl", ".txt"))] == ["f.jsonl.bz2"]
