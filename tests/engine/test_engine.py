"""Tests of the shared engine (pipelines/engine): stages, tables, reports, ids."""

from __future__ import annotations

import json

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.options.pipeline_options import PipelineOptions

from annotators.core.ids import rng_for, stable_hash, stable_id
from annotators.core.outcome import Drop
from pipelines.engine import JobReport, WriteTable, input_names, make_pipeline, run_pipeline, staging_path

SCHEMA = pa.schema([pa.field("id", pa.string(), nullable=False), pa.field("n", pa.int64(), nullable=False)])


def _fn(element):
    key, value = element
    if value == "boom":
        raise ValueError("bad value")
    if value % 3 == 0:
        return Drop("multiple_of_three", str(value))
    return [{"id": key, "n": value}]


def _run(tmp_path, values, shards=1):
    options = PipelineOptions([])
    p = make_pipeline(options)
    out = staging_path(str(tmp_path))
    report = JobReport(out, "toy", config={"k": 1}, seed=7, inputs=["mem"], options=options)
    rows = p | beam.Create([(f"r{i:02d}", v) for i, v in enumerate(values)]) | report.stage("toy", _fn)
    report.tally(rows | WriteTable(f"{out}/toy", SCHEMA, lambda r: r["id"], shards=shards))
    report.finish(p)
    run_pipeline(p, commit_to=str(tmp_path))
    return json.loads((tmp_path / "stats.json").read_text())


def test_stage_accounts_for_every_record_and_turns_errors_into_rejects(tmp_path):
    stats = _run(tmp_path, [1, 2, 3, "boom", 5, 6])
    assert stats["stages"]["toy"] == {
        "read": 6,
        "written": 3,
        "rejected": 3,
        "outputs": 3,
        "rejected_by_reason": {"internal_error": 1, "multiple_of_three": 2},
        "balanced": True,
    }
    rejects = pq.read_table(tmp_path / "rejects").to_pylist()
    assert [r["reason"] for r in rejects] == ["multiple_of_three", "internal_error", "multiple_of_three"]
    assert rejects[1]["input_id"] == "r03" and "bad value" in rejects[1]["detail"]
    assert stats["tables"] == {"rejects": 3, "toy": 3}
    assert "| toy | 6 | 3 | 3 |" in (tmp_path / "CARD.md").read_text()


def _odd(element):
    key, value = element
    return Drop("odd", str(value)) if value % 2 else [element]


def test_each_stages_rejects_spill_where_they_are_made_and_form_one_sorted_table(tmp_path):
    """The rejects of every stage go to the rejects table's spilled runs in the step that made
    them (no Flatten holds them all first, which the local runner would keep in memory until
    the last stage ran); the table is the same sorted rows either way."""
    options = PipelineOptions([])
    p = make_pipeline(options)
    out = staging_path(str(tmp_path))
    report = JobReport(out, "toy", config={}, seed=0, inputs=["mem"], options=options)
    rows = p | beam.Create([(f"r{i:02d}", v) for i, v in enumerate([1, 2, 3, 4, 5, 6, 8])]) | report.stage("toy", _fn)
    evens = rows | "Pairs" >> beam.Map(lambda r: (r["id"], r["n"])) | report.stage("even", _odd)
    report.tally(
        evens
        | "Rows" >> beam.Map(lambda e: {"id": e[0], "n": e[1]})
        | WriteTable(f"{out}/toy", SCHEMA, lambda r: r["id"])
    )
    report.finish(p)
    labels = {t.full_label for t in p.transforms_stack[0].parts}
    spills = {label for label in _all_labels(p) if label.startswith("WriteTable[rejects]/Spill")}
    assert spills == {"WriteTable[rejects]/Spill0", "WriteTable[rejects]/Spill1"}
    assert "AllRejects" not in labels
    run_pipeline(p, commit_to=str(tmp_path))
    rejects = pq.read_table(tmp_path / "rejects").to_pylist()
    assert [(r["stage"], r["input_id"], r["reason"]) for r in rejects] == [
        ("even", "r00", "odd"),
        ("even", "r04", "odd"),
        ("toy", "r02", "multiple_of_three"),
        ("toy", "r05", "multiple_of_three"),
    ]
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["tables"]["rejects"] == 4 and stats["balanced"]


def _all_labels(p) -> set[str]:
    labels, stack = set(), list(p.transforms_stack[0].parts)
    while stack:
        node = stack.pop()
        labels.add(node.full_label)
        stack.extend(node.parts)
    return labels


