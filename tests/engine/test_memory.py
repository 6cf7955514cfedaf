"""A job's process returns freed memory to the system (pipelines.engine.memory): glibc's mmap
threshold is fixed, so large blocks freed between live ones are given back instead of kept
in the heap, and the pool's workers start with the same setting. Each check runs in a fresh
process, as a job does."""

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

    freed = bytes(256 * 1024)  # one large block freed: glibc raises its threshold past it
    del freed
    before = anon()
    big, small = [], []
    for _ in range(600):  # 150 MiB in 256 KiB blocks, each followed by a small one that stays
        big.append(bytes(256 * 1024))
        small.append(bytes(2048))
    del big
    print(json.dumps({"fixed": fixed, "retained": anon() - before}))
    """
)

# What a job's `main` sets, and what a child process (a pool worker) sees.
EXPORTED = textwrap.dedent(
    """
    import json, os, subprocess, sys
    from pipelines.engine.usage import main

    def run(argv):
        child = subprocess.run([sys.executable, "-c", "import os; print(os.environ.get('MALLOC_MMAP_THRESHOLD_'))"],
                               capture_output=True, text=True, check=True)
        print(json.dumps({"here": os.environ.get("MALLOC_MMAP_THRESHOLD_"), "child": child.stdout.strip()}))

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
    assert kept["retained"] > 32 * 2**20, kept  # glibc's default keeps them (83 MiB here): the setting frees them


def test_a_job_exports_the_threshold_to_its_workers():
    assert _python(EXPORTED) == {"here": "131072", "child": "131072"}


def test_a_threshold_the_user_set_is_left_alone():
    assert _python(EXPORTED, env={"MALLOC_MMAP_THRESHOLD_": "4194304"}) == {"here": "4194304", "child": "4194304"}
    assert _python(FRAGMENTS, "fix", env={"MALLOC_MMAP_THRESHOLD_": "4194304"})["fixed"] is False
