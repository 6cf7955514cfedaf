"""Shared test fixtures: paths to the project's samples and to ../shared/data (optional)."""
from __future__ import annotations

import json
import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED_DATA = pathlib.Path(os.environ.get("STORYBENCH_SHARED_DATA", ROOT.parent / "shared" / "data"))
sys.path.insert(0, str(ROOT))


def shared_path(*parts: str) -> pathlib.Path:
    """A path under ../shared/data, or skip the test when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not present: {path}")
    return path


@pytest.fixture
def samples_dir() -> pathlib.Path:
    return ROOT / "samples"


def write_tiny_gpt2(folder):
    """GPT-2's file layout (vocab.json + merges.txt) with a handful of merges."""
    from annotators.text.bpe import _byte_to_unicode

    table = _byte_to_unicode()
    merges = ["t h", "th e", "\u0120 c", "\u0120c a", "\u0120ca t", "a t", "\u0120 the"]
    vocab = {ch: i for i, ch in enumerate(table.values())}
    for m in merges:
        vocab["".join(m.split())] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n", encoding="utf-8")
    return folder