def test_tables_are_sorted_sharded_and_exist_when_empty(tmp_path):
    _run(tmp_path, [5, 4, 2, 1, 7, 8, 10, 11], shards=3)
    files = sorted((tmp_path / "toy").glob("*.parquet"))
    assert [f.name for f in files] == [f"part-0000{i}-of-00003.parquet" for i in range(3)]
    for f in files:
        ids = pq.read_table(f).column("id").to_pylist()
        assert ids == sorted(ids)
    assert sum(pq.read_table(f).num_rows for f in files) == 8
    empty = tmp_path / "empty"
    empty.mkdir()
    _run(empty, [3, 6])
    assert pq.read_table(empty / "toy").num_rows == 0


def test_rerun_with_fewer_shards_leaves_no_stale_files(tmp_path):
    _run(tmp_path, [1, 2], shards=3)
    _run(tmp_path, [1, 2], shards=1)
    assert [f.name for f in (tmp_path / "toy").glob("*.parquet")] == ["part-00000-of-00001.parquet"]


def test_stage_workers_collect_young_garbage_less_often(tmp_path):
    """A Stage's setup raises the young-generation GC threshold in its worker process (the
    steps' short-lived tuples are walked less often); older generations keep theirs."""
    import gc

    from pipelines.engine.pool_worker import GC_YOUNG_THRESHOLD

    before = gc.get_threshold()
    gc.set_threshold(700, before[1], before[2])
    try:
        _run(tmp_path, [1, 2])
        assert gc.get_threshold() == (GC_YOUNG_THRESHOLD, before[1], before[2])
    finally:
        gc.set_threshold(*before)


def test_input_names_are_relative_to_the_pattern():
    paths = ["/data/books/a/x.txt", "/data/books/b.txt"]
    assert input_names(paths, "/data/books/**/*.txt") == {
        "/data/books/a/x.txt": "a/x.txt",
        "/data/books/b.txt": "b.txt",
    }
    assert input_names(["/data/one.jsonl"], "/data/one.jsonl") == {"/data/one.jsonl": "one.jsonl"}


def test_stable_ids_and_rngs_do_not_depend_on_the_process():
    import hashlib

    assert stable_hash("a", 1) == hashlib.sha256(b"a\x1f1").hexdigest()
    assert stable_id("story", "x") == stable_id("story", "x") != stable_id("story", "y")
    assert rng_for(1, "s").random() == rng_for(1, "s").random() != rng_for(2, "s").random()
    # stable_int is the first 16 hex digits of stable_hash, read from the digest's bytes
    from annotators.core.ids import stable_int

    for parts in (("a", 1), ("rng", 7, "outline", "story-0f"), ()):
        assert stable_int(*parts) == int(stable_hash(*parts)[:16], 16)
    assert stable_int("a", 1) == int.from_bytes(hashlib.sha256(b"a\x1f1").digest()[:8], "big")


def test_job_flags_accept_dashes_and_underscores():
    from pipelines.engine import JobArgumentParser, parse_job_args

    parser = JobArgumentParser()
    parser.add_argument("--prefix_lengths")
    parser.add_argument("--senpos-splits")
    parser.add_argument("rest", nargs="*")
    parser.add_argument_group("more").add_argument("--title-from")
    parser.add_argument_group("x").add_mutually_exclusive_group().add_argument("--keep_last")
    args, options = parse_job_args(
        parser,
        ["--prefix-lengths", "256", "--senpos_splits=8,1,1", "--title_from", "x", "--direct_num_workers=2"]
        + ["--", "--senpos_splits"],  # after a lone --, arguments are left as they are
    )
    assert (args.prefix_lengths, args.senpos_splits, args.title_from) == ("256", "8,1,1", "x")
    assert parser.parse_known_args(["--keep-last", "1"])[0].keep_last == "1"  # in a group of a group
    assert args.rest == ["--senpos_splits"]
    assert options.get_all_options()["direct_num_workers"] == 2  # Beam's flag, unchanged
    assert parser.spelled(["--shard_bytes=9", "--direct_num_workers=2"]) == [
        "--shard-bytes=9",
        "--direct_num_workers=2",
    ]
    # abbreviations, as argparse takes them, in either spelling: --prefix-l is --prefix_lengths
    assert parser.parse_known_args(["--prefix-l", "8", "--senpos_sp", "1", "--title_f", "y"])[0].prefix_lengths == "8"
    assert parser.spelled(["--prefix-l", "--senpos_sp", "--title_f", "--s"]) == [
        "--prefix_l",
        "--senpos-sp",
        "--title-f",
        "--s",
    ]
    help_text = parser.format_help()  # each option once, as it was added
    assert "--prefix_lengths" in help_text and "--prefix-lengths" not in help_text


