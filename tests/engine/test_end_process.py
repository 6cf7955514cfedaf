"""A job run from the command line ends with `pipelines.engine.usage.end_process`: a normal
exit (every atexit function runs, in its order, even one registered before storybench was
imported; buffered output is flushed; the exit status is kept; a working thread is joined)
with everything alive frozen out of the garbage collections the interpreter's teardown runs."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.conftest import ROOT

SCRIPT = textwrap.dedent(
    """
    import atexit, gc, sys, threading, time

    def note(text):
        open(sys.argv[1], "a").write(text + "\\n")

    atexit.register(lambda: note("registered first"))  # before storybench is imported, as a wrapper does
    from pipelines.engine.usage import main

    def run(argv):
        atexit.register(lambda: note(f"atexit ran, frozen: {gc.get_freeze_count() > 0}"))
        sys.stdout.write("buffered, no newline")  # still in the buffer at the end
        if sys.argv[3] == "thread":  # a non-daemon thread still working: joined, as normally
            threading.Thread(target=lambda: (time.sleep(0.3), note("thread done"))).start()
        return int(sys.argv[2])

    main(run, "demo", [] if sys.argv[3] == "returns" else None)  # with argv, main returns
    note("after main")
    """
)


def _run(tmp_path, code: int, mode: str = "-"):
    log = tmp_path / "log.txt"
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(log), str(code), mode],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    return proc, log.read_text().splitlines() if log.exists() else []


def test_a_finished_run_exits_with_every_atexit_function_and_collections_frozen(tmp_path):
    proc, log = _run(tmp_path, 0)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "buffered, no newline"
    assert log == ["atexit ran, frozen: True", "registered first"]  # nothing after main: it exited


def test_the_exit_status_of_the_run_is_kept(tmp_path):
    proc, log = _run(tmp_path, 3)
    assert proc.returncode == 3 and proc.stdout == "buffered, no newline"
    assert log == ["atexit ran, frozen: True", "registered first"]


def test_a_run_that_left_a_working_thread_exits_once_the_thread_is_done(tmp_path):
    proc, log = _run(tmp_path, 0, "thread")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "buffered, no newline"
    assert log == ["thread done", "atexit ran, frozen: True", "registered first"]


def test_called_with_argv_main_returns_and_freezes_nothing(tmp_path):
    proc, log = _run(tmp_path, 0, "returns")
    assert proc.returncode == 0, proc.stderr
    assert log == ["after main", "atexit ran, frozen: False", "registered first"]
