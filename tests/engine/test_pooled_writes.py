"""Tables, JSON-lines groups and exports written on the pool's workers (pipelines.engine
merge_runs, export_files): the same bytes as in the job's process, the work in the workers,
and the modules a worker loads for it free of Beam."""

from __future__ import annotations

import functools
import os
import subprocess
import sys

import apache_beam as beam
import pyarrow as pa
import pytest
from apache_beam.options.pipeline_options import PipelineOptions

from pipelines.engine import exporters, merge_runs, pool, sorted_tables
from pipelines.engine.exporters import ExportLinesFromTable, ExportTables
from pipelines.engine.options import make_pipeline
from pipelines.engine.sorted_tables import JsonlGroups, TableSpec, WriteTables
from tests.engine import pool_steps
from tests.engine.written import run_with_groups

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEMA = pa.schema([("g", pa.string()), ("id", pa.string()), ("n", pa.int64()), ("text", pa.string())])


def _write(out, rows, together: bool = False) -> dict[str, bytes]:
    """Two tables (one of two shards) and an export of each, and per-group JSON lines (by
    WriteJsonlGroups, or `together`: in the tables' write step, as WriteTables' `jsonl`)."""
    p = make_pipeline(PipelineOptions([]))
    made = p | beam.Create(rows)
    tables = {
        "t": TableSpec(f"{out}/t", SCHEMA, lambda r: (r["g"], r["id"]), shards=2),
        "u": TableSpec(f"{out}/u", SCHEMA, lambda r: r["id"]),
    }
    rows_of = [lambda r: (("t", r), ("u", r))]
    if together:
        entries = made | "Entries" >> beam.Map(lambda r: (r["g"], r["id"], r))
        groups = [JsonlGroups(lambda g: f"{out}/j/{g}.jsonl", ["a", "b", "c"], "j")]
        written = (made, entries) | WriteTables(tables, rows_of, spill=f"{out}/_spill", jsonl=groups)
    else:
        written = made | WriteTables(tables, rows_of, spill=f"{out}/_spill")
    files = ["a.txt", "b.txt", "a.n", "b.n"]
    exports = [
        ExportLinesFromTable(
            f"{out}/{name}", files, key, pool_steps.export_lines, functools.partial(os.path.join, out, name), name
        )
        for name, key in (("t", pool_steps.by_group_id), ("u", pool_steps.by_id))
    ]
    _ = written | ExportTables(exports)
    if together:
        p.run().wait_until_finish()
        return {str(f.relative_to(out)): f.read_bytes() for f in sorted(out.rglob("*")) if f.is_file()}
    return run_with_groups(p, made, out)


ROWS = [{"g": "ab"[i % 2], "id": f"x{(i * 7) % 50:02d}", "n": i, "text": "字" * (i % 13)} for i in range(300)]


def test_a_run_with_a_pool_writes_shards_groups_and_exports_on_the_workers_with_the_same_bytes(tmp_path, monkeypatch):
    here = _write(tmp_path / "here", ROWS)
    assert {"t/part-00000-of-00002.parquet", "u/part-00000-of-00001.parquet", "j/c.jsonl", "t/a.n"} <= set(here)
    pids = tmp_path / "pids"
    pids.mkdir()
    for module, name in (
        (sorted_tables, "write_table_shard"),
        (sorted_tables, "write_jsonl_group"),
        (exporters, "write_export"),
    ):
        monkeypatch.setattr(module, name, functools.partial(pool_steps.noting_pid, getattr(module, name), str(pids)))
    monkeypatch.setattr(merge_runs, "POOL_BYTES", 0)  # every shard is worth a worker here
    monkeypatch.setattr(exporters, "EXPORT_POOL_BYTES", 0)
    pool.configure(2)
    try:
        on_pool = _write(tmp_path / "pool", list(reversed(ROWS)))
    finally:
        pool.configure(0)
    assert on_pool == here
    ran_in = [int(f.name.split("-")[0]) for f in pids.iterdir()]
    # 3 table shards, 3 groups, 2 exports: each a task of its own, none in this process
    assert len(ran_in) == 8 and os.getpid() not in ran_in


def test_json_lines_groups_written_in_the_tables_step_are_the_same_files_on_the_workers(tmp_path, monkeypatch):
    """WriteTables' `jsonl` (LOT's annotation and review tasks beside its task tables): the
    groups' tasks join the shards' in one write step, with the files WriteJsonlGroups writes
    on its own, here and on the pool's workers; every spill folder is gone."""
    apart = _write(tmp_path / "apart", ROWS)
    assert _write(tmp_path / "here", ROWS, together=True) == apart
    pids = tmp_path / "pids"
    pids.mkdir()
    for name in ("write_table_shard", "write_jsonl_group"):
        (pids / name).mkdir()
        noted = functools.partial(pool_steps.noting_pid, getattr(sorted_tables, name), str(pids / name))
        monkeypatch.setattr(sorted_tables, name, noted)
    monkeypatch.setattr(merge_runs, "POOL_BYTES", 0)  # every shard and group is worth a worker here
    pool.configure(2)
    try:
        on_pool = _write(tmp_path / "pool", list(reversed(ROWS)), together=True)
    finally:
        pool.configure(0)
    assert on_pool == apart
    ran_in = {
        name: [int(f.name.split("-")[0]) for f in (pids / name).iterdir()]
        for name in ("write_table_shard", "write_jsonl_group")
    }
    assert len(ran_in["write_table_shard"]) == 3 and len(ran_in["write_jsonl_group"]) == 3
    assert os.getpid() not in ran_in["write_table_shard"] + ran_in["write_jsonl_group"]


def test_small_shards_and_exports_are_written_here_even_with_a_pool(tmp_path, monkeypatch):
    pids = tmp_path / "pids"
    pids.mkdir()
    for module, name in ((sorted_tables, "write_table_shard"), (exporters, "write_export")):
        monkeypatch.setattr(module, name, functools.partial(pool_steps.noting_pid, getattr(module, name), str(pids)))
    pool.configure(2)
    try:
        _write(tmp_path / "pool", ROWS)
    finally:
        pool.configure(0)
    assert {int(f.name.split("-")[0]) for f in pids.iterdir()} == {os.getpid()}


def test_a_task_that_holds_a_jobs_wiring_is_known():
    """A worker must not import Beam: an element that refers to a job's function (or does
    not pickle) is written here."""
    from annotators.core import longlm
    from pipelines.engine.export_files import LineRouter, line_writer, same_end

    portable = functools.partial(line_writer, LineRouter(functools.partial(longlm.export_lines, "outgen")), same_end)
    assert not pool.holds_wiring((portable, [1, "a"], {"k": 2.0}))
    wiring = lambda r: r  # noqa: E731
    assert pool.holds_wiring((portable, wiring))  # a lambda does not pickle
    import pipelines.lot

    assert pool.holds_wiring([functools.partial(line_writer, LineRouter(pipelines.lot.run), same_end)])


@pytest.mark.parametrize(
    "module",
    [
        "pipelines.engine.merge_runs",
        "pipelines.engine.export_files",
        "pipelines.engine.parquet_files",
        "pipelines.engine.jsontext",
        "pipelines.engine.pool_worker",
        "pipelines.engine.textlines",
    ],
)
def test_the_modules_a_worker_writes_with_do_not_import_beam(module):
    assert module in pool.BEAM_FREE
    code = f"import sys, {module}; sys.exit('apache_beam' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT})
    assert done.returncode == 0, f"importing {module} imports Beam"
