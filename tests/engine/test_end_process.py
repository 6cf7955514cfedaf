"""A job run from the command line ends its process as soon as it finished
(pipelines.engine.usage.end_process): atexit functions run, buffered output is flushed, the
exit status is kept, a run that left a working thread ends once the thread is done, and the
interpreter's teardown (which a module-level object's `__del__` shows) never runs."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.conftest import ROOT

SCRIPT = textwrap.dedent(
    """
    import atexit, sys, threading, time
    from pipelines.engine.usage import main

    class Teardown:  # deleted when the interpreter unloads this module
        def __init__(self, path):
            self.path, self.open = path, open  # what __del__ needs, kept while modules unload

        def __del__(self):
            self.open(self.path, "a").write("teardown\\n")

    KEPT = Teardown(sys.argv[1])

    def run(argv):
        atexit.register(lambda: open(sys.argv[1], "a").write("atexit ran\\n"))
        sys.stdout.write("buffered, no newline")  # still in the buffer at the end
        if sys.argv[3] == "thread":  # a non-daemon thread still working: joined, as normally
            threading.Thread(target=lambda: (time.sleep(0.3), open(sys.argv[1], "a").write("thread done\\n"))).start()
        return int(sys.argv[2])

    main(run, "demo", [] if sys.argv[3] == "returns" else None)  # with argv, main returns
    open(sys.argv[1], "a").write("after main\\n")
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
    return proc, log.read_text() if log.exists() else ""


def test_a_finished_run_ends_the_process_at_once_after_its_atexit_functions(tmp_path):
    proc, log = _run(tmp_path, 0)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "buffered, no newline"
    assert log == "atexit ran\n"  # no teardown, and nothing after main: the process ended in it


def test_the_teardown_the_fast_end_skips_is_seen_in_a_normal_exit(tmp_path):
    proc, log = _run(tmp_path, 0, "returns")  # main called with argv returns; the script ends normally
    assert proc.returncode == 0, proc.stderr
    assert log.splitlines() == ["after main", "atexit ran", "teardown"]


def test_the_exit_status_of_the_run_is_kept(tmp_path):
    proc, log = _run(tmp_path, 3)
    assert proc.returncode == 3 and proc.stdout == "buffered, no newline" and log == "atexit ran\n"


def test_a_run_that_left_a_working_thread_ends_once_the_thread_is_done(tmp_path):
    proc, log = _run(tmp_path, 0, "thread")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "buffered, no newline"
    assert log.splitlines() == ["thread done", "atexit ran"]  # the thread was joined, then atexit, no teardown


def test_called_with_argv_main_returns_and_keeps_the_interpreter(tmp_path):
    from pipelines.engine.usage import main

    assert main(lambda argv: None, "demo", []) is None
