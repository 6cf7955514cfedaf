"""The evaluate job validates on Dataflow offline, as the README runs it (`--dry_run=True`),
mirroring tests/engine/test_dataflow_dry_run.py: building the graph with `gs://` inputs and
outputs touches no file and no network, and a dry run leaves an existing local output alone."""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from conftest import ROOT
from pipelines import evaluate

pytest.importorskip("google.cloud.storage", reason="apache-beam[gcp] is not installed")

DATAFLOW = ["--runner", "DataflowRunner", "--project", "storybench-dry-run", "--region", "us-central1",
            "--temp_location", "gs://storybench-dry-run/tmp", "--dry_run=True"]
BUCKET = "gs://storybench-dry-run"
CASES = {  # name -> (local args, gs:// args)
    "outgen_jsonl": (["--task", "outgen", "--predictions", "{tmp}/p.jsonl", "--gold", "{tmp}/g.jsonl"],
                     ["--task", "outgen", "--predictions", f"{BUCKET}/p.jsonl", "--gold", f"{BUCKET}/outgen/test.jsonl"]),
    "clozet_table": (["--task", "clozet", "--predictions", "{tmp}/p.jsonl", "--gold", "{tmp}/table"],
                     ["--task", "clozet", "--predictions", f"{BUCKET}/p.jsonl", "--gold", f"{BUCKET}/lot/clozet"]),
    "chapterbreak": (["--task", "chapterbreak", "--predictions", "{tmp}/p.jsonl", "--gold", "{tmp}/table"],
                     ["--task", "chapterbreak", "--predictions", f"{BUCKET}/p.jsonl", "--gold", f"{BUCKET}/cb/examples"]),
}


def _local_inputs(tmp_path):
    (tmp_path / "p.jsonl").write_text('{"story": "a"}\n')
    (tmp_path / "g.jsonl").write_text('{"story": "a", "outline": ["a"]}\n')
    (tmp_path / "table").mkdir()
    (tmp_path / "table" / "part-00000-of-00001.parquet").write_bytes(b"not read in a dry run")


@pytest.mark.parametrize("case", sorted(CASES))
def test_job_graph_validates_on_dataflow_and_leaves_local_output_alone(case, tmp_path):
    _local_inputs(tmp_path)
    argv = [a.format(tmp=tmp_path) for a in CASES[case][0]]
    out = tmp_path / "out"
    out.mkdir()
    (out / "stats.json").write_text("{\"job\": \"an earlier run\"}\n")
    (out / "rejects").mkdir()
    (out / "rejects" / "part-00000-of-00001.parquet").write_bytes(b"earlier table")
    assert evaluate.run(argv + ["--output", str(out)] + DATAFLOW) == 0
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == [
        "rejects", "rejects/part-00000-of-00001.parquet", "stats.json"]
    assert (out / "rejects" / "part-00000-of-00001.parquet").read_bytes() == b"earlier table"
    assert not (tmp_path / "out.incomplete").exists()


@pytest.mark.parametrize("case", sorted(CASES))
def test_readme_dataflow_dry_run_with_gs_paths_is_offline_and_fast(case, tmp_path):
    """The README's command, `--setup_file` included, in a fresh process with no credentials."""
    argv = CASES[case][1] + ["--output", f"{BUCKET}/out/{case}"] + DATAFLOW + ["--setup_file", str(ROOT / "setup.py")]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT),
           "GOOGLE_APPLICATION_CREDENTIALS": str(tmp_path / "no-credentials.json"), "NO_GCE_CHECK": "True"}
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pipelines.evaluate", *argv], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert time.monotonic() - start < 60
