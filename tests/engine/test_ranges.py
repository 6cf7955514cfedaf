"""Line ranges (pipelines.engine.ranges): any cut of a file reads every line exactly once,
numbered as one sequential read numbers it; and the local worker default."""

from __future__ import annotations

import io

from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.engine import ranges
from pipelines.engine.options import SMALL_INPUT_BYTES, WORKERS_ENV, JobOptions, local_workers
from pipelines.engine.ranges import iter_lines
from pipelines.engine.textlines import LongLine, line_payload


def _read_all(path, data: bytes, range_bytes: int) -> list[tuple[int, bytes]]:
    planned = ranges.plan_ranges(str(path), "f", len(data), range_bytes=range_bytes)
    numbered = ranges.number_ranges([ranges.line_starts(r) for r in planned])
    out = []
    for r in numbered:
        with open(path, "rb") as f:
            out += list(enumerate(ranges.range_lines(f, r), start=r.first_line))
    return out


@settings(max_examples=200, deadline=None)
@given(
    data=st.lists(st.sampled_from([b"a", b"bc", b"\n", b"\n\n", b"\xe4\xb8\xad", b"\r\n", b""]), max_size=60).map(
        b"".join
    ),
    range_bytes=st.integers(min_value=1, max_value=12),
)
def test_every_cut_reads_each_line_once_with_its_sequential_number(tmp_path_factory, data, range_bytes):
    path = tmp_path_factory.mktemp("r") / "f.txt"
    path.write_bytes(data)
    expected = list(enumerate(iter_lines(io.BytesIO(data)), start=1))
    assert _read_all(path, data, range_bytes) == expected


@settings(max_examples=300, deadline=None)
@given(
    data=st.lists(st.sampled_from([b"a", b"bcdefg", b"\n", b"\n\n", b"\r\n", b"x" * 9]), max_size=40).map(b"".join),
    chunk=st.integers(min_value=1, max_value=10),
    limit=st.integers(min_value=1, max_value=16),
)
def test_a_line_over_the_limit_is_read_past_keeping_its_size_and_first_bytes(data, chunk, limit):
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    expected = [LongLine(len(x), x, limit) if len(x) > limit else x for x in lines]
    assert list(iter_lines(io.BytesIO(data), chunk, limit)) == expected


def test_a_long_line_is_one_drop_and_is_never_held_whole():
    reads = []

    class Source(io.BytesIO):
        def read(self, n=-1):
            reads.append(n)
            return super().read(n)

    data = b"ok\n[" + b'{"id": 1},' * 100_000 + b"{}]\nafter\n"
    got = list(iter_lines(Source(data), chunk=4096, limit=64 * 1024))
    assert got[0] == b"ok" and got[2] == b"after" and all(n == 4096 for n in reads)
    long = got[1]
    assert isinstance(long, LongLine) and len(long) == len(data) - 10 and len(long.head) <= 120
    drop = line_payload(long)
    assert drop.reason == "line_too_long" and "jq -c" in drop.detail["message"]
    assert line_payload(b"text\r") == b"text"


def test_a_small_or_compressed_file_is_one_whole_range():
    assert ranges.plan_ranges("a.txt", "a", 10) == [ranges.LineRange("a.txt", "a", 0, -1, 1)]
    assert len(ranges.plan_ranges("a.txt.gz", "a", 10 << 20, splittable=False)) == 1
    cut = ranges.plan_ranges("a.txt", "a", 10 << 20, range_bytes=4 << 20)
    assert [(r.start, r.end) for r in cut] == [(0, 4 << 20), (4 << 20, 8 << 20), (8 << 20, 10 << 20)]
    assert ranges.is_compressed("x/ref.TXT.GZ") and not ranges.is_compressed("x/ref.txt")