def test_shard_count_follows_the_table_size(tmp_path, monkeypatch):
    from pipelines.engine import sorted_tables

    assert [sorted_tables.shard_count(b, 100) for b in (0, 1, 100, 101, 10**9)] == [
        1,
        1,
        1,
        2,
        sorted_tables.MAX_SHARDS,
    ]
    monkeypatch.setitem(sorted_tables.SHARDING, "shard_bytes", 40)
    stats = _run(tmp_path, [1, 2, 4, 5, 7, 8, 10, 11], shards=None)  # 8 rows of ~11 bytes
    names = sorted(f.name for f in (tmp_path / "toy").glob("*.parquet"))
    assert names == [f"part-0000{i}-of-00003.parquet" for i in range(3)]
    assert stats["tables"]["toy"] == 8


def test_shards_flag_fixes_the_count():
    import argparse

    from pipelines.engine import parse_job_args, sorted_tables

    try:
        parse_job_args(argparse.ArgumentParser(), ["--shards", "4"])
        assert sorted_tables.SHARDING["shards"] == 4 and WriteTable("x", SCHEMA, str)._shards == 4
    finally:
        parse_job_args(argparse.ArgumentParser(), [])
    assert sorted_tables.SHARDING["shards"] is None


def test_match_inputs_reads_lines_files_and_parquet_from_sources(tmp_path):
    from apache_beam.testing.util import assert_that, equal_to

    from pipelines.engine import MatchInputs, ReadFiles, ReadLines, ReadParquetRows

    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").write_bytes(b'{"x": 1}\r\n{"x": 2}\n')
    (tmp_path / "in" / "b.jsonl").write_bytes(b"last line without newline")
    pq.write_table(pa.table({"id": ["p", "q"], "n": [1, 2]}), tmp_path / "in" / "t.parquet")
    p = make_pipeline(PipelineOptions([]))
    lines = p | "ML" >> MatchInputs(str(tmp_path / "in" / "*.jsonl")) | "RL" >> ReadLines()
    files = p | "MF" >> MatchInputs(str(tmp_path / "in"), (".jsonl",)) | "RF" >> ReadFiles()
    rows = (
        p | "MP" >> MatchInputs(str(tmp_path / "in"), (".parquet", ".jsonl")) | "RP" >> ReadParquetRows(columns=["id"])
    )
    assert_that(
        lines,
        equal_to([("a.jsonl:1", b'{"x": 1}'), ("a.jsonl:2", b'{"x": 2}'), ("b.jsonl:1", b"last line without newline")]),
        label="lines",
    )
    assert_that(
        files | beam.Map(lambda e: (e[0], len(e[1]))), equal_to([("a.jsonl", 19), ("b.jsonl", 25)]), label="files"
    )
    assert_that(rows, equal_to([("t.parquet:0", {"id": "p"}), ("t.parquet:1", {"id": "q"})]), label="rows")
    run_pipeline(p)


def test_a_local_pattern_that_matches_nothing_fails_while_building(tmp_path):
    import pytest

    from pipelines.engine import MatchInputs

    p = make_pipeline(PipelineOptions([]))
    with pytest.raises(FileNotFoundError, match="no input files match"):
        p | MatchInputs(str(tmp_path / "*.jsonl"))


GROUPED = pa.schema(
    [
        pa.field("g", pa.string(), nullable=False),
        pa.field("id", pa.string(), nullable=False),
        pa.field("n", pa.int64(), nullable=False),
    ]
)


def test_jsonl_exported_from_a_sharded_table_is_sorted_per_group(tmp_path):
    from pipelines.engine import ExportJsonlFromTable

    rows = [{"g": "ab"[i % 2], "id": f"x{(i * 7) % 40:02d}", "n": i} for i in range(40)]
    options = PipelineOptions([])
    p = make_pipeline(options)
    out = staging_path(str(tmp_path))
    written = p | beam.Create(rows) | WriteTable(f"{out}/t", GROUPED, lambda r: (r["g"], r["id"]), shards=3)
    tallies = written | ExportJsonlFromTable(
        f"{out}/t",
        "g",
        ["a", "b", "c"],
        lambda r: (r["g"], r["id"]),
        lambda r: {"id": r["id"], "n": r["n"]},
        lambda g: f"{out}/t/{g}.jsonl",
        "t",
    )
    report = JobReport(out, "toy", config={}, seed=0, inputs=["mem"], options=options)
    report.tally(written)
    report.tally(tallies)
    report.finish(p)
    run_pipeline(p, commit_to=str(tmp_path))
    assert len(list((tmp_path / "t").glob("part-*-of-00003.parquet"))) == 3
    for group in "abc":
        expected = sorted((r for r in rows if r["g"] == group), key=lambda r: r["id"])
        lines = (tmp_path / "t" / f"{group}.jsonl").read_text().splitlines()
        assert [json.loads(line) for line in lines] == [{"id": r["id"], "n": r["n"]} for r in expected]
    assert (tmp_path / "t" / "c.jsonl").read_text() == ""


