"""Outputs committed as a whole: only a finished run replaces an output folder."""

from __future__ import annotations

import json
import pathlib

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from apache_beam.options.pipeline_options import PipelineOptions

from pipelines.engine import JobReport, WriteTable, make_pipeline, run_pipeline, staging_path
from pipelines.engine.usage import Interrupted

SCHEMA = pa.schema([pa.field("id", pa.string(), nullable=False), pa.field("n", pa.int64(), nullable=False)])


def _job(output, values, tables=("a", "b"), job="toy", inputs=(), interrupt=False):
    """A toy job writing each table of `tables` through the staging folder; with `interrupt`,
    Ctrl-C comes once a table is written there (`_ctrl_c`)."""
    options = PipelineOptions([])
    p = make_pipeline(options)
    out = staging_path(str(output))
    report = JobReport(out, job, config={}, seed=0, inputs=[str(i) for i in inputs], options=options)
    rows = p | beam.Create(values) | beam.Map(lambda v: {"id": f"r{v}", "n": v if v >= 0 else None})
    for name in tables:
        written = rows | f"W{name}" >> WriteTable(f"{out}/{name}", SCHEMA, lambda r: r["id"], name=name)
        report.tally(written)
        if interrupt:
            _ = written | f"CtrlC{name}" >> beam.Map(_ctrl_c, out)
    report.finish(p)
    return run_pipeline(p, commit_to=str(output))


_STAGED: list[list[str]] = []


def _ctrl_c(tally, staging: str):
    """KeyboardInterrupt in a step, as Python raises it when Ctrl-C comes (Beam re-raises it
    as a RuntimeError); notes what the staging folder holds then."""
    _STAGED.append(sorted(str(p) for p in pathlib.Path(staging).rglob("*") if p.is_file()))
    raise KeyboardInterrupt


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


def test_an_interrupted_run_removes_its_staging_folder_and_leaves_the_previous_output(tmp_path):
    out = tmp_path / "out"
    _job(out, [1, 2])
    before = _snapshot(out)
    _STAGED.clear()
    with pytest.raises(Interrupted) as stopped:
        _job(out, [3, 4], interrupt=True)
    assert _STAGED and any("part-" in p for p in _STAGED[0])  # a table was staged when it came
    assert not (tmp_path / "out.incomplete").exists()
    assert _snapshot(out) == before
    assert stopped.value.line() == f"interrupted: nothing was written; the previous output in {str(out)!r} is unchanged"
    with pytest.raises(Interrupted) as stopped:
        _job(tmp_path / "new", [3], interrupt=True)
    assert stopped.value.line() == f"interrupted: nothing was written; {str(tmp_path / 'new')!r} was not created"
    assert not (tmp_path / "new").exists() and not (tmp_path / "new.incomplete").exists()


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


def test_another_jobs_output_is_never_replaced(tmp_path):
    """`--output` naming a crawl's folder in the stories job (or any other job's output)."""
    out = tmp_path / "out"
    _job(out, [1], job="crawl")
    before = _snapshot(out)
    with pytest.raises(FileExistsError, match="is the output of job 'crawl', not of 'toy'"):
        _job(out, [2])
    assert _snapshot(out) == before
    _job(out, [3], job="crawl")  # the same job replaces it
    assert pq.read_table(out / "a").column("n").to_pylist() == [3]


def test_a_folder_holding_outputs_below_it_is_never_replaced(tmp_path):
    """A stats.json only below the folder (a crawl and a user's notes in a parent folder), or
    another output inside a job's own (an audit written into a LOT build's folder)."""
    parent = tmp_path / "project"
    _job(parent / "crawl", [1], job="crawl")
    (parent / "notes.txt").write_text("precious")
    before = _snapshot(parent)
    with pytest.raises(FileExistsError, match="no stats.json"):
        _job(parent, [2])
    assert _snapshot(parent) == before

    build = tmp_path / "lot"
    _job(build, [1])
    _job(build / "audit", [2], job="overlap")
    before = _snapshot(build)
    with pytest.raises(FileExistsError, match="holds another output \\('audit/stats.json'\\)"):
        _job(build, [3])
    assert _snapshot(build) == before


@pytest.mark.parametrize("given", ["file", "folder", "glob", "relative"])
def test_an_output_holding_the_jobs_input_is_never_replaced(tmp_path, monkeypatch, given):
    out = tmp_path / "out"
    _job(out, [1])
    (out / "dumps").mkdir()
    (out / "dumps" / "a.jsonl").write_text("{}\n")
    before = _snapshot(out)
    monkeypatch.chdir(tmp_path)
    name = {
        "file": out / "dumps" / "a.jsonl",
        "folder": out / "dumps",
        "glob": out / "dumps" / "*.jsonl",
        "relative": "out/dumps/a.jsonl",
    }[given]
    with pytest.raises(FileExistsError, match="holds this job's input"):
        _job("out" if given == "relative" else out, [2], inputs=[name])
    assert _snapshot(out) == before
    _job(out, [3], inputs=[tmp_path / "elsewhere.jsonl", tmp_path / "out2" / "x.jsonl"])  # beside it: replaced
    assert not (out / "dumps").exists()


def test_the_current_folder_as_output_stages_beside_it(tmp_path, monkeypatch):
    here = tmp_path / "build"
    here.mkdir()
    monkeypatch.chdir(here)
    assert staging_path(".") == str(tmp_path / "build.incomplete")
    _job(".", [1])
    _job(".", [2], tables=("a",))
    assert sorted(p.name for p in here.iterdir()) == ["CARD.md", "README.md", "a", "rejects", "stats.json"]
    assert pq.read_table(here / "a").column("n").to_pylist() == [2] and not (tmp_path / "build.incomplete").exists()
