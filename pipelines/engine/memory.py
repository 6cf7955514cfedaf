"""Freed memory goes back to the system, without paying for it block by block: fixed glibc
malloc thresholds (Linux).

glibc serves an allocation of 128 KiB or more with its own `mmap`, returned to the system
when it is freed, but it raises that threshold to the size of each such block freed (up to
32 MiB). A job frees many large blocks (pickled bundles, packed blocks of keys, file reads),
so after the first few glibc takes their successors from its heap, where freed space between
live objects is kept by the process. The job's process then held memory that followed its
input though its live objects did not: at 80,000 sentence-shuffled stories the stories job's
process held 480 MiB of anonymous memory at its peak, while in a run traced with tracemalloc
Python's own allocations never passed 165 MiB. A fixed threshold keeps large blocks out of
the heap: on that input the whole run's peak fell from 783-842 MiB (10 runs) to 698-722 (13
runs), and its growth from 20,000 to 80,000 stories from x1.27-1.36 to x1.15-1.20, with a
threshold of 128 KiB, 1 MiB or 4 MiB alike.

Which fixed threshold matters for CPU, though. At 128 KiB every block from 128 KiB up is a
fresh `mmap`, its pages faulted in as they are written and unmapped when it is freed, and
glibc's heap (with its trim threshold then fixed at 128 KiB too) gives back every stretch of
128 KiB freed at its top, to fault it in again on the next allocation. A job makes such
blocks all the time: Beam bz2-compresses each pickled DoFn and side input (each compressor
3.6 MB), pickled runs and bundles are a few MB each. A LOT build of 20,000 stories took
537,000 page faults with that setting, about 3 per page of its peak memory. So the threshold
is MMAP_THRESHOLD (4 MiB: blocks below it are reused from the heap) and the heap keeps up to
TRIM_THRESHOLD freed at its top (8 MiB) before giving it back; both are bounds, not shares of
the input. That build then takes 291,000 faults and about 3.5% less CPU, for 3-10 MiB more
peak memory (the README's "Freed memory goes back to the system" has the runs).

`return_freed_memory()` sets both in the job's process and exports glibc's own variables
(`MALLOC_MMAP_THRESHOLD_`, `MALLOC_TRIM_THRESHOLD_`), so the pool's workers start with them
(forked clones inherit them). If the user set either variable, neither is set here (glibc
reads what they set); elsewhere (macOS, musl) nothing happens.
"""

from __future__ import annotations

import ctypes
import os
import sys

M_TRIM_THRESHOLD = -1  # glibc's malloc.h
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 4 << 20  # blocks of at least this are mapped on their own and unmapped when freed
TRIM_THRESHOLD = 8 << 20  # freed memory at the heap's top kept for reuse before it is given back
SETTINGS = {  # glibc's environment variable -> (mallopt parameter, value)
    "MALLOC_MMAP_THRESHOLD_": (M_MMAP_THRESHOLD, MMAP_THRESHOLD),
    "MALLOC_TRIM_THRESHOLD_": (M_TRIM_THRESHOLD, TRIM_THRESHOLD),
}


def return_freed_memory() -> bool:
    """Fix glibc's mmap and trim thresholds in this process and its children; whether they were set."""
    if any(env in os.environ for env in SETTINGS) or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        if not hasattr(libc, "gnu_get_libc_version"):  # not glibc: no such tunable
            return False
        done = [env for env, (param, value) in SETTINGS.items() if libc.mallopt(param, value) == 1]
    except (OSError, AttributeError):
        return False
    for env in done:  # the workers start with what this process has
        os.environ[env] = str(SETTINGS[env][1])
    return len(done) == len(SETTINGS)
