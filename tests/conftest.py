"""Shared test fixtures: paths to the project's samples and to ../shared/data (optional)."""
from __future__ import annotations

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
