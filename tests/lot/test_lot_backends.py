"""The LOT build gives the same bytes with either jieba backend, and says which one ran."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT

pytestmark = pytest.mark.slow  # end-to-end job runs: `make test-fast` leaves them out

SAMPLE = ROOT / "samples" / "lot"


def _build(out, backend: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("STORYBENCH_ZH_BACKEND", None)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pipelines.lot",
            "--stories",
            str(SAMPLE / "stories.jsonl"),
            "--annotations",
            str(SAMPLE / "clozet_annotations.jsonl"),
            "--output",
            str(out),
            "--splits",
            "8,1,1",
        ]
        + (["--zh-backend", backend] if backend != "auto" else []),
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )


def test_outputs_are_identical_whichever_backend_ran(tmp_path):
    _build(tmp_path / "ref", "jieba")
    _build(tmp_path / "fast", "auto")  # the default: rjieba
    files = sorted(p.relative_to(tmp_path / "ref") for p in (tmp_path / "ref").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "fast") for p in (tmp_path / "fast").rglob("*") if p.is_file())
    for rel in files:
        if rel.name not in ("stats.json", "CARD.md", "README.md"):  # they name the backend
            assert (tmp_path / "ref" / rel).read_bytes() == (tmp_path / "fast" / rel).read_bytes(), rel
    ref, fast = (json.loads((tmp_path / d / "stats.json").read_text()) for d in ("ref", "fast"))
    assert ref["jieba_backend"]["backend"] == "jieba" and fast["jieba_backend"] == {
        "backend": "rjieba",
        "version": "0.2.2",
    }
    assert {k: v for k, v in ref.items() if k not in ("jieba_backend", "inputs")} == {
        k: v for k, v in fast.items() if k not in ("jieba_backend", "inputs")
    }
    assert "- jieba backend: rjieba 0.2.2" in (tmp_path / "fast" / "CARD.md").read_text()
