"""A job run from the command line ends its process as soon as it finished
(pipelines.engine.usage.end_process): atexit functions run, buffered output is flushed, the
exit status is kept, and a run that left a working thread exits the normal way."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.conftest import ROOT

SCRIPT = textwrap.dedent(
    """
    import atexit, sys, threading, time
    from pipelines.engine.usage import main

    def run(argv):
        atexit.register(lambda: open(sys.argv[1], "a").write("atexit ran\\n"))
        sys.stdout.write("buffered, no newline")  # still in the buffer at the end
        if sys.argv[3] == "thread":  # a non-daemon thread still working: joined, as normally
            threading.Thread(target=lambda: (time.sleep(0.3), open(sys.argv[1], "a").write("thread done\\n"))).start()
        return int(sys.argv[2])

    main(run, "demo")
    open(sys.argv[1], "a").write("after main\\n")
    """
)


def _run(tmp_path, code: int, thread: bool):
    log = tmp_path / "log.txt"
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(log), str(code), "thread" if thread else "-"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    return proc, log.read_text() if log.exists() else ""


def test_a_finished_run_ends_the_process_at_once_after_its_atexit_functions(tmp_path):
    proc, log = _run(tmp_path, 0, thread=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "buffered, no newline"
    assert log == "atexit ran\n"  # and nothing after main: the process ended in it


def test_the_exit_status_of_the_run_is_kept(tmp_path):
    proc, log = _run(tmp_path, 3, thread=False)
    assert proc.returncode == 3 and proc.stdout == "buffered, no newline" and log == "atexit ran\n"


def test_a_run_that_left_a_working_thread_exits_the_normal_way(tmp_path):
    proc, log = _run(tmp_path, 0, thread=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "buffered, no newline"
    assert log.splitlines() == ["thread done", "atexit ran"]  # the thread was joined, then atexit


def test_called_with_argv_main_returns_and_keeps_the_interpreter(tmp_path):
    from pipelines.engine.usage import main

    assert main(lambda argv: None, "demo", []) is None
