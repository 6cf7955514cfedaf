"""Progress while a job runs, and a closing summary of what it wrote.

Every Stage counts what its worker process has read, written and rejected; at most every
`INTERVAL` seconds one line per process goes to stderr, so a long local run is never silent
(on Dataflow the same lines land in the worker logs, and the Beam counters
`<stage>/written`, `<stage>/rejected/<reason>` show in the job's monitoring page).

Where the total is known, the line opens with a progress bar: local input files are listed
while the graph is built (`expect_input`, their sizes summed per pipeline), the readers
report the bytes they have read (`advance`), and `start` (called by `run_pipeline`) arms the
bar with that pipeline's total, so the bar shows the share of input bytes read, the rate and
an ETA. An input read twice (LOT reads its stories again after deduplicating) counts twice.
This holds on the local in-process runner, where the reads happen in the launching process;
worker processes of other runners print the counts without a bar.

A record that takes long (one huge book) finishes nothing for minutes, and counts alone
would print nothing then: every Stage (and PooledFlatMap) notes the records it has begun and
not yet finished (`working`; a time stamp and a deque entry per record, nothing per
character), and once INTERVAL has passed without a line, a heartbeat thread of the process
prints the line anyway, opening with the step that has held a record longest: `still
working: examples on 'long_road.txt' for 3 min 5 s` (with the record's size when it is a
file's bytes; a pool task holds several records, and then the line counts them and names
the largest). Any line shows it once that record is older than INTERVAL. How far the step
has got inside the record (which chapter of the book) is not shown: the pure functions run
on the pool's workers, which reply once per task.

`STORYBENCH_PROGRESS_SECONDS` sets INTERVAL (default 10).

At the end, `summary(stats, output)` gives one line per output with its rows and path.
"""

from __future__ import annotations

import collections
import os
import sys
import threading
import time
from collections.abc import Sequence

from annotators.core.jsonl import pretty_warning

INTERVAL_ENV = "STORYBENCH_PROGRESS_SECONDS"
DEFAULT_INTERVAL = 10.0
BAR_WIDTH = 20
_LOCK = threading.Lock()
_COUNTS: dict[str, list[int]] = {}  # stage -> [read, written, rejected], this process
_STATE = {"last": time.monotonic(), "start": time.monotonic()}
_EXPECTED: dict[int, int] = {}  # id(pipeline) -> input bytes, registered while its graph is built
_INPUT = {"read": 0, "total": 0, "first": None, "last": None}  # bytes read and expected in this run
_WORKING: set[Working] = set()  # the steps of this process with records in hand (Working)
_BEAT: dict = {"pid": None}  # the process whose heartbeat thread runs
BEAT_MIN_SECONDS, BEAT_MAX_SECONDS = 0.05, 1.0  # how often the heartbeat wakes, at most and at least


def interval_from_env(default: float = DEFAULT_INTERVAL) -> float:
    """Seconds between progress lines: STORYBENCH_PROGRESS_SECONDS when it is a number >= 0."""
    try:
        value = float(os.environ.get(INTERVAL_ENV, "").strip())
    except ValueError:
        return default
    return value if value >= 0 else default


INTERVAL = interval_from_env()


class Working:
    """The records one step (a Stage's DoFn, one bundle at a time) has begun and not yet
    finished, oldest first: `begin` as a record comes in, `end` as its outcome goes out
    (outcomes leave in the order the records came). Registered by `working`."""

    def __init__(self, stage: str):
        self.stage = stage
        self.pending: collections.deque = collections.deque()  # (tag, size, began)

    def begin(self, tag, size: int | None = None) -> None:
        self.pending.append((tag, size, time.monotonic()))

    def end(self) -> None:
        if self.pending:
            self.pending.popleft()


def working(stage: str) -> Working:
    """A step's Working for one bundle (`done` at its end), and this process's heartbeat."""
    entry = Working(stage)
    with _LOCK:
        _WORKING.add(entry)
    _start_heartbeat()
    return entry


def done(entry: Working) -> None:
    with _LOCK:
        _WORKING.discard(entry)


def stop() -> None:
    """A run ended (finished or not): no record is in hand any more."""
    with _LOCK:
        _WORKING.clear()


def record_size(element) -> int | None:
    """The size of a file's or a line's bytes when `element` is (input_id, bytes | str)."""
    if type(element) is tuple and len(element) == 2 and isinstance(element[1], (bytes, str)):
        return len(element[1])
    return None