def _write_both(out, rows):
    """A 2-shard table and per-group JSON lines of `rows`, written by one pipeline."""
    from tests.engine.written import run_with_groups

    p = make_pipeline(PipelineOptions([]))
    made = p | beam.Create(rows)
    _ = made | WriteTable(f"{out}/t", GROUPED, lambda r: (r["g"], r["id"]), shards=2)
    return run_with_groups(p, made, out)


def test_rows_spilled_in_many_small_runs_give_the_same_bytes_and_leave_no_run_files(tmp_path, monkeypatch):
    from pipelines.engine import sorted_tables

    # equal sort keys with different rows too: their order must not depend on which run they were in
    rows = [{"g": "ab"[i % 2], "id": f"x{(i * 7) % 30:02d}", "n": i} for i in range(90)]
    one = _write_both(tmp_path / "one", rows)
    monkeypatch.setattr(sorted_tables, "SPILL_BYTES", 300)  # a run every few rows
    many = _write_both(tmp_path / "many", list(reversed(rows)))
    assert one == many
    assert sorted(one) == [
        "j/a.jsonl",
        "j/b.jsonl",
        "j/c.jsonl",
        "t/part-00000-of-00002.parquet",
        "t/part-00001-of-00002.parquet",
    ]
    assert not [d for d in (tmp_path / "many").rglob("*") if d.is_dir() and "_spill" in d.name]
    table = pa.concat_tables(
        pq.read_table(tmp_path / "many" / "t" / name)
        for name in ("part-00000-of-00002.parquet", "part-00001-of-00002.parquet")
    )
    assert sorted(table.to_pylist(), key=lambda r: r["n"]) == rows
    lines = [json.loads(x) for x in (tmp_path / "many" / "j" / "a.jsonl").read_text().splitlines()]
    assert [r["id"] for r in lines] == sorted(r["id"] for r in rows if r["g"] == "a")
    assert (tmp_path / "many" / "j" / "c.jsonl").read_text() == ""


def test_a_shard_larger_than_the_memory_merge_is_merged_through_files_with_the_same_bytes(tmp_path, monkeypatch):
    """Above MERGE_IN_MEMORY_BYTES a shard is merged through chunked local files, several merge
    levels deep when there are more runs than MERGE_FAN_IN: the bytes are the in-memory merge's,
    equal keys with different rows included, and no merge file is left behind."""
    import tempfile

    from pipelines.engine import merge_runs, sorted_tables

    rows = [{"g": "ab"[i % 2], "id": f"x{(i * 7) % 30:02d}", "n": i} for i in range(120)]
    monkeypatch.setattr(sorted_tables, "SPILL_BYTES", 300)  # a run every few rows: dozens of runs
    in_memory = _write_both(tmp_path / "memory", rows)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setattr(merge_runs, "MERGE_IN_MEMORY_BYTES", 0)
    monkeypatch.setattr(merge_runs, "MERGE_FAN_IN", 3)
    monkeypatch.setattr(merge_runs, "CHUNK_BYTES", 100)  # a chunk every row or two
    merges = []
    real = merge_runs.external_merge
    monkeypatch.setattr(
        merge_runs,
        "external_merge",
        lambda segments: merges.append(len({path for path, _, _ in segments})) or real(segments),
    )
    external = _write_both(tmp_path / "external", list(reversed(rows)))
    assert merges and max(merges) > 3  # more runs than the fan-in: intermediate levels ran
    assert external == in_memory
    assert list(scratch.iterdir()) == []


