"""The local process pool (pipelines.engine.pool): Stages on worker processes, same results."""

from __future__ import annotations

import functools
import os
import time

import apache_beam as beam
import pytest
from apache_beam.runners.portability.fn_api_runner import FnApiRunner

from annotators.core.outcome import Drop
from pipelines.engine import pool, pool_worker
from pipelines.engine.stage import REJECTS, TALLY, Stage
from tests.engine import pool_steps

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def two_workers():
    pool.configure(2)
    yield
    pool.configure(0)


_OUT: dict = {}


def _keep(items, name):
    _OUT[name] = sorted(items, key=repr)


def keep(name):
    return beam.Map(_keep, name)


def _collect(fn, records, **kwargs):
    """{"main", "rejects", "tallies"} of a Stage over `records` on the in-process runner."""
    _OUT.clear()

    with beam.Pipeline(runner=FnApiRunner()) as p:
        result = p | beam.Create(records) | Stage("s", fn, input_id=lambda r: r, **kwargs)
        result["main"] | "Main" >> beam.combiners.ToList() | "KeepMain" >> keep("main")
        (
            result[REJECTS]
            | beam.Map(lambda r: (r["input_id"], r["reason"]))
            | "Rejects" >> beam.combiners.ToList()
            | "KeepRejects" >> keep("rejects")
        )
        (
            result[TALLY]
            | beam.CombinePerKey(sum)
            | "Tallies" >> beam.combiners.ToList()
            | "KeepTallies" >> keep("tallies")
        )
    return dict(_OUT)


RECORDS = [f"story {i}" for i in range(700)] + ["", "boom"]


def test_a_stage_gives_the_same_outputs_rejects_and_tallies_on_the_pool(two_workers):
    """Words of each record on 2 workers (an empty record is a Drop, an exception an
    internal_error reject): exactly what the job's process alone gives, records in batches
    and several tasks in flight."""
    on_pool = _collect(pool_steps.words, RECORDS)
    pool.configure(0)
    here = _collect(pool_steps.words, RECORDS)
    assert on_pool == here
    assert ("", "empty") in on_pool["rejects"] and ("boom", "internal_error") in on_pool["rejects"]
    assert ("s|read", 702) in on_pool["tallies"] and len(on_pool["main"]) == 1400


def test_the_work_runs_in_the_workers_not_in_the_job(two_workers, monkeypatch):
    """The pid each record was worked on: the two workers', never this process's."""
    monkeypatch.setattr(pool, "BATCH_ITEMS", 16)
    out = _collect(pool_steps.pid_of, [f"r{i}" for i in range(400)])
    pids = {pid for _, pid in out["main"]}
    assert os.getpid() not in pids and 1 <= len(pids) <= 2


def test_a_closure_of_the_annotators_runs_there_with_its_setup_and_side_inputs(two_workers):
    """A closure travels by value (cloudpickle); its setup runs in each worker before it;
    side inputs reach it as keyword arguments."""
    _OUT.clear()
    with beam.Pipeline(runner=FnApiRunner()) as p:
        side = p | "Side" >> beam.Create([("x", 1)])
        records = p | beam.Create(["a", "b", "c"])
        result = records | Stage(
            "s",
            pool_steps.tagger("t"),
            input_id=lambda r: r,
            setup=pool_steps.mark_setup,
            side_inputs={"extra": beam.pvalue.AsDict(side)},
        )
        result["main"] | beam.combiners.ToList() | keep("main")
    out = dict(_OUT)
    assert [m[:2] for m in out["main"]] == [("t", "a"), ("t", "b"), ("t", "c")]
    assert {m[2] for m in out["main"]} == {True} and {m[3] for m in out["main"]} == {1}
    assert os.getpid() not in {m[4] for m in out["main"]}