def _longest(now: float) -> tuple[str, tuple] | None:
    """(step, its records in hand) of the step whose oldest record in hand is the oldest
    (caller holds _LOCK); None when no record is in hand."""
    found = None
    for entry in _WORKING:
        try:
            pending = tuple(entry.pending)  # one C call: the step's thread cannot change it meanwhile
        except RuntimeError:
            continue
        if pending and (found is None or pending[0][2] < found[1][0][2]):
            found = (entry.stage, pending)
    return found


def duration(seconds: float) -> str:
    """`45 s`, `3 min 5 s`, `2 h 7 min`."""
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


def _record(tag, size: int | None) -> str:
    if isinstance(tag, str):
        what = repr(tag if len(tag) <= 80 else tag[:77] + "...")
    elif isinstance(tag, list) and tag and isinstance(tag[0], str):
        what = f"the block of {tag[0]!r}"
    else:
        what = "a record"
    if isinstance(size, int):
        what += f" ({size / 1e6:,.1f} MB)" if size >= 100_000 else f" ({size:,} bytes)"
    return what


def still_working(stage: str, pending: Sequence[tuple], seconds: float) -> str:
    """`still working: examples on 'long_road.txt' (60.0 MB) for 3 min 5 s`, or with several
    records in hand (a pool task holds several), `... on 3 records for 3 min 5 s, the
    largest 'long_road.txt' (60.0 MB)` (the oldest, when their sizes are not known).
    `pending`: (tag, size, began) of each, oldest first."""
    if len(pending) == 1:
        return f"still working: {stage} on {_record(*pending[0][:2])} for {duration(seconds)}"
    sized = [p for p in pending if isinstance(p[1], int)]
    named = max(sized, key=lambda p: p[1]) if sized else pending[0]
    which = "largest" if sized else "oldest"
    return (
        f"still working: {stage} on {len(pending):,} records for {duration(seconds)}, the {which} {_record(*named[:2])}"
    )


def _start_heartbeat() -> None:
    """The heartbeat thread of this process, started once (again in a forked child)."""
    with _LOCK:
        if _BEAT["pid"] == os.getpid():
            return
        _BEAT["pid"] = os.getpid()
    threading.Thread(target=_heartbeat, name="storybench-progress", daemon=True).start()


def _heartbeat() -> None:
    """Once INTERVAL has passed without a progress line while a record has been in hand for
    as long, print one."""
    while True:
        with _LOCK:
            wait = INTERVAL - (time.monotonic() - _STATE["last"])
        time.sleep(min(max(wait, BEAT_MIN_SECONDS), BEAT_MAX_SECONDS))
        with _LOCK:
            now = time.monotonic()
            line = _line(now, heartbeat=True) if now - _STATE["last"] >= INTERVAL else None
            if line:
                _STATE["last"] = now
        if line:
            print(line, file=sys.stderr, flush=True)


def local_size(paths) -> int:
    """Total size of the local files among `paths` (remote ones count 0: never listed here)."""
    total = 0
    for path in paths:
        if "://" not in path:
            try:
                total += os.path.getsize(path)
            except OSError:
                pass
    return total


def expect_input(pipeline, nbytes: int) -> None:
    """While a graph is built: `pipeline` will read `nbytes` more input bytes."""
    with _LOCK:
        _EXPECTED[id(pipeline)] = _EXPECTED.get(id(pipeline), 0) + int(nbytes)


def expected_input(pipeline) -> int:
    """The local input bytes `pipeline` will read, as registered while its graph was built."""
    with _LOCK:
        return _EXPECTED.get(id(pipeline), 0)


def start(pipeline) -> None:
    """Just before `pipeline` runs: counts from zero, the bar's total is its expected input."""
    with _LOCK:
        now = time.monotonic()
        _COUNTS.clear()
        _WORKING.clear()
        _STATE.update(last=now, start=now)
        _INPUT.update(read=0, total=_EXPECTED.pop(id(pipeline), 0), first=None, last=None)


def advance(nbytes: int) -> None:
    """A reader has read `nbytes` more input bytes."""
    with _LOCK:
        now = time.monotonic()
        if _INPUT["first"] is None:
            _INPUT["first"] = now
        _INPUT["read"] += nbytes
        _INPUT["last"] = now
        line = _due(now)
    if line:
        print(line, file=sys.stderr, flush=True)