def test_the_writers_json_and_shard_hash_equal_the_plain_forms():
    """Table rows, exports and shard buckets use a C JSON encoder made once and a direct
    digest: the same text as json.dumps and the same bucket as stable_int, on unicode,
    escapes, floats, nesting and non-JSON values (str() for keys)."""
    import datetime

    from annotators.core.ids import stable_int
    from pipelines.engine import jsontext, sorted_tables

    rng = rng_for(0, "json")
    alphabet = 'ab"\\\n\t\x00\u2028中文😀 '
    values = [None, True, False, 0, -3, 2**70, 1.5, -0.0, float("inf"), 1e-300, "", datetime.date(2020, 1, 2)]
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        row = {"id": text, "n": rng.randint(-5, 5), "xs": [text, rng.random(), None], "m": {"k": [text]}}
        key = sorted_tables.sortable((rng.choice(["train", "val", None]), text, rng.randint(0, 9)))
        assert jsontext.JSON(row) == json.dumps(row, ensure_ascii=False, sort_keys=False)
        # a JSON line escapes U+2028 (json leaves it raw), so str.splitlines() sees one line; same value
        line = jsontext.jsonl_line(row)
        assert line == json.dumps(row, ensure_ascii=False).replace("\u2028", "\\u2028") + "\n"
        assert json.loads(line) == json.loads(json.dumps(row)) and len(line.splitlines()) == 1
        for k in (key, rng.choice(values), (text, rng.choice(values))):
            plain = json.dumps(k, ensure_ascii=False, default=str)
            assert jsontext.JSON_KEY(k) == plain
            assert sorted_tables.shard_of_key(k, 4096) == stable_int("shard", plain) % 4096


def test_a_shards_neighbouring_buckets_in_a_run_are_read_as_one_range(tmp_path):
    """A run's buckets that belong to the same shard and lie next to each other are one
    (path, offset, length) range, read back as the buckets' pickles one after another: a table
    of one shard reads each run in one piece, with the rows each bucket holds."""
    import pickle

    from pipelines.engine import merge_runs, sorted_tables

    buckets = {b: [((str(b), i), pickle.dumps({"b": b, "i": i}), 1) for i in range(b + 1)] for b in (0, 1, 2, 5)}
    path, segments, offset = tmp_path / "run.pkl", {}, 0
    with open(path, "wb") as f:
        for b, rows in buckets.items():
            data = pickle.dumps(rows)
            f.write(data)
            segments[b] = (offset, len(data))
            offset += len(data)
    run = sorted_tables._Run(str(path), segments, 10, 0)
    assert sorted_tables._shard_segments(run, lambda b: 0) == [(0, [(str(path), 0, offset)])]
    by_parity = dict(sorted_tables._shard_segments(run, lambda b: b % 2))
    assert by_parity[0] == [(str(path), *segments[0]), (str(path), *segments[2])]  # bucket 1 lies between
    assert by_parity[1] == [(str(path), *segments[1]), (str(path), *segments[5])]
    whole = merge_runs.run_rows(str(path), [(str(path), 0, offset)])
    assert whole == [row for rows in buckets.values() for row in rows]
    assert merge_runs.run_rows(str(path), by_parity[1]) == buckets[1] + buckets[5]


def _values_of(n: int) -> list:
    """An element's values for ListsPerBundle: none, one or two, as a story gives examples."""
    return [n, -n][: n % 3]


class _Collect:
    """A fold of single items into a sorted list (so its result does not follow arrival)."""

    def create(self):
        return []

    def add(self, acc, item):
        acc.append(item)
        return acc

    def merge(self, accs):
        return [item for acc in accs for item in acc]

    def result(self, acc):
        return sorted(acc)


def test_lists_per_bundle_hold_every_value_once_and_each_of_folds_them_as_items():
    """Every value the elements give is in exactly one list, no list is empty or longer than
    the size plus one element's values, and EachOf over the lists equals the fold over the items."""
    from apache_beam.runners.portability.fn_api_runner import FnApiRunner
    from apache_beam.testing.util import assert_that, equal_to

    from pipelines.engine.folds import CombineFold, EachOf, ListsPerBundle

    values = [v for n in range(60) for v in _values_of(n)]
    with beam.Pipeline(runner=FnApiRunner()) as p:
        lists = p | beam.Create(list(range(60))) | beam.ParDo(ListsPerBundle(_values_of, 4))
        assert_that(lists | "Items" >> beam.FlatMap(lambda block: block), equal_to(values), label="items")
        bad = lists | "BadSize" >> beam.Filter(lambda block: not 0 < len(block) <= 4 + 1)
        assert_that(bad, equal_to([]), label="sizes")
        folded = lists | beam.CombineGlobally(CombineFold(EachOf(_Collect())))
        assert_that(folded, equal_to([sorted(values)]), label="folded")
