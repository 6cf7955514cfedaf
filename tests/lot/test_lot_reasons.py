"""Every reject reason the lot job can write is in the one catalogue and in JOB_REASONS."""

from __future__ import annotations

import re

from conftest import ROOT

from annotators.core.reasons import SHARED, catalogue
from annotators.lot.reasons import JOB_REASONS, REASONS

SOURCES = sorted((ROOT / "annotators" / "lot").glob("*.py")) + [ROOT / "pipelines" / "lot.py"]
DROP = re.compile(r'Drop\(\s*(?:reason=)?"([a-z0-9_]+)"')
DEDUP = re.compile(r'dedup_step\(\s*"[^"]+",\s*"([a-z0-9_]+)"\s*\)')


def codes_in_source() -> set[str]:
    found = set()
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        found |= set(DROP.findall(text)) | set(DEDUP.findall(text))
    return found


def test_every_drop_code_is_catalogued_and_listed():
    codes = codes_in_source()
    assert {"malformed_json", "exact_duplicate", "duplicate_id", "unknown_story"} <= codes
    assert codes - set(catalogue()) == set()
    assert codes - set(JOB_REASONS) == set()


def test_job_reasons_are_catalogued_and_own_codes_are_not_shared():
    assert set(JOB_REASONS) <= set(catalogue())
    assert not set(REASONS) & set(SHARED)
    assert "internal_error" in JOB_REASONS  # the engine's Stage gives it for any step


def test_every_own_code_is_given_somewhere():
    assert set(REASONS) <= codes_in_source()