def test_a_step_of_the_wiring_runs_in_the_job_process(two_workers):
    """A lambda of a job's module (`pipelines.*`, which imports Beam) is not sent to a
    worker (it would import Beam there): it runs in this process, with the same results."""
    step = lambda r: [(r, os.getpid())]  # noqa: E731
    step.__module__ = "pipelines.stories"
    out = _collect(step, ["a", "b"])
    assert {pid for _, pid in out["main"]} == {os.getpid()}


def test_a_function_whose_unpickling_imports_beam_comes_back(two_workers, monkeypatch):
    """A partial of a function that imports Beam when it unpickles is refused by the worker
    (which then stops) and run in this process: same outcomes."""
    from apache_beam.utils.timestamp import Timestamp

    monkeypatch.setattr(pool, "BATCH_ITEMS", 2)  # tasks still queued when a worker refuses and stops
    records = [f"r{i:02d}" for i in range(40)]
    out = _collect(functools.partial(pool_steps.with_helper, Timestamp), records)
    assert sorted(x for x, _ in out["main"]) == [f"{r}1" for r in records]
    assert {pid for _, pid in out["main"]} == {os.getpid()}


def test_a_worker_that_dies_fails_the_run_instead_of_hanging():
    workers = pool.Pool(1)
    try:
        batches = pool.Batches(workers, "s", pool_steps.die)
        assert batches.add("x", "x")
        with pytest.raises(pool.PoolError, match="ended"):
            list(batches.finish())
    finally:
        workers.close()