def count(stage: str, written: int, rejected: int) -> None:
    """Add the outcomes of `written + rejected` records (one, or a block's); print a progress
    line when INTERVAL has passed."""
    with _LOCK:
        read, done, dropped = _COUNTS.get(stage, (0, 0, 0))
        _COUNTS[stage] = [read + written + rejected, done + written, dropped + rejected]
        line = _due(time.monotonic())
    if line:
        print(line, file=sys.stderr, flush=True)


def _due(now: float) -> str | None:
    """The progress line if INTERVAL has passed since the last one (caller holds _LOCK)."""
    if now - _STATE["last"] < INTERVAL:
        return None
    _STATE["last"] = now
    return _line(now)


def _line(now: float, heartbeat: bool = False) -> str | None:
    """The progress line now (caller holds _LOCK): the record held longest when it is older
    than INTERVAL, the input bar, the counts. For the heartbeat, None without such a record."""
    longest = _longest(now)
    still = None
    if longest is not None and now - longest[1][0][2] >= INTERVAL:
        still = still_working(longest[0], longest[1], now - longest[1][0][2])
    elif heartbeat:
        return None
    return progress_line(
        _COUNTS,
        now - _STATE["start"],
        (_INPUT["read"], _INPUT["total"], _reading_seconds(now)),
        still,
    )


def _reading_seconds(now: float) -> float:
    """How long the input has been read: until now, or until its last byte once it is all
    read (the rate then stays the reading's, not falling while the rest of the job works)."""
    first, last = _INPUT["first"], _INPUT["last"]
    if first is None:
        return 0.0
    return (last if _INPUT["read"] >= _INPUT["total"] else now) - first


def input_bar(read: int, total: int, seconds: float) -> str:
    """`input 45% [#########...........] 20.1/44.6 MB, 1.7 MB/s, ETA 14 s`."""
    share = min(1.0, read / total) if total else 0.0
    filled = int(share * BAR_WIDTH)
    rate = read / seconds if seconds > 0 else 0.0
    eta = f"ETA {(total - read) / rate:,.0f} s" if rate and read < total else ("done" if read >= total else "ETA ?")
    return (
        f"input {share:.0%} [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] "
        f"{min(read, total) / 1e6:,.1f}/{total / 1e6:,.1f} MB, {rate / 1e6:,.1f} MB/s, {eta}"
    )


def progress_line(
    counts: dict[str, list[int]], seconds: float, inputs: tuple | None = None, still: str | None = None
) -> str:
    """One progress line: `still` (a record worked on for long), the input bar when its
    total is known, then each stage's counts. `inputs` is (bytes read, bytes expected,
    seconds since the first byte)."""
    parts = [
        f"{stage} {r:,} read ({w:,} written, {j:,} rejected, {r / max(seconds, 1e-9):,.0f}/s)"
        for stage, (r, w, j) in counts.items()
    ]
    read, total, reading = inputs or (0, 0, 0.0)
    if total:
        parts.insert(0, input_bar(read, total, reading))
    if still:
        parts.insert(0, still)
    return f"[storybench {seconds:,.0f} s] " + " | ".join(parts)


def summary(stats: dict, output: str) -> list[str]:
    """One line per table and export of a finished job: rows and where they are; a warning line
    per input file whose lines looked like one pretty-printed JSON document."""
    # the stages' reads overlap (a story read by parse is read again by prepare), so their sum
    # is no count of anything: the line gives the stages and the rejects, which the rejects
    # table holds one row each of
    stages = stats.get("stages", {})
    rejected = sum(s.get("rejected", 0) for s in stages.values())
    lines = [
        f"{stats.get('job')}: {len(stages)} stage{'s' if len(stages) != 1 else ''}, "
        f"{rejected:,} record{'s' if rejected != 1 else ''} rejected, accounting "
        f"{'balanced (read = written + rejected in each)' if stats.get('balanced', True) else 'NOT balanced'}"
    ]
    lines += [f"  {rows:>10,} rows  {output.rstrip('/')}/{name}" for name, rows in stats.get("tables", {}).items()]
    lines += [f"  {rows:>10,} records in export {name}" for name, rows in stats.get("exports", {}).items()]
    pretty = stats.get("pretty_printed_json") or {}  # files whose lines look like one pretty-printed JSON document
    lines += [f"warning: {pretty_warning(file, n)}" for file, n in pretty.items()]
    return lines