def test_ranges_of_two_files_are_numbered_per_file(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_bytes(b"1\n2\n3\n4\n5\n")
    b.write_bytes(b"x\ny\n")
    planned = ranges.plan_ranges(str(a), "a", 10, range_bytes=3) + ranges.plan_ranges(str(b), "b", 4, range_bytes=3)
    numbered = ranges.number_ranges([ranges.line_starts(r) for r in reversed(planned)])
    firsts = [(r.name, r.start, r.first_line) for r in numbered]  # [9, 10) holds no line start: 6 is next
    assert firsts == [("a", 0, 1), ("a", 3, 3), ("a", 6, 4), ("a", 9, 6), ("b", 0, 1), ("b", 3, 3)]


def _workers(argv, nbytes, monkeypatch, env=None, options_class=JobOptions):
    """(processes, pool workers, Beam's direct_num_workers, Beam's running mode); the options
    are JobOptions unless said (what parse_job_args gives a job)."""
    from pipelines.engine import pool

    monkeypatch.delenv(WORKERS_ENV, raising=False)
    if env is not None:
        monkeypatch.setenv(WORKERS_ENV, env)
    monkeypatch.setattr("pipelines.engine.options.machine_cores", lambda: 4)
    options = options_class(argv)
    try:
        n = local_workers(options, nbytes)
        workers = pool.workers()
    finally:
        pool.configure(0)
    direct = options.view_as(DirectOptions)
    return n, workers, direct.direct_num_workers, direct.direct_running_mode


def test_a_local_run_uses_every_core_unless_told_or_small(monkeypatch):
    """Every core by default (a pool worker each, Beam's runner in this process), one
    process for a small input or `--direct_num_workers 1`; Beam's own multi-process mode
    only when asked for by name; no pool on a remote runner."""
    assert _workers([], SMALL_INPUT_BYTES, monkeypatch) == (4, 4, 1, "in_memory")
    assert _workers([], SMALL_INPUT_BYTES - 1, monkeypatch) == (1, 0, 1, "in_memory")
    assert _workers(["--direct_num_workers", "1"], 1 << 30, monkeypatch) == (1, 0, 1, "in_memory")
    assert _workers(["--direct_num_workers=3"], 0, monkeypatch) == (3, 3, 1, "in_memory")
    assert _workers(["--direct_running_mode=in_memory"], 1 << 30, monkeypatch)[:2] == (1, 0)
    assert _workers([], 0, monkeypatch, env="2") == (2, 2, 1, "in_memory")
    mp = ["--direct_running_mode=multi_processing", "--direct_num_workers=2"]
    assert _workers(mp, 1 << 30, monkeypatch) == (2, 0, 2, "multi_processing")
    assert _workers(["--runner", "DataflowRunner"], 1 << 30, monkeypatch)[:2] == (0, 0)
    # options made elsewhere know only values other than the default: no flag is seen at its default
    plain = {"monkeypatch": monkeypatch, "options_class": PipelineOptions}
    assert _workers(["--direct_num_workers=3"], 0, **plain)[:2] == (3, 3)
    assert _workers(["--direct_num_workers=1"], SMALL_INPUT_BYTES, **plain)[:2] == (4, 4)


def test_blocks_of_records_hold_every_record_in_order_and_stay_bounded(tmp_path, monkeypatch):
    """`stream_blocks` (ReadRecords(blocks=True)) gives exactly `stream_range`'s records, in
    order, in blocks of at most BLOCK_RECORDS records that stop once BLOCK_BYTES is reached."""
    from annotators.audits import records as ar
    from pipelines.engine import readers, records

    path = tmp_path / "ref.txt"
    path.write_bytes(b"".join(b"x" * (i % 37) + b"\n" for i in range(1000)))
    source = ar.AuditSource(str(path), "outgen", "ref.txt")
    whole = ranges.LineRange(str(path), "ref.txt", 0, -1, 1, source)
    monkeypatch.setattr(readers, "BLOCK_RECORDS", 100)
    monkeypatch.setattr(readers, "BLOCK_BYTES", 500)
    blocks = list(records.stream_blocks(whole, None))
    assert [r for b in blocks for r in b] == list(records.stream_range(whole, None))
    assert all(len(b) <= 100 for b in blocks)
    # each block but the last ends with the record that reached 500 bytes (or the 100th)
    assert all(sum(len(r.payload) for r in b[:-1]) < 500 and len(b) < 100 for b in blocks[:-1])
    assert all(sum(len(r.payload) for r in b) >= 500 for b in blocks[:-1])


@settings(max_examples=200, deadline=None)
@given(
    data=st.lists(st.sampled_from([b"a", b"bc", b"\n", b"\n\n", b"\xe4\xb8\xad", b"\r\n", b""]), max_size=60).map(
        b"".join
    ),
    range_bytes=st.integers(min_value=1, max_value=12),
    block_bytes=st.integers(min_value=1, max_value=7),
)
def test_blocks_read_where_they_are_worked_on_hold_the_ranges_records(tmp_path_factory, data, range_bytes, block_bytes):
    """`range_blocks` cuts each numbered range into RangeBlocks numbered here; read (on a pool
    worker, `records()`), they give exactly the records, ids and line numbers that reading
    the whole file in one go gives, and no block is empty."""
    from annotators.audits import records as ar
    from pipelines.engine import records

    path = tmp_path_factory.mktemp("b") / "ref.txt"
    path.write_bytes(data)
    source = ar.AuditSource(str(path), "outgen", "ref.txt")
    planned = ranges.plan_ranges(str(path), "ref.txt", len(data), range_bytes=range_bytes, source=source)
    numbered = ranges.number_ranges([ranges.line_starts(r) for r in planned])
    if numbered[0].end < 0:  # an empty file is one whole range, read here as before
        return
    blocks = [b for r in numbered for b in records.range_blocks(r, size=block_bytes)]
    assert all(b.records() for b in blocks)
    got = [r for b in blocks for r in b.records()]
    whole = ranges.LineRange(str(path), "ref.txt", 0, -1, 1, source)
    assert got == list(records.stream_range(whole, None))


def test_a_block_whose_file_is_gone_is_one_unreadable_file_record(tmp_path):
    from annotators.audits import records as ar
    from pipelines.engine import records

    path = tmp_path / "ref.txt"
    path.write_bytes(b"one\ntwo\nthree\n")
    source = ar.AuditSource(str(path), "outgen", "ref.txt")
    blocks = list(records.range_blocks(ranges.LineRange(str(path), "ref.txt", 0, 14, 1, source), size=5))
    # lines start at bytes 0, 4 and 8: [10, 14) holds no line start and is no block
    assert [(b.start, b.end, b.first_line) for b in blocks] == [(0, 5, 1), (5, 10, 3)]
    path.unlink()
    (gone,) = blocks[1].records()
    assert gone.input_id == "ref.txt:3" and gone.payload.reason == "unreadable_file"
