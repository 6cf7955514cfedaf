"""Progress while a job runs, and a closing summary of what it wrote.

Every Stage counts what its worker process has read, written and rejected; at most every
`INTERVAL` seconds one line per process goes to stderr, so a long local run is never silent
(on Dataflow the same lines land in the worker logs, and the Beam counters
`<stage>/written`, `<stage>/rejected/<reason>` show in the job's monitoring page). At the end,
`summary(stats, output)` gives one line per output with its rows and path.
"""
from __future__ import annotations

import sys
import threading
import time

INTERVAL = 10.0
_LOCK = threading.Lock()
_COUNTS: dict[str, list[int]] = {}  # stage -> [read, written, rejected], this process
_STATE = {"last": time.monotonic(), "start": time.monotonic()}


def count(stage: str, written: int, rejected: int) -> None:
    """Add one record's outcome; print a progress line when INTERVAL has passed."""
    with _LOCK:
        row = _COUNTS.setdefault(stage, [0, 0, 0])
        row[0] += 1
        row[1] += written
        row[2] += rejected
        now = time.monotonic()
        if now - _STATE["last"] < INTERVAL:
            return
        _STATE["last"] = now
        line = progress_line(_COUNTS, now - _STATE["start"])
    print(line, file=sys.stderr, flush=True)


def progress_line(counts: dict[str, list[int]], seconds: float) -> str:
    parts = [f"{stage} {r:,} read ({w:,} written, {j:,} rejected, {r / max(seconds, 1e-9):,.0f}/s)"
             for stage, (r, w, j) in counts.items()]
    return f"[storybench {seconds:,.0f} s] " + " | ".join(parts)


def summary(stats: dict, output: str) -> list[str]:
    """One line per table and export of a finished job: rows and where they are."""
    lines = [f"{stats.get('job')}: {sum(s['read'] for s in stats.get('stages', {}).values()):,} records read, "
             f"accounting {'balanced' if stats.get('balanced', True) else 'NOT balanced'}"]
    lines += [f"  {rows:>10,} rows  {output.rstrip('/')}/{name}" for name, rows in stats.get("tables", {}).items()]
    lines += [f"  {rows:>10,} records in export {name}" for name, rows in stats.get("exports", {}).items()]
    return lines
