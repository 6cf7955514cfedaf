"""Usage errors: one clear line and exit status 2, never a traceback (issue 28).

A missing input path, a glob that matches nothing, a folder with no input files, an output
folder that is not a storybench output, a `--lot` folder that does not exist: these are the
user's to fix, so a job says what and where in one line, argparse-style
(`python -m pipelines.lot: error: no input files match 'x.jsonl'`), and exits with 2.
`UsageError` is what such a check raises while the job starts (before anything runs); `main`
is every job's `__main__`. A bug in the project still raises its traceback, with a
non-zero exit.

Ctrl-C is the user's too: a job stopped by SIGINT says so in one line (`python -m
pipelines.lot: interrupted: nothing was written; the previous output in 'out' is
unchanged`), with no traceback, and exits with 130 (128 + SIGINT, the shell's convention).
Its run's staging folder is removed and its worker processes stopped (`run_pipeline`); a
second Ctrl-C while that happens ends the process at once.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence

USAGE_EXIT = 2
INTERRUPTED_EXIT = 128 + signal.SIGINT  # 130: what a shell reports for a command Ctrl-C stopped


class UsageError(Exception):
    """A problem with the command line or its inputs, reported as one line."""


class MissingInput(UsageError, FileNotFoundError):
    """An input path, glob or folder that holds no input file."""


class ForeignOutput(UsageError, FileExistsError):
    """An output folder that holds files but is not a storybench output."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a job's run before it committed anything (`run_pipeline`): `output`,
    the folder it would have replaced, is as it was (`existed`: it held files), and the
    run's staging folder is gone. With a `remote` runner (its name), only the waiting
    stopped: the job may still run there, and it will not commit."""

    def __init__(self, output: str, existed: bool, remote: str | None = None):
        super().__init__(output)
        self.output, self.existed, self.remote = output, existed, remote

    def line(self) -> str:
        if self.existed:
            line = f"interrupted: nothing was written; the previous output in {self.output!r} is unchanged"
        else:
            line = f"interrupted: nothing was written; {self.output!r} was not created"
        if self.remote:
            line += f" (the job may still be running on {self.remote}: cancel it there)"
        return line


_INTERRUPT = {"job": "", "seen": False, "deferred": 0}


def interrupted(exc: BaseException) -> bool:
    """Whether `exc` ends a run that Ctrl-C stopped: a KeyboardInterrupt, one in its chain
    (Beam re-raises a step's KeyboardInterrupt as `RuntimeError: KeyboardInterrupt [while
    running ...]`), or any exception after `main`'s handler saw SIGINT (a worker thread's
    error that the interrupt caused)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return _INTERRUPT["seen"]


def _on_interrupt(signum, frame) -> None:
    """SIGINT while a job runs from the command line: KeyboardInterrupt, as Python's own
    handler raises it, once Beam's logging and the threads' exception reports are silenced
    (each would print the interrupt again as an error). A second one, while the run is
    being cleaned up, ends the process at once."""
    if _INTERRUPT["deferred"]:
        return
    if _INTERRUPT["seen"]:
        pool = sys.modules.get("pipelines.engine.pool")
        if pool is not None:
            pool.kill()
        _say(
            f"python -m pipelines.{_INTERRUPT['job']}: interrupted again: stopped at once; nothing was written "
            "(the next run clears a staging folder left behind)"
        )
        os._exit(INTERRUPTED_EXIT)
    _INTERRUPT["seen"] = True
    logging.disable(logging.CRITICAL)
    threading.excepthook = lambda args: None
    sys.unraisablehook = lambda unraisable: None
    raise KeyboardInterrupt


@contextlib.contextmanager
def deferred_interrupt() -> Iterator[None]:
    """Within the block (a finished run's commit replacing its output's files), Ctrl-C from
    the command line is ignored: the block is never cut in half, and the job then ends as a
    finished run."""
    _INTERRUPT["deferred"] += 1
    try:
        yield
    finally:
        _INTERRUPT["deferred"] -= 1


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _job_name() -> str:
    """`lot` of `python -m pipelines.lot ...` (while the module is located, `sys.argv` is
    `["-m", ...]`: the module's name is only in `sys.orig_argv`)."""
    argv = getattr(sys, "orig_argv", [])
    name = argv[argv.index("-m") + 1] if "-m" in argv[:-1] else "pipelines"
    return name.removeprefix("pipelines.")


def quiet_start() -> None:
    """While `python -m pipelines.<job>` is still importing (Beam takes seconds), Ctrl-C
    ends it at once with one line instead of an import traceback: nothing ran yet. Only
    while the module is being located (`sys.argv[0] == "-m"`, as Python sets it then), so
    importing the package anywhere else changes no handler; `main` then takes over."""
    if sys.argv[:1] != ["-m"] or threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:  # ignored (`cmd &`): kept
        return

    def leave(signum, frame):
        _say(f"python -m pipelines.{_job_name()}: interrupted while starting: nothing was written")
        raise SystemExit(INTERRUPTED_EXIT)

    signal.signal(signal.SIGINT, leave)


def _handle_interrupts(job: str) -> None:
    """From `main` on the command line: SIGINT goes through `_on_interrupt` (unless it is
    ignored, as `nohup` or `cmd &` may have it)."""
    _INTERRUPT["job"] = job
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, _on_interrupt)


def require_folder(path: str | None, flag: str) -> None:
    """A local `flag` folder must exist (a remote one is checked when the job runs)."""
    if path and "://" not in path and not os.path.isdir(path):
        what = "a file, not a folder" if os.path.exists(path) else "does not exist"
        raise MissingInput(f"{flag} {path!r} {what}")


WARNINGS: list[str] = []  # every warning given in this process, in order (JobReport keeps its job's)
_JOB_WARNINGS = [0]  # where the job now running starts in WARNINGS


def start_job_warnings() -> int:
    """Marks where the job now starting begins in WARNINGS (`main` and JobReport); returns it."""
    _JOB_WARNINGS[0] = len(WARNINGS)
    return _JOB_WARNINGS[0]


def warn(message: str) -> None:
    """A warning line on stderr (an empty input, a layout with nothing in it); the job's
    stats.json (`warnings`) and card repeat it. A warning the job already gave is not given
    again: chapterbreak matches its books twice, and an empty book was two warnings."""
    if message in WARNINGS[_JOB_WARNINGS[0] :]:
        return
    WARNINGS.append(message)
    print(f"warning: {message}", file=sys.stderr, flush=True)


def main(run: Callable[[Sequence[str] | None], object], job: str, argv: Sequence[str] | None = None) -> None:
    """Run a job's `run(argv)`: a UsageError is one `error:` line on stderr and exit 2.

    From the command line (`argv` None), the process first returns freed memory to the
    system (`memory.return_freed_memory`), and a run that finished exits through `end_process`
    (its teardown without collections) with its exit status (0, or the int `run` returned); called with an
    `argv` (tests, a notebook), it returns as any function does. From the command line,
    Ctrl-C is one `interrupted:` line and exit 130 (`Interrupted`); called with an `argv`,
    it raises KeyboardInterrupt (`Interrupted` once the run began) as any function does."""
    if argv is None:
        from pipelines.engine.memory import return_freed_memory

        _handle_interrupts(job)
        return_freed_memory()
    start_job_warnings()
    try:
        result = run(argv)
    except UsageError as exc:
        print(f"python -m pipelines.{job}: error: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(USAGE_EXIT) from None
    except BaseException as exc:
        if argv is not None or isinstance(exc, SystemExit) or not interrupted(exc):
            raise
        line = exc.line() if isinstance(exc, Interrupted) else "interrupted: nothing was written"
        _say(f"python -m pipelines.{job}: {line}")
        end_process(INTERRUPTED_EXIT)
    code = result if isinstance(result, int) else 0
    if argv is None:
        end_process(code)
    if code:
        raise SystemExit(code)


def end_process(code: int) -> None:
    """Exit with `code`, without the interpreter's collections over every module it unloads.

    A job imports about 2,600 modules (Beam, pyarrow, pandas, matplotlib, Google Cloud's
    clients); a normal exit tears them down after every run, whatever its size, mostly in the
    garbage collections the teardown runs over everything still alive: 0.66-0.73 s after the
    last atexit function of a LOT build (10 or 20,000 stories). `gc.freeze()` moves everything
    alive into the permanent generation, which no collection visits: 0.11-0.13 s. The exit is
    otherwise a normal one (Python's public API only): threads other than daemon threads are
    joined, every function registered with `atexit` runs (the pool's shutdown, logging's
    flush, whatever a caller registered, in its order), the streams are flushed."""
    gc.freeze()
    raise SystemExit(code)


def warn_empty_files(paths) -> list[str]:
    """A warning line for each local input file that is empty (it holds no records, so the
    job reads nothing from it); returns them."""
    empty = [p for p in paths if "://" not in p and os.path.isfile(p) and os.path.getsize(p) == 0]
    for path in empty:
        warn(f"input file {path!r} is empty: it holds no records")
    return empty


def fail(job: str, message: str) -> None:
    """A usage error found among the flags: the one `error:` line and exit 2 at once."""
    print(f"python -m pipelines.{job}: error: {message}", file=sys.stderr, flush=True)
    raise SystemExit(USAGE_EXIT)
