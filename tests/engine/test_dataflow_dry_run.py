"""Every Beam job's graph validates on Dataflow offline (`--runner DataflowRunner --dry_run=True`).

This catches what only a remote runner sees: unpicklable functions, labels used twice, and
transforms the Dataflow translation rejects. Nothing is submitted and nothing is written.
"""
from __future__ import annotations

import importlib

import pytest

from conftest import ROOT

pytest.importorskip("google.cloud.storage", reason="apache-beam[gcp] is not installed")

DATAFLOW = ["--runner", "DataflowRunner", "--project", "storybench-dry-run", "--region", "us-central1",
            "--temp_location", "gs://storybench-dry-run/tmp", "--dry_run=True"]
FIX = ROOT / "tests" / "fixtures"
JOBS = {
    "lot": ["--stories", str(ROOT / "samples/lot/stories.jsonl"),
            "--annotations", str(ROOT / "samples/lot/clozet_annotations.jsonl")],
    "chapterbreak": ["--gutenberg", str(FIX / "chapterbreak/books/*.txt"), "--ao3", str(FIX / "chapterbreak/ao3")],
    "glge": ["--input", str(FIX / "glge/tiny_data")],
    "storium": ["--games", str(FIX / "storium/g_*.json")],
    "edits": ["--edits", str(FIX / "storium/edits/*.jsonl")],
    "stories": ["--input", str(FIX / "site/dumps/*")],
    "overlap": ["--test", str(ROOT / "samples/lot/stories.jsonl"),
                "--reference", str(ROOT / "samples/lot/stories.jsonl")],
    "overlap_lot": ["--lot", "{lot}"],
    "bias": ["--lot", "{lot}"],
}


@pytest.mark.parametrize("job", sorted(JOBS))
def test_job_graph_validates_on_dataflow(job, tmp_path):
    from tests.audits.test_overlap_data import write_lot

    write_lot(tmp_path / "lot", {"train": [0, 1, 2, 3], "val": [4, 5], "test": [6, 7]})
    module = importlib.import_module(f"pipelines.{job.split('_')[0]}")
    argv = [a.format(lot=tmp_path / "lot") for a in JOBS[job]]
    module.run(argv + ["--output", str(tmp_path / "out")] + DATAFLOW)
    assert not (tmp_path / "out" / "stats.json").exists(), "a dry run must not run the job"
