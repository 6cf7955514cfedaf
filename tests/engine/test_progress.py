"""Progress lines while a job runs and the closing summary of its outputs."""
from __future__ import annotations

from pipelines.engine import progress


def test_progress_line_per_stage_with_rates():
    line = progress.progress_line({"parse": [2000, 1990, 10], "prepare": [1000, 1000, 0]}, 10.0)
    assert line == ("[storybench 10 s] parse 2,000 read (1,990 written, 10 rejected, 200/s) | "
                    "prepare 1,000 read (1,000 written, 0 rejected, 100/s)")


def test_count_prints_at_most_every_interval(monkeypatch, capsys):
    monkeypatch.setattr(progress, "_COUNTS", {})
    monkeypatch.setattr(progress, "_STATE", {"last": 0.0, "start": 0.0})
    clock = iter([5.0, 12.0, 13.0, 25.0])
    monkeypatch.setattr(progress.time, "monotonic", lambda: next(clock))
    for written in (1, 1, 0, 1):
        progress.count("toy", written, 1 - written)
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["[storybench 12 s] toy 2 read (2 written, 0 rejected, 0/s)",
                     "[storybench 25 s] toy 4 read (3 written, 1 rejected, 0/s)"]


def test_summary_gives_one_line_per_output():
    stats = {"job": "lot", "balanced": True, "stages": {"parse": {"read": 48}},
             "tables": {"senpos": 30, "rejects": 2}, "exports": {"senpos/train": 24}}
    assert progress.summary(stats, "output/lot/") == [
        "lot: 48 records read, accounting balanced",
        "          30 rows  output/lot/senpos", "           2 rows  output/lot/rejects",
        "          24 records in export senpos/train"]
