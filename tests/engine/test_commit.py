"""Outputs committed as a whole: only a finished run replaces an output folder."""

from __future__ import annotations

import json

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from apache_beam.options.pipeline_options import PipelineOptions

from pipelines.engine import JobReport, WriteTable, make_pipeline, run_pipeline, staging_path

SCHEMA = pa.schema([pa.field("id", pa.string(), nullable=False), pa.field("n", pa.int64(), nullable=False)])


def _job(output, values, tables=("a", "b")):
    """A toy job writing each table of `tables` through the staging folder."""
    options = PipelineOptions([])
    p = make_pipeline(options)
    out = staging_path(str(output))
    report = JobReport(out, "toy", config={}, seed=0, inputs=[], options=options)
    rows = p | beam.Create(values) | beam.Map(lambda v: {"id": f"r{v}", "n": v if v >= 0 else None})
    for name in tables:
        report.tally(rows | f"W{name}" >> WriteTable(f"{out}/{name}", SCHEMA, lambda r: r["id"], name=name))
    report.finish(p)
    return run_pipeline(p, commit_to=str(output))


def _snapshot(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_second_run_with_fewer_files_leaves_no_stale_file(tmp_path):
    out = tmp_path / "out"
    _job(out, [1, 2, 3])
    assert {"a", "b"} <= {p.name for p in out.iterdir()}
    _job(out, [4], tables=("a",))
    assert not (out / "b").exists() and not (tmp_path / "out.incomplete").exists()
    assert pq.read_table(out / "a").column("n").to_pylist() == [4]
    assert json.loads((out / "stats.json").read_text())["tables"]["a"] == 1


def test_a_failed_run_leaves_the_previous_output_untouched(tmp_path):
    out = tmp_path / "out"
    _job(out, [1, 2])
    before = _snapshot(out)
    with pytest.raises(Exception, match="non-nullable"):
        _job(out, [5, -1])  # a null in a non-nullable column fails the write
    assert _snapshot(out) == before


def test_a_dry_run_touches_nothing(tmp_path):
    out = tmp_path / "out"
    _job(out, [1])
    before = _snapshot(out)
    options = PipelineOptions(["--dry_run=True"])
    p = make_pipeline(options)
    report = JobReport(staging_path(str(out)), "toy", config={}, seed=0, inputs=[], options=options)
    report.tally(
        p | beam.Create([{"id": "x", "n": 1}]) | WriteTable(staging_path(str(out)) + "/a", SCHEMA, lambda r: r["id"])
    )
    report.finish(p)
    assert _snapshot(out) == before and not (tmp_path / "out.incomplete").exists()


def test_a_folder_that_is_not_a_storybench_output_is_never_replaced(tmp_path):
    out = tmp_path / "home"
    out.mkdir()
    (out / "thesis.tex").write_text("precious")
    with pytest.raises(FileExistsError, match="not a storybench output"):
        _job(out, [1])
    assert (out / "thesis.tex").read_text() == "precious"
