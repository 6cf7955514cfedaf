"""Signals for the crawl process: SIGTERM/SIGINT stop the crawl cleanly, SIGALRM bounds a request.

The crawl is one thread, so a signal handler raising in the main thread is how it leaves a
blocking socket read at once (PEP 475: the read is interrupted and the exception raised):
- `stop_on_signals()`: SIGTERM, SIGINT and SIGHUP (unless ignored, as under `nohup`) raise
  `Stopped` (a KeyboardInterrupt carrying the signal), so the crawl's `finally` writes the
  cache and the report, whichever signal came.
- `shielded()`: while a file is written, a signal only asks to stop; `Stopped` is raised when
  the write is done, so a part file or the report is never cut in half by a second Ctrl-C.
- `deadline(seconds)`: a whole request (headers and body) must end within `seconds`, else
  `DeadlineExceeded`; `requests`' own timeout bounds each socket read only, which a server
  sending one byte a second never trips.
Off the main thread (signal handlers cannot be set there) these do nothing.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)  # kill, Ctrl-C, the terminal closed


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGINT asked the crawl to stop; `signum` says which."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


class DeadlineExceeded(BaseException):
    """A request ran past its deadline (a BaseException, so no library's `except Exception` eats it)."""


class _State:
    shield_depth = 0
    pending: int | None = None  # a signal that came while shielded


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _on_stop_signal(signum, frame) -> None:
    if _State.shield_depth:
        _State.pending = _State.pending or signum
        return
    raise Stopped(signum)


def quiet_start() -> None:
    """While `python -m pipelines.crawl` is still importing (Beam takes seconds), SIGINT or
    SIGTERM exits at once with one line instead of an import traceback: nothing is fetched yet.
    Only while the module is being located (`sys.argv[0] == "-m"`, as Python sets it then), so
    importing the package anywhere else changes no handler."""
    if sys.argv[:1] != ["-m"] or not _main_thread():
        return

    def leave(signum, frame):
        print(
            f"python -m pipelines.crawl: stopped by {signal.Signals(signum).name} while starting; nothing was fetched",
            file=sys.stderr,
        )
        raise SystemExit(128 + signum)

    for sig in _catchable():
        signal.signal(sig, leave)


def _catchable() -> list[int]:
    """The stop signals not ignored on purpose (`nohup` ignores SIGHUP, `cmd &` SIGINT)."""
    return [s for s in STOP_SIGNALS if signal.getsignal(s) is not signal.SIG_IGN]


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """Within the block, the stop signals raise `Stopped`; the old handlers come back after."""
    if not _main_thread():
        yield
        return
    previous = {s: signal.signal(s, _on_stop_signal) for s in _catchable()}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def shielded(*, raise_pending: bool = True) -> Iterator[None]:
    """Finish the block even if a stop signal comes; then raise `Stopped` for it (or, with
    `raise_pending=False`, as the crawl's last write, forget it: the crawl is over anyway)."""
    _State.shield_depth += 1
    try:
        yield
    finally:
        _State.shield_depth -= 1
    if not _State.shield_depth and _State.pending is not None:
        signum, _State.pending = _State.pending, None
        if raise_pending:
            raise Stopped(signum)


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise `DeadlineExceeded` in the block once `seconds` have passed (SIGALRM, main thread)."""
    if not _main_thread() or seconds <= 0:
        yield
        return
    armed = [True]

    def expire(signum, frame):
        if armed[0]:
            armed[0] = False
            raise DeadlineExceeded(f"over {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
