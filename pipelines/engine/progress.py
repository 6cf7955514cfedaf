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

At the end, `summary(stats, output)` gives one line per output with its rows and path.
"""

from __future__ import annotations

import os
import sys
import threading
import time

from annotators.core.jsonl import pretty_warning

INTERVAL = 10.0
BAR_WIDTH = 20
_LOCK = threading.Lock()
_COUNTS: dict[str, list[int]] = {}  # stage -> [read, written, rejected], this process
_STATE = {"last": time.monotonic(), "start": time.monotonic()}
_EXPECTED: dict[int, int] = {}  # id(pipeline) -> input bytes, registered while its graph is built
_INPUT = {"read": 0, "total": 0, "first": None}  # bytes read and expected in this run


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
        _STATE.update(last=now, start=now)
        _INPUT.update(read=0, total=_EXPECTED.pop(id(pipeline), 0), first=None)


def advance(nbytes: int) -> None:
    """A reader has read `nbytes` more input bytes."""
    with _LOCK:
        now = time.monotonic()
        if _INPUT["first"] is None:
            _INPUT["first"] = now
        _INPUT["read"] += nbytes
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
    first = _INPUT["first"]
    return progress_line(
        _COUNTS, now - _STATE["start"], (_INPUT["read"], _INPUT["total"], now - first if first is not None else 0.0)
    )


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


def progress_line(counts: dict[str, list[int]], seconds: float, inputs: tuple | None = None) -> str:
    """One progress line: the input bar when its total is known, then each stage's counts.
    `inputs` is (bytes read, bytes expected, seconds since the first byte)."""
    parts = [
        f"{stage} {r:,} read ({w:,} written, {j:,} rejected, {r / max(seconds, 1e-9):,.0f}/s)"
        for stage, (r, w, j) in counts.items()
    ]
    read, total, reading = inputs or (0, 0, 0.0)
    if total:
        parts.insert(0, input_bar(read, total, reading))
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
