"""Progress lines while a job runs and the closing summary of its outputs."""

from __future__ import annotations

import pytest

from pipelines.engine import progress


def test_progress_line_per_stage_with_rates():
    line = progress.progress_line({"parse": [2000, 1990, 10], "prepare": [1000, 1000, 0]}, 10.0)
    assert line == (
        "[storybench 10 s] parse 2,000 read (1,990 written, 10 rejected, 200/s) | "
        "prepare 1,000 read (1,000 written, 0 rejected, 100/s)"
    )


def test_count_prints_at_most_every_interval(monkeypatch, capsys):
    monkeypatch.setattr(progress, "_COUNTS", {})
    monkeypatch.setattr(progress, "_STATE", {"last": 0.0, "start": 0.0})
    monkeypatch.setattr(
        progress, "_INPUT", {"read": 0, "total": 0, "first": None, "last": None}
    )  # no bar: no input known
    clock = iter([5.0, 12.0, 13.0, 25.0])
    monkeypatch.setattr(progress.time, "monotonic", lambda: next(clock))
    for written in (1, 1, 0, 1):
        progress.count("toy", written, 1 - written)
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "[storybench 12 s] toy 2 read (2 written, 0 rejected, 0/s)",
        "[storybench 25 s] toy 4 read (3 written, 1 rejected, 0/s)",
    ]


def test_summary_gives_one_line_per_output():
    stats = {
        "job": "lot",
        "balanced": True,
        "stages": {"parse": {"read": 48, "rejected": 2}, "prepare": {"read": 46, "rejected": 0}},
        "tables": {"senpos": 30, "rejects": 2},
        "exports": {"senpos/train": 24},
    }
    assert progress.summary(stats, "output/lot/") == [
        "lot: 2 stages, 2 records rejected, accounting balanced (read = written + rejected in each)",
        "          30 rows  output/lot/senpos",
        "           2 rows  output/lot/rejects",
        "          24 records in export senpos/train",
    ]


def test_summary_names_each_file_that_looked_pretty_printed():
    stats = {"job": "stories", "balanced": True, "stages": {}, "pretty_printed_json": {"all.json": 22}}
    assert progress.summary(stats, "out")[1:] == [
        "warning: all.json: 22 line(s) rejected as malformed_json look like one JSON document spread over many "
        "lines (pretty-printed); the job reads JSON lines (one object per line): convert it with "
        "`jq -c '.[]' all.json > all.jsonl` (`jq -c . all.json > all.jsonl` for one object)"
    ]


def test_input_bar_shows_share_rate_and_eta():
    assert progress.input_bar(5_000_000, 20_000_000, 5.0) == (
        "input 25% [#####...............] 5.0/20.0 MB, 1.0 MB/s, ETA 15 s"
    )
    assert progress.input_bar(21_000_000, 20_000_000, 10.0).startswith(
        "input 100% [####################] 20.0/20.0 MB, 2.1 MB/s, done"
    )
    line = progress.progress_line({"parse": [10, 10, 0]}, 5.0, (5_000_000, 20_000_000, 5.0))
    assert line.startswith("[storybench 5 s] input 25% [#####") and line.endswith(
        "| parse 10 read (10 written, 0 rejected, 2/s)"
    )
    assert "input" not in progress.progress_line({"parse": [10, 10, 0]}, 5.0, (5_000_000, 0, 5.0))


def test_the_rate_of_input_read_is_the_readings_once_it_is_all_read(monkeypatch):
    """Once every byte was read, the rate fell for the rest of the run (`0.4 MB/s, done` at the
    end of a 2-minute job that read its input in 10 s)."""
    clock = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(progress, "_INPUT", {"read": 0, "total": 20_000_000, "first": None, "last": None})
    monkeypatch.setattr(progress, "INTERVAL", 1e9)
    for _ in range(10):
        progress.advance(2_000_000)
        clock[0] += 1.0
    assert progress._reading_seconds(clock[0]) == 9.0  # from the first read to the last
    clock[0] += 110.0
    assert progress._reading_seconds(clock[0]) == 9.0
    progress._INPUT["total"] = 40_000_000  # not all read yet: until now
    assert progress._reading_seconds(clock[0]) == 120.0


