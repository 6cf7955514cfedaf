"""Every reject reason the storium and edits jobs can give is in the one catalogue and in
their JOB_REASONS, and their cards list them."""

from __future__ import annotations

import pathlib
import re

import pytest

from annotators.core.reasons import catalogue
from annotators.storium import reasons
from annotators.storium.edits import field_problem
from annotators.storium.games import id_problem

ROOT = pathlib.Path(__file__).parents[2]
SOURCES = sorted((ROOT / "annotators" / "storium").glob("*.py")) + [
    ROOT / "pipelines" / "storium.py",
    ROOT / "pipelines" / "edits.py",
]


def drop_codes() -> set[str]:
    """Every literal code in `Drop("...")` and in the code-choosing helpers' return values."""
    codes = set()
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        codes |= set(re.findall(r'Drop\(\s*"(\w+)"', text))
        for chosen in re.findall(r'"(\w+)" if .+ else "(\w+)"', text):
            codes |= set(chosen)
        codes |= set(re.findall(r'reason="(\w+)"', text))
    return codes


def test_every_drop_code_is_catalogued_and_listed():
    codes = (
        drop_codes() | {id_problem(v) for v in (None, "", " ", 1.5, [], True)} | {field_problem(v) for v in (None, 42)}
    )
    assert {
        "malformed_json",
        "budget_below_segments",
        "duplicate_id",
        "missing_field",
        "bad_field_type",
        "empty_file",
        "blank_line",
    } <= codes  # the scan finds them
    assert codes <= set(catalogue())
    assert codes <= set(reasons.JOB_REASONS)


def test_job_reasons_are_catalogued_and_split_per_job():
    known = catalogue()
    for codes in (reasons.STORIUM_REASONS, reasons.EDITS_REASONS, reasons.JOB_REASONS):
        assert set(codes) <= set(known)
    assert set(reasons.JOB_REASONS) == set(reasons.STORIUM_REASONS) | set(reasons.EDITS_REASONS)
    assert set(reasons.REASONS) <= set(reasons.JOB_REASONS)
    assert "unalignable_tokens" not in reasons.STORIUM_REASONS
    assert "budget_below_segments" not in reasons.EDITS_REASONS


@pytest.mark.parametrize(
    "old",
    [
        "unreadable_json",
        "not_a_game",
        "entry_not_object",
        "character_not_object",
        "duplicate_game_pid",
        "duplicate_seq_id",
        "missing_game_pid",
        "missing_seq_id",
        "missing_character_seq_id",
        "missing_id",
        "missing_generated",
        "missing_published",
    ],
)
def test_renamed_codes_are_gone(old):
    assert old not in drop_codes() and old not in reasons.JOB_REASONS


def test_cards_list_the_reasons_of_their_job():
    from annotators.storium.card import edits_card, storium_card

    stats = {"job": "j", "schema_version": 1, "stages": {}, "tables": {}, "config": {}}
    assert "| `budget_below_segments` |" in storium_card(stats)
    assert "| `unalignable_tokens` |" not in storium_card(stats)
    assert "| `unalignable_tokens` |" in edits_card(stats)
    assert "## Reject reasons this job can give" in edits_card(stats)
