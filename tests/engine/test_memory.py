"""A job's process returns freed memory to the system (pipelines.engine.memory): glibc's mmap
threshold is fixed, so large blocks freed between live ones are given back instead of kept
in the heap; blocks below it and the heap's top are reused instead of faulted in again each
time; the pool's workers start with the same settings. Each check runs in a fresh process,
as a job does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import ROOT


def _glibc() -> bool:
    try:
        return sys.platform.startswith("linux") and bool(os.confstr("CS_GNU_LIBC_VERSION"))
    except (ValueError, OSError):  # the name is unknown here
        return False


pytestmark = pytest.mark.skipif(not _glibc(), reason="glibc's malloc only")

# Large blocks freed between small ones that stay (as a job's pickled bundles and packed blocks
# are freed among the records it keeps): how much anonymous memory the process still holds.
FRAGMENTS = textwrap.dedent(
    """
    import json, sys
    from pipelines.engine.memory import return_freed_memory

    fixed = return_freed_memory() if sys.argv[1] == "fix" else False

    def anon():
        for line in open("/proc/self/status"):
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024

    freed = b"x" * (8 << 20)  # one large block freed: glibc raises its threshold past it
    del freed
    before = anon()
    big, small = [], []
    for _ in range(30):  # 150 MiB in 5 MiB blocks (written whole), each followed by a smaller one that stays
        big.append(b"x" * (5 << 20))
        small.append(b"x" * (64 << 10))
    del big
    print(json.dumps({"fixed": fixed, "retained": anon() - before}))
    """
)

# A block below the threshold made and freed again and again (as Beam's bz2 compressor of each
# pickled DoFn, 3.6 MB, or a pickled run): the page faults it costs.
REUSED = textwrap.dedent(
    """
    import json, resource, sys
    from pipelines.engine.memory import return_freed_memory

    fixed = return_freed_memory() if sys.argv[1] == "fix" else False
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(200):
        block = b"x" * 3_600_000  # written whole: every page of it is touched
        del block
    print(json.dumps({"fixed": fixed, "faults": resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before}))
    """
)

# What a job's `main` sets, and what a child process (a pool worker) sees.
EXPORTED = textwrap.dedent(
    """
    import json, os, subprocess, sys
    from pipelines.engine.usage import main

    NAMES = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")

    def run(argv):
        code = f"import json, os; print(json.dumps([os.environ.get(n) for n in {NAMES!r}]))"
        child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        print(json.dumps({"here": [os.environ.get(n) for n in NAMES], "child": json.loads(child.stdout)}))

    main(run, "demo")
    """
)


def _python(code: str, *args: str, env: dict | None = None) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", **(env or {})},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_freed_large_blocks_go_back_to_the_system():
    fixed = _python(FRAGMENTS, "fix")
    kept = _python(FRAGMENTS, "off")
    assert fixed["fixed"] is True and kept["fixed"] is False
    assert fixed["retained"] < 16 * 2**20, fixed
    assert kept["retained"] > 32 * 2**20, kept  # glibc's default keeps them (152 MiB here): the setting frees them


def test_blocks_below_the_threshold_are_reused_not_faulted_in_each_time():
    pages = 3_600_000 // 4096  # what one such block costs when it is mapped afresh
    fixed = _python(REUSED, "fix")
    # the previous setting (a fixed 128 KiB threshold): every block mapped, faulted, unmapped
    mapped = _python(REUSED, "off", env={"MALLOC_MMAP_THRESHOLD_": "131072"})
    assert fixed["fixed"] is True
    assert fixed["faults"] < 5 * pages, fixed  # the first block's pages, then reused
    assert mapped["faults"] > 150 * pages, mapped


def test_a_job_exports_the_thresholds_to_its_workers():
    want = ["4194304", "8388608"]
    assert _python(EXPORTED) == {"here": want, "child": want}


def test_a_threshold_the_user_set_is_left_alone():
    mine = {"MALLOC_MMAP_THRESHOLD_": "1048576"}
    assert _python(EXPORTED, env=mine) == {"here": ["1048576", None], "child": ["1048576", None]}
    assert _python(FRAGMENTS, "fix", env=mine)["fixed"] is False