def test_idle_workers_stop_and_start_again(monkeypatch):
    monkeypatch.setattr(pool, "IDLE_SECONDS", 0.4)
    workers = pool.Pool(2)
    try:
        batches = pool.Batches(workers, "s", pool_steps.words)
        batches.add("a", "a b")
        assert [r for _, r in batches.finish()] == [["a", "b"]]
        first = [w.proc.pid for w in workers._workers if w is not None]
        deadline = time.monotonic() + 10
        while any(w is not None for w in workers._workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert all(w is None for w in workers._workers)
        again = pool.Batches(workers, "s", pool_steps.words)
        again.add("c", "c")
        assert [r for _, r in again.finish()] == [["c"]]
        assert not set(first) & {w.proc.pid for w in workers._workers if w is not None}
    finally:
        workers.close()


@pytest.mark.parametrize(
    ("env", "increment"), [(None, pool_worker.DEFAULT_NICE), ("3", 3), ("0", 0), ("x", pool_worker.DEFAULT_NICE)]
)
def test_workers_run_at_a_lower_priority_than_the_job(monkeypatch, env, increment):
    """A worker's niceness is the job's plus STORYBENCH_POOL_NICE (default 10; 0 keeps the
    job's; not a number: the default), so the job's process, which feeds the workers, gets a
    core when it needs one."""
    if env is None:
        monkeypatch.delenv(pool_worker.NICE_ENV, raising=False)
    else:
        monkeypatch.setenv(pool_worker.NICE_ENV, env)
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    workers = pool.Pool(1)
    try:
        batches = pool.Batches(workers, "s", pool_steps.niceness)
        batches.add("a", "a")
        assert [r for _, r in batches.finish()] == [[("a", min(mine + increment, 19))]]
    finally:
        workers.close()
    assert os.getpriority(os.PRIO_PROCESS, 0) == mine


def test_a_drop_from_the_pool_is_the_drop_the_step_returned(two_workers):
    workers = pool.current()
    batches = pool.Batches(workers, "s", pool_steps.words)
    for r in ["", "x y", "boom"]:
        batches.add(r, r)
    results = dict(batches.finish())
    assert results[""] == Drop("empty", "no words")
    assert results["x y"] == ["x", "y"]
    assert results["boom"].reason == "internal_error" and "ValueError" in results["boom"].detail


def test_only_wiring_stays_here_through_a_partial():
    """A partial is judged by the functions it holds: the Beam-free `one` wrapping an
    annotator's step goes to the pool; a partial holding a wiring lambda stays here."""
    from pipelines.engine.pool_worker import one

    assert not pool._wiring(functools.partial(one, pool_steps.words))
    assert not pool._wiring(functools.partial(pool_steps.words))
    wiring = lambda r: r  # noqa: E731
    wiring.__module__ = "pipelines.stories"
    assert pool._wiring(functools.partial(one, wiring))
    assert pool._wiring(functools.partial(pool_steps.tagger, fn=wiring))


def test_spilled_records_get_their_keys_from_the_workers(two_workers, tmp_path):
    """SpillRecords computes each key on the pool, from the pickle it spills (the stories
    job's MinHash), and the key and location come back for every record."""
    from pipelines.engine.spill import SpillRecords, read_records

    _OUT.clear()
    records = [f"story {i}" for i in range(300)]
    with beam.Pipeline(runner=FnApiRunner()) as p:
        spilled = p | beam.Create(records) | beam.ParDo(SpillRecords(str(tmp_path), pool_steps.pid_key))
        spilled | beam.combiners.ToList() | keep("main")
    out = _OUT["main"]
    assert sorted(record for (record, _), _ in out) == sorted(records)
    assert os.getpid() not in {pid for (_, pid), _ in out}
    back = read_records(loc for _, loc in out)
    assert all(back[loc] == record for (record, _), loc in out)


def test_spilled_records_keep_a_key_they_hold_here_when_not_pooled(two_workers, tmp_path):
    """With `pooled=False` the key function runs in this process (a key already in the
    record, LOT's component id: sending the record to a worker for it would cost more)."""
    from pipelines.engine.spill import SpillRecords, read_records

    _OUT.clear()
    records = [f"story {i}" for i in range(300)]
    with beam.Pipeline(runner=FnApiRunner()) as p:
        spilled = p | beam.Create(records) | beam.ParDo(SpillRecords(str(tmp_path), pool_steps.pid_key, pooled=False))
        spilled | beam.combiners.ToList() | keep("main")
    out = _OUT["main"]
    assert sorted(record for (record, _), _ in out) == sorted(records)
    assert {pid for (_, pid), _ in out} == {os.getpid()}
    back = read_records(loc for _, loc in out)
    assert all(back[loc] == record for (record, _), loc in out)


_STOPPED_WHILE_REPLYING = """
import os, signal, sys, threading, time
from pipelines.engine import pool
from tests.engine import pool_steps

workers = pool.Pool(1)
stop = threading.Event()
batches = pool.Batches(workers, "s", pool_steps.big)
batches.add("a", "a")
batches.send()
pid = workers._workers[0].proc.pid

def pester():
    while not stop.is_set():
        os.kill(pid, signal.SIGSTOP)
        time.sleep(0.001)
        os.kill(pid, signal.SIGCONT)
        time.sleep(0.001)

threading.Thread(target=pester, daemon=True).start()
for r in "bcdefghij":
    batches.add(r, r)
out = list(batches.finish())
stop.set()
workers.close()
assert [(tag, value) for tag, [value] in out] == [(r, r * (2 << 20)) for r in "abcdefghij"]
print("replies whole")
"""


def test_a_worker_stopped_and_continued_while_replying_still_sends_whole_replies():
    """SIGSTOP/SIGCONT (Ctrl-Z then fg, or a profiler attaching) cut a pipe write short; the
    worker writes the rest (a buffered writer lost it, and the job waited forever)."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _STOPPED_WHILE_REPLYING], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "replies whole" in done.stdout


def _flat_map(records, fn):
    from pipelines.engine.stage import PooledFlatMap

    _OUT.clear()
    with beam.Pipeline(runner=FnApiRunner()) as p:
        p | beam.Create(records) | beam.ParDo(PooledFlatMap("pieces", fn)) | beam.combiners.ToList() | keep("main")
    return _OUT["main"]


def test_a_pooled_flat_map_gives_the_flat_maps_outputs_from_the_workers(two_workers):
    records = [f"a{i} b{i} c{i}" for i in range(200)]
    out = _flat_map(records, pool_steps.pieces)
    assert sorted(part for part, _ in out) == sorted(p for r in records for p in r.split())
    assert os.getpid() not in {pid for _, pid in out}
    pool.configure(0)
    here = _flat_map(records, pool_steps.pieces)
    assert sorted(part for part, _ in here) == sorted(part for part, _ in out)
    assert {pid for _, pid in here} == {os.getpid()}


def test_a_pooled_flat_map_fails_the_job_on_an_exception_as_a_flat_map_does(two_workers):
    with pytest.raises(Exception, match="a component that breaks the step"):
        _flat_map(["x y", "boom"], pool_steps.pieces)


def _blocks(records, size):
    return [records[i : i + size] for i in range(0, len(records), size)]


@pytest.mark.parametrize("workers", [0, 2])
def test_a_stage_of_blocks_accounts_for_each_record_as_one_record_per_element(workers):
    """`blocks=True`: elements are lists of records and `fn` applies to each. Outputs,
    rejects and tallies are those of one record per element, here and on the pool."""
    pool.configure(workers)
    try:
        per_record = _collect(pool_steps.words, RECORDS)
        in_blocks = _collect(pool_steps.words, _blocks(RECORDS, 64), blocks=True)
    finally:
        pool.configure(0)
    assert in_blocks == per_record
    assert ("s|read", 702) in in_blocks["tallies"] and ("s|written", 700) in in_blocks["tallies"]


@pytest.mark.parametrize("workers", [0, 2])
def test_a_stage_of_blocks_with_merge_yields_each_blocks_merged_outputs(workers):
    """With `merge`, each block's outputs leave merged (one list per block here); every record
    is still read, written or rejected, and the outputs tally counts the unmerged outputs."""
    pool.configure(workers)
    try:
        records = ["a b", "b c", "", "boom", "a"] * 40
        out = _collect(pool_steps.words, _blocks(records, 50), blocks=True, merge=pool_steps.word_counts)
    finally:
        pool.configure(0)
    assert sorted(out["main"]) == sorted([("a", 20), ("b", 20), ("c", 10)] * 4)
    tallies = dict(out["tallies"])
    assert (tallies["s|read"], tallies["s|written"], tallies["s|rejected"]) == (200, 120, 80)
    assert tallies["s|outputs"] == 200
    assert sorted(set(out["rejects"])) == [("", "empty"), ("boom", "internal_error")]


def test_a_merge_that_fails_rejects_every_record_of_its_block():
    out = _collect(pool_steps.words, [["a", "b"], ["c"]], blocks=True, merge=pool_steps.bad_merge)
    assert out["main"] == [] and sorted(out["rejects"]) == [(r, "internal_error") for r in "abc"]
    assert ("s|read", 3) in out["tallies"] and ("s|rejected", 3) in out["tallies"]


def _group_words(group):
    _, records = group
    return [(r, r.split() if r else Drop("empty", "no words")) for r in records]


def test_a_grouped_stage_with_merge_accounts_for_each_record_and_yields_the_merged_outputs():
    """grouped=True with merge (the stories job's exact_dedup packs each partition's kept
    pairs): every record is read, written or rejected as without merge; the outputs of a
    group leave as what merge makes of them, in order."""
    groups = [("g1", ["a b", "", "c"]), ("g2", ["d"]), ("g3", [""])]
    out = _collect(_group_words, groups, grouped=True, merge=lambda outputs: [tuple(outputs)])
    assert sorted(out["main"]) == [("a", "b", "c"), ("d",)]
    assert sorted(out["rejects"]) == [("", "empty"), ("", "empty")]
    tallies = dict(out["tallies"])
    assert (tallies["s|read"], tallies["s|written"], tallies["s|rejected"], tallies["s|outputs"]) == (5, 3, 2, 4)


GROUPS = [("g1", ["a b", "", "c"]), ("g2", ["d"]), ("bad", ["x"]), ("g3", [""])] + [
    (f"h{i}", [f"w{i} v{i}", f"u{i}"]) for i in range(40)
]


@pytest.mark.parametrize("merge", [None, pool_steps.joined])
def test_a_grouped_stage_with_pool_groups_decides_each_group_on_the_pool_as_here(merge):
    """`pool_groups=True`: each group is one task on the pool, and the outputs (merged or
    not), rejects (a record's Drop; a group whose step raises is one internal_error) and
    tallies are exactly those of the job's process deciding every group itself."""
    pool.configure(2)
    try:
        on_pool = _collect(pool_steps.group_words, GROUPS, grouped=True, merge=merge, pool_groups=True)
    finally:
        pool.configure(0)
    here = _collect(pool_steps.group_words, GROUPS, grouped=True, merge=merge, pool_groups=True)
    assert on_pool == here
    tallies = dict(here["tallies"])
    assert (tallies["s|read"], tallies["s|written"], tallies["s|rejected"]) == (86, 83, 3)
    assert sorted(r for _, r in here["rejects"]) == ["empty", "empty", "internal_error"]
    if merge is not None:
        assert ("a", "b", "c") in here["main"] and len(here["main"]) == 42


@pytest.mark.parametrize("workers", [0, 2])
def test_a_grouped_merge_that_fails_rejects_its_group(workers):
    """A group whose merge raises is one internal_error reject (under the group's input id),
    here and on the pool, as a group whose step raises; the other groups go on."""
    pool.configure(workers)
    try:
        groups = [("g", ["a", "b"]), ("h", ["c"])]
        out = _collect(pool_steps.group_words, groups, grouped=True, merge=pool_steps.bad_merge, pool_groups=True)
    finally:
        pool.configure(0)
    assert out["main"] == []
    assert sorted(out["rejects"]) == [(str(g), "internal_error") for g in groups]


def test_the_groups_of_a_pooled_grouped_stage_are_decided_by_the_workers(two_workers):
    groups = [(f"g{i}", [f"r{i}", f"s{i}"]) for i in range(30)]
    out = _collect(pool_steps.group_pids, groups, grouped=True, pool_groups=True)
    pids = {pid for pid in out["main"]}
    assert len(out["main"]) == 60 and os.getpid() not in pids and 1 <= len(pids) <= 2
    pool.configure(0)
    assert set(_collect(pool_steps.group_pids, groups, grouped=True)["main"]) == {os.getpid()}


def test_a_fresh_stage_runs_on_new_workers_without_what_a_setup_loaded(two_workers):
    """A stage with a setup loads it on the workers, and a later stage keeps those workers
    (and what they loaded); a stage with `fresh_workers=True` gets new workers instead,
    which hold nothing an earlier setup loaded."""
    records = [f"r{i}" for i in range(200)]
    loaded = _collect(pool_steps.pid_setup, records, setup=pool_steps.mark_setup)["main"]
    kept = _collect(pool_steps.pid_setup, records)["main"]
    fresh = _collect(pool_steps.pid_setup, records, fresh_workers=True)["main"]
    loaded_pids = {pid for _, pid, _ in loaded}
    assert {done for _, _, done in loaded} == {True} and os.getpid() not in loaded_pids
    assert {pid for _, pid, _ in kept} <= loaded_pids and {done for _, _, done in kept} == {True}
    assert not {pid for _, pid, _ in fresh} & loaded_pids and {done for _, _, done in fresh} == {False}
    again = _collect(pool_steps.pid_setup, records, fresh_workers=True)["main"]
    assert {pid for _, pid, _ in again} <= {pid for _, pid, _ in fresh}  # fresh ones are not replaced again


def _lines_soon(path, n: int, seconds: float = 30.0) -> list[str]:
    """The lines of `path` once it has `n` of them (or whatever it has after `seconds`)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if os.path.exists(path) and len(open(path).read().splitlines()) >= n:
            break
        time.sleep(0.05)
    return open(path).read().splitlines() if os.path.exists(path) else []


def _worker_pids(workers: pool.Pool, folder, n: int = 40) -> list[tuple]:
    """(record, pid, whether that worker ran mark_setup) of `n` records on `workers`, with no
    setup of the stage's own; each task waits until both workers have taken one (in `folder`),
    so that neither can run them all while the other is still starting."""
    os.makedirs(folder)
    batches = pool.Batches(workers, "s", pool_steps.pid_setup_met, items=1)
    for i in range(n):
        assert batches.add(i, (f"r{i}", str(folder)))
    return [got for _, results in batches.finish() for got in results]


def test_warm_runs_the_setups_once_and_every_worker_is_a_clone_that_holds_them(tmp_path, two_workers):
    """Where the pool can clone (Linux): one worker runs the setups, then forks the pool's
    workers, which hold what the setups did (mark_setup's state) without running them."""
    if not pool._can_clone():
        pytest.skip("this platform cannot clone a warmed worker")
    path = str(tmp_path / "setups.txt")
    workers = pool.current()
    workers.warm([functools.partial(pool_steps.note_setup, path), pool_steps.mark_setup])
    warmed = _lines_soon(path, 1)
    got = _worker_pids(workers, tmp_path / "met")
    pids = {pid for _, pid, _ in got}
    assert len(warmed) == 1 and open(path).read().split() == warmed  # the setups ran once
    assert len(pids) == 2 and str(os.getpid()) not in warmed and not pids & {int(warmed[0]), os.getpid()}
    assert {done for _, _, done in got} == {True}


def test_warm_runs_the_setups_on_every_worker_when_the_pool_cannot_clone(tmp_path, two_workers, monkeypatch):
    monkeypatch.setitem(pool._STATE, "reaper", False)
    path = str(tmp_path / "setups.txt")
    workers = pool.current()
    workers.warm([functools.partial(pool_steps.note_setup, path), pool_steps.mark_setup])
    pids = _lines_soon(path, 2)
    assert len(pids) == 2 and len(set(pids)) == 2 and str(os.getpid()) not in pids
    got = _worker_pids(workers, tmp_path / "met")
    assert {str(pid) for _, pid, _ in got} == set(pids) and {done for _, _, done in got} == {True}


def test_clones_are_collected_here_with_their_cpu_time(tmp_path, two_workers):
    """The clones' parent ends once they are made; this process collects them when the pool
    closes (no process is left behind) and their CPU time counts in its children's."""
    if not pool._can_clone():
        pytest.skip("this platform cannot clone a warmed worker")
    workers = pool.current()
    workers.warm([pool_steps.mark_setup])
    before = os.times()
    batches = pool.Batches(workers, "s", pool_steps.spin_met, items=1)
    for i in range(4):
        assert batches.add(i, (0.3, str(tmp_path)))
    pids = {pid for _, results in batches.finish() for pid in results}
    pool.configure(0)  # closes the pool
    after = os.times()
    spent = (after.children_user + after.children_system) - (before.children_user + before.children_system)
    assert len(pids) == 2 and spent >= 1.0  # 4 x 0.3 s of CPU, done by the clones
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # ended and collected: not even a zombie is left


def test_a_warm_up_that_fails_leaves_workers_started_here(tmp_path, two_workers):
    """A setup that raises where the pool warms and clones: no clone is made, the pool
    starts its workers here instead, and a stage's records are still worked on."""
    workers = pool.current()
    workers.warm([pool_steps.failing_setup])
    got = _worker_pids(workers, tmp_path / "met", 10)
    assert sorted(r for r, _, _ in got) == sorted(f"r{i}" for i in range(10))
    assert os.getpid() not in {pid for _, pid, _ in got}


def _job_pipeline(flags, path):
    """A job's pipeline (make_pipeline) whose one Stage has a setup that notes its process."""
    from pipelines.engine.options import JobOptions, make_pipeline

    p = make_pipeline(JobOptions(flags))
    out = (
        p
        | beam.Create([f"r{i}" for i in range(300)])
        | Stage("s", pool_steps.pid_of, input_id=lambda r: r, setup=functools.partial(pool_steps.note_setup, path))
    )
    out["main"] | beam.combiners.ToList() | keep("main")
    return p


def test_a_stages_setup_starts_on_the_workers_while_the_graph_is_built(tmp_path):
    """With a pool ahead (`--direct_num_workers 2`), the workers start when the Stage is
    applied and run its setup before the pipeline runs; the run then keeps those workers."""
    from pipelines.engine.options import run_pipeline

    path = str(tmp_path / "setups.txt")
    _OUT.clear()
    try:
        p = _job_pipeline(["--direct_num_workers", "2"], path)
        warmed = _lines_soon(path, 1 if pool._can_clone() else 2)  # before p runs
        assert warmed and str(os.getpid()) not in warmed
        run_pipeline(p)
    finally:
        pool.configure(0)
    assert len(_OUT["main"]) == 300
    workers = {pid for _, pid in _OUT["main"]}
    assert os.getpid() not in workers
    if not pool._can_clone():
        assert workers <= {int(pid) for pid in warmed}  # the warmed workers did the work


@pytest.mark.parametrize("flags", [["--direct_num_workers", "1"], []])
def test_no_worker_starts_while_building_a_run_of_one_process(tmp_path, flags):
    """One process (`--direct_num_workers 1`, or an input under SMALL_INPUT_BYTES without a
    flag): building the graph starts no worker, and the setup runs in this process."""
    from pipelines.engine.options import run_pipeline

    path = str(tmp_path / "setups.txt")
    _OUT.clear()
    try:
        p = _job_pipeline(flags, path)
        assert pool.current() is None and not os.path.exists(path)
        run_pipeline(p)
    finally:
        pool.configure(0)
    assert set(open(path).read().split()) == {str(os.getpid())}
    assert {pid for _, pid in _OUT["main"]} == {os.getpid()}


def test_a_dry_run_starts_no_worker(tmp_path):
    """A dry run runs nothing: building its graph starts no pool, whatever the flags."""
    path = str(tmp_path / "setups.txt")
    try:
        _job_pipeline(["--direct_num_workers", "2", "--dry_run=True"], path)
        assert pool.current() is None and not os.path.exists(path)
    finally:
        pool.configure(0)


@pytest.mark.parametrize("workers", [0, 2])
@pytest.mark.parametrize("merge", [None, pool_steps.word_counts_of_pairs])
def test_blocks_read_where_they_are_worked_on_give_what_blocks_read_here_give(tmp_path, workers, merge):
    """A reference file's RangeBlocks (ReadRecords(blocks=True) on a line range): the stage
    reads each block where it works on it, on the pool's workers, and the outputs, rejects
    (ids with their line numbers) and tallies are those of the same lines read by the job's
    process and sent as lists of records."""
    from annotators.audits.records import AuditSource
    from pipelines.engine import ranges, records

    path = tmp_path / "ref.txt"
    path.write_bytes("\n".join(RECORDS).encode() + b"\n")
    source = AuditSource(str(path), "outgen", "ref.txt")
    lines = ranges.LineRange(str(path), "ref.txt", 0, path.stat().st_size, 1, source)
    lazy = list(records.range_blocks(lines, size=512))
    eager = [b.records() for b in lazy]
    assert len(lazy) > 4 and [r for b in eager for r in b] == list(records.stream_range(lines, None))
    pool.configure(workers)
    try:
        kwargs = {"blocks": True, "merge": merge, "input_id": lambda r: r.input_id}
        read_there = _collect_raw(pool_steps.line_words, lazy, **kwargs)
        read_here = _collect_raw(pool_steps.line_words, eager, **kwargs)
    finally:
        pool.configure(0)
    if merge is None:  # the words, and the processes that cut them
        pids = {pid for _, pid in read_there["main"]}
        assert (os.getpid() not in pids) if workers else (pids == {os.getpid()})
        read_there["main"] = sorted(word for word, _ in read_there["main"])
        read_here["main"] = sorted(word for word, _ in read_here["main"])
    assert read_there == read_here
    assert sorted(set(read_there["rejects"])) == [("ref.txt:701", "empty"), ("ref.txt:702", "internal_error")]
    tallies = dict(read_there["tallies"])
    assert (tallies["s|read"], tallies["s|written"], tallies["s|rejected"]) == (702, 700, 2)


def _collect_raw(fn, elements, **kwargs):
    """`_collect` for a stage with its own input_id (RawRecords, blocks of them)."""
    _OUT.clear()
    with beam.Pipeline(runner=FnApiRunner()) as p:
        result = p | beam.Create(elements) | Stage("s", fn, **kwargs)
        result["main"] | "Main" >> beam.combiners.ToList() | "KeepMain" >> keep("main")
        (
            result[REJECTS]
            | beam.Map(lambda r: (r["input_id"], r["reason"]))
            | "R" >> beam.combiners.ToList()
            | "KR" >> keep("rejects")
        )
        result[TALLY] | beam.CombinePerKey(sum) | "T" >> beam.combiners.ToList() | "KT" >> keep("tallies")
    return dict(_OUT)


def test_a_block_read_there_whose_merge_fails_rejects_each_of_its_lines(tmp_path):
    """No ids come back from a block whose merge failed: they are read again here, so each
    line is one internal_error reject under its own id."""
    from annotators.audits.records import AuditSource
    from pipelines.engine import ranges, records

    path = tmp_path / "ref.txt"
    path.write_bytes(b"a b\nc\n")
    source = AuditSource(str(path), "outgen", "ref.txt")
    lines = ranges.LineRange(str(path), "ref.txt", 0, 6, 1, source)
    out = _collect_raw(
        pool_steps.line_words,
        list(records.range_blocks(lines)),
        blocks=True,
        merge=pool_steps.bad_merge,
        input_id=lambda r: r.input_id,
    )
    assert out["main"] == [] and sorted(out["rejects"]) == [
        ("ref.txt:1", "internal_error"),
        ("ref.txt:2", "internal_error"),
    ]


def test_a_prefetch_runs_once_on_a_thread_when_the_job_first_waits_for_the_workers(two_workers):
    """Pool.prefetch (the figures' matplotlib import, JobReport.finish): not run when it is
    registered, run once, on a thread of the job's process, once a stage waits for its
    tasks; a prefetch that fails is quiet (the import fails again where it is needed)."""
    import threading

    ran: list[str] = []
    pool.current().prefetch(lambda: ran.append(threading.current_thread().name))
    pool.current().prefetch(lambda: 1 / 0)
    assert ran == []
    _collect(pool_steps.words, RECORDS)
    _collect(pool_steps.words, RECORDS)
    for thread in threading.enumerate():
        if thread.name == "storybench-prefetch":
            thread.join(10)
    assert ran == ["storybench-prefetch"]


def test_a_job_with_figures_prefetches_their_import_only_when_it_has_a_pool(tmp_path, monkeypatch):
    from apache_beam.options.pipeline_options import PipelineOptions

    from annotators.core.figures import load_drawing
    from pipelines.engine.report import JobReport

    loads: list = []
    monkeypatch.setattr(pool.Pool, "prefetch", lambda self, load: loads.append(load))
    figures = [object()]
    for workers in (0, 2):
        pool.configure(workers)
        try:
            out = str(tmp_path / f"out{workers}")
            report = JobReport(out, "t", config={}, seed=None, inputs=[], options=PipelineOptions([]), figures=figures)
            report.finish(beam.Pipeline(runner=FnApiRunner()))
        finally:
            pool.configure(0)
    assert loads == [load_drawing]