def test_a_local_run_shows_a_bar_of_the_input_files_read(tmp_path, monkeypatch, capsys):
    from apache_beam.options.pipeline_options import PipelineOptions

    from pipelines.engine import MatchInputs, ReadLines, Stage, make_pipeline, readers, run_pipeline

    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_text("".join(f'{{"n": {i}}}\n' for i in range(3000)))
    size = sum((tmp_path / n).stat().st_size for n in ("a.jsonl", "b.jsonl"))
    monkeypatch.setattr(progress, "INTERVAL", 0.0)  # a line at every record
    monkeypatch.setattr(readers, "PROGRESS_BYTES", 1000)
    p = make_pipeline(PipelineOptions([]))
    lines = p | MatchInputs(str(tmp_path / "*.jsonl")) | ReadLines()
    _ = lines | Stage("toy", lambda e: [e[1]])
    run_pipeline(p)
    err = capsys.readouterr().err.splitlines()
    bars = [line for line in err if " input " in line]
    assert bars and all(f"/{size / 1e6:,.1f} MB" in line for line in bars)
    assert "input 100% [####################]" in bars[-1]
    shares = [int(line.split(" input ")[1].split("%")[0]) for line in bars]
    assert shares == sorted(shares) and shares[0] < 100


def test_still_working_names_the_record_and_how_long():
    one = [("long_road.txt", 60_000_000, 0.0)]
    assert progress.still_working("examples", one, 185.0) == (
        "still working: examples on 'long_road.txt' (60.0 MB) for 3 min 5 s"
    )
    assert progress.still_working("examples", [("b1", None, 0.0)], 12.9) == "still working: examples on 'b1' for 12 s"
    several = [("a.txt", 300, 0.0), ("long_road.txt", 60_000_000, 1.0), ("c.txt", 50, 2.0)]
    assert progress.still_working("gutenberg_books", several, 7500.0) == (
        "still working: gutenberg_books on 3 records for 2 h 5 min, the largest 'long_road.txt' (60.0 MB)"
    )
    blocks = [(["s:1", "s:2"], None, 0.0), (["s:3"], None, 0.0)]
    assert progress.still_working("parse", blocks, 30.0).endswith(
        "on 2 records for 30 s, the oldest the block of 's:1'"
    )


def test_the_interval_comes_from_the_environment(monkeypatch):
    for text, seconds in (("0.5", 0.5), ("0", 0.0), ("", 10.0), ("soon", 10.0), ("-1", 10.0)):
        monkeypatch.setenv(progress.INTERVAL_ENV, text)
        assert progress.interval_from_env() == seconds


@pytest.mark.parametrize("workers", [1, 2], ids=["one_process", "pool"])
def test_a_record_worked_on_for_long_is_shown_while_nothing_finishes(workers, monkeypatch, capsys):
    """One book that keeps its step busy (1.5 s, with a line due every 0.3 s): nothing is
    counted meanwhile, and the lines say which book is being worked on and for how long."""
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions

    from pipelines.engine import Stage, make_pipeline, run_pipeline
    from tests.engine import pool_steps

    monkeypatch.setattr(progress, "INTERVAL", 0.3)
    p = make_pipeline(PipelineOptions(["--direct_num_workers", str(workers)]))
    _ = p | beam.Create([("slow_road.txt", b"x" * 250_000)]) | Stage("books", pool_steps.slow_book)
    run_pipeline(p)
    lines = capsys.readouterr().err.splitlines()
    still = [line for line in lines if "still working:" in line]
    assert len(still) >= 2, lines  # a line every 0.3 s while the book takes 1.5 s
    assert all(" still working: books on 'slow_road.txt' (0.2 MB) for " in line for line in still), still
    assert not any("books 1 read" in line for line in still)  # the counts: nothing finished meanwhile
