"""Every Beam job validates on Dataflow offline, as the README runs it (`--dry_run=True`).

This catches what only a remote runner sees: unpicklable functions, labels used twice, and
transforms the Dataflow translation rejects. With `gs://` inputs and outputs it also proves
that building a job's graph touches no file and no network: nothing is listed, deleted or
written while the graph is built (a dry run must exit in seconds with no credentials), and
an existing local output is left exactly as it was.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import time

import pytest
from conftest import ROOT

pytestmark = pytest.mark.slow  # end-to-end job runs: `make test-fast` leaves them out

pytest.importorskip("google.cloud.storage", reason="apache-beam[gcp] is not installed")

DATAFLOW = [
    "--runner",
    "DataflowRunner",
    "--project",
    "storybench-dry-run",
    "--region",
    "us-central1",
    "--temp_location",
    "gs://storybench-dry-run/tmp",
    "--dry_run=True",
]
FIX = ROOT / "tests" / "fixtures"
BUCKET = "gs://storybench-dry-run"
JOBS = {  # job -> (local inputs, gs:// inputs)
    "lot": (
        [
            "--stories",
            str(ROOT / "samples/lot/stories.jsonl"),
            "--annotations",
            str(ROOT / "samples/lot/clozet_annotations.jsonl"),
        ],
        ["--stories", f"{BUCKET}/stories/*.jsonl", "--annotations", f"{BUCKET}/annotations.jsonl"],
    ),
    "chapterbreak": (
        ["--gutenberg", str(FIX / "chapterbreak/books/*.txt"), "--ao3", str(FIX / "chapterbreak/ao3")],
        ["--gutenberg", f"{BUCKET}/pg19/*.txt", "--ao3", f"{BUCKET}/ao3"],
    ),
    "glge": (["--input", str(FIX / "glge")], ["--input", f"{BUCKET}/glge"]),
    "storium": (["--games", str(FIX / "storium/g_*.json")], ["--games", f"{BUCKET}/games/*.json"]),
    "edits": (["--edits", str(FIX / "storium/edits/*.jsonl")], ["--edits", f"{BUCKET}/edits/*.jsonl"]),
    "stories": (["--input", str(FIX / "site/dumps/*")], ["--input", f"{BUCKET}/dumps/*"]),
    "overlap": (
        ["--test", str(ROOT / "samples/lot/stories.jsonl"), "--reference", str(ROOT / "samples/lot/stories.jsonl")],
        ["--test", f"{BUCKET}/lot/outgen", "--reference", f"{BUCKET}/reference/*.txt.gz"],
    ),
    "overlap_lot": (["--lot", "{lot}"], ["--lot", f"{BUCKET}/lot"]),
    "bias": (["--lot", "{lot}"], ["--lot", f"{BUCKET}/lot"]),
    "evaluate": (
        ["--task", "outgen", "--predictions", str(ROOT / "samples/lot/stories.jsonl"), "--gold", "{lot}/outgen"],
        ["--task", "outgen", "--predictions", f"{BUCKET}/pred.jsonl", "--gold", f"{BUCKET}/lot/outgen"],
    ),
}


@pytest.mark.parametrize("job", sorted(JOBS))
def test_job_graph_validates_on_dataflow_and_leaves_local_output_alone(job, tmp_path):
    from tests.audits.test_overlap_data import write_lot

    write_lot(tmp_path / "lot", {"train": [0, 1, 2, 3], "val": [4, 5], "test": [6, 7]})
    module = importlib.import_module(f"pipelines.{job.split('_')[0]}")
    argv = [a.format(lot=tmp_path / "lot") for a in JOBS[job][0]]
    out = tmp_path / "out"
    out.mkdir()
    (out / "stats.json").write_text('{"job": "an earlier run"}\n')
    (out / "rejects").mkdir()
    (out / "rejects" / "part-00000-of-00001.parquet").write_bytes(b"earlier table")
    module.run(argv + ["--output", str(out)] + DATAFLOW)
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == [
        "rejects",
        "rejects/part-00000-of-00001.parquet",
        "stats.json",
    ]
    assert (out / "rejects" / "part-00000-of-00001.parquet").read_bytes() == b"earlier table"
    assert not (tmp_path / "out.incomplete").exists()


@pytest.mark.parametrize("job", sorted(JOBS))
def test_readme_dataflow_dry_run_with_gs_paths_is_offline_and_fast(job, tmp_path):
    """The README's command, `--setup_file` included, in a fresh process with no credentials."""
    argv = JOBS[job][1] + ["--output", f"{BUCKET}/out/{job}"] + DATAFLOW + ["--setup_file", str(ROOT / "setup.py")]
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        "GOOGLE_APPLICATION_CREDENTIALS": str(tmp_path / "no-credentials.json"),
        "NO_GCE_CHECK": "True",
    }
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", f"pipelines.{job.split('_')[0]}", *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert time.monotonic() - start < 60
    said = [line for line in done.stderr.splitlines() if line.startswith("dry run:")]
    assert len(said) == 1 and said[0].endswith("transforms is valid; nothing was submitted or written"), done.stderr
