"""A local run's process pool: the pure steps of every Stage on every core, one Beam process.

Why not Beam's own `--direct_running_mode=multi_processing`: its controller holds every
stage's input and hands each worker process one bundle of about 1/N of it, so the run's
memory followed its input (the stories job at 80,000 stories: 2.1-2.4 GB on 2 cores against
0.7 GB in one process), and each worker is a whole Beam process (0.3 GB before any data).

Here the pipeline runs in this process on Beam's in-process runner, as with one worker, and
`Stage` (pipelines.engine.stage) sends its pure function's work to `N` worker processes
(pipelines.engine.pool_worker) in batches of about BATCH_BYTES of pickled records, at most
IN_FLIGHT_PER_WORKER batches per worker ahead, and yields the outcomes in the order the
records came. What the pool holds is bounded by the batches in flight, not the input, and a
worker holds only the text logic it runs. Grouping, joins and writing stay in this process.

A stage's function and setup go to the workers with cloudpickle (closures of annotators
included); one that does not pickle, or whose unpickling imports Beam (a lambda of a job's
wiring that holds its PTransform), runs here as before, and so do grouped stages. (A
closure's module-level values travel as copies; module functions travel by reference.) The
outcomes are the same objects in either place, so the outputs are the same bytes with any
number of workers.

`configure(n)` is set by `run_pipeline` for a local run (`--direct_num_workers`, default: a
process per core); `shutdown()` stops the workers when the run ends (their CPU then counts
in this process's children)."""

from __future__ import annotations

import atexit
import collections
import functools
import hashlib
import io
import itertools
import json
import os
import pickle
import select
import signal
import subprocess
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from typing import Any

import cloudpickle

from pipelines.engine.pool_worker import HEADER, outcome, read_message, run_setups, warm_and_clone

BATCH_BYTES = 1 << 20  # pickled record bytes per task
BATCH_ITEMS = 512  # records per task at most
IN_FLIGHT_PER_WORKER = 2  # tasks sent or queued per worker before the stage waits
IDLE_SECONDS = 5.0  # a worker without a task this long is stopped (started again when needed)
WORKER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pool_worker.py")


class PoolError(RuntimeError):
    """A worker process ended or answered out of protocol."""


class _Worker:
    """A worker process: started here (`python pool_worker.py`), or a clone (`proc`, a _Clone)."""

    def __init__(self, index: int, proc: _Clone | None = None, pass_fds: tuple[int, ...] = ()):
        self.index = index
        self.proc = proc or subprocess.Popen(
            [sys.executable, WORKER_SCRIPT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, "STORYBENCH_POOL_PATH": json.dumps([p or os.getcwd() for p in sys.path])},
            bufsize=0,
            pass_fds=pass_fds,
        )
        self.known: set[str] = set()  # function keys this worker has unpickled
        self.loaded = False  # it ran a setup (jieba's dictionaries...): it holds their memory
        self.task: Task | None = None
        self.idle_since = time.monotonic()

    def send(self, task: Task) -> None:
        blob = task.function if task.key not in self.known else None
        data = pickle.dumps((task.key, blob, task.elements), pickle.HIGHEST_PROTOCOL)
        try:
            _write_all(self.proc.stdin, HEADER.pack(len(data)) + data)
        except (BrokenPipeError, OSError) as exc:
            raise PoolError(f"pool worker {self.index} ended (exit code {self.proc.poll()})") from exc
        self.known.add(task.key)
        self.loaded = self.loaded or task.setup
        self.task = task

    def receive(self) -> str:
        data = read_message(self.proc.stdout)
        if data is None:
            raise PoolError(f"pool worker {self.index} ended (exit code {self.proc.wait()})")
        task, self.task = self.task, None
        task.reply = pickle.loads(data)
        self.idle_since = time.monotonic()
        if task.key == CLONED:  # a clone's first message: its process id
            self.proc.pid = task.reply[1][0]
        return task.reply[0]

    def stop(self) -> None:
        """End the worker: asked to when idle, killed when a task of a failed run is still
        in it (it may be blocked writing a reply nobody will read)."""
        self.ask_to_stop()
        self.proc.wait()
        self.proc.stdout.close()

    def ask_to_stop(self) -> None:
        if self.proc.stdin.closed:  # asked already
            return
        if self.task is not None:
            self.proc.kill()
        try:
            self.proc.stdin.write(HEADER.pack(0))
            self.proc.stdin.close()
        except OSError:
            pass


class _Clone:
    """What this process holds of a clone (pool_worker.warm_and_clone): the ends of its two
    pipes, and its process id once its first message said it. It is a child of the warmed
    worker, which is stopped once it has cloned: this process is then the clones' reaper
    (`_can_clone`), so `wait` collects a clone's exit as `Popen.wait` does a worker's, and
    its CPU time counts in this process's children as any worker's."""

    def __init__(self, task_end: int, reply_end: int):
        self.stdin = os.fdopen(task_end, "wb", buffering=0)
        self.stdout = os.fdopen(reply_end, "rb", buffering=0)
        self.pid: int | None = None
        self.returncode: int | None = None

    def poll(self) -> int | None:
        return self.returncode

    def kill(self) -> None:
        if self.pid is not None and self.returncode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def wait(self) -> int | None:
        """Wait until it has ended (its reply pipe closes with it), and collect its exit."""
        if self.pid is None:  # its first message (its process id) was never read
            try:
                first = read_message(self.stdout)
                self.pid = None if first is None else pickle.loads(first)[1][0]
            except Exception:
                pass
        self.stdout.readall()
        if self.pid is not None and self.returncode is None:
            try:
                _, status = os.waitpid(self.pid, 0)
                self.returncode = os.waitstatus_to_exitcode(status)
            except ChildProcessError:  # still the warmed worker's child: it collects it
                pass
        return self.returncode


CLONED = "cloned"  # the key of a clone's first "task": its process id, sent when it starts
CLONE_ENV = "STORYBENCH_POOL_CLONE"
PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


def _can_clone() -> bool:
    """Whether this process can warm one worker and clone it (a fork, Linux only): it must be
    its descendants' reaper (PR_SET_CHILD_SUBREAPER), so that the clones, whose parent
    (the warmed worker) ends once they are made, are collected here and their CPU time is
    counted with this process's children, as a worker's is. Set once; False elsewhere or
    when STORYBENCH_POOL_CLONE=0, and the pool then starts every worker and warms each."""
    if "reaper" not in _STATE:
        ok = False
        if sys.platform.startswith("linux") and hasattr(os, "fork") and os.environ.get(CLONE_ENV, "1") != "0":
            try:
                import ctypes

                libc = ctypes.CDLL(None, use_errno=True)
                ok = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
            except (OSError, AttributeError):
                ok = False
        _STATE["reaper"] = ok
    return _STATE["reaper"]


def _write_all(stream, data: bytes) -> None:
    """Write every byte: a raw pipe's write may take only part (a signal, a full pipe)."""
    view = memoryview(data)
    while view:
        view = view[stream.write(view) :]


class Task:
    """A batch of one stage's records; `setup`: the stage has a setup (it loads something a
    worker keeps); `fresh`: it needs nothing earlier stages loaded (`Batches`)."""

    __slots__ = ("key", "function", "elements", "reply", "setup", "fresh")

    def __init__(self, key: str, function: bytes, elements: list[bytes], setup: bool = False, fresh: bool = False):
        self.key, self.function, self.elements = key, function, elements
        self.setup, self.fresh = setup, fresh
        self.reply: tuple | None = None


class Pool:
    """N worker processes, started when a task comes and stopped after IDLE_SECONDS without
    one (the grouping and writing stages between pooled ones run here alone, and the
    workers' memory should not add to theirs); tasks run first come, first served."""

    def __init__(self, n: int):
        self.n = n
        self._workers: list[_Worker | None] = [None] * n
        self._queue: collections.deque[Task] = collections.deque()
        self._lock = threading.RLock()
        self._reaper: threading.Thread | None = None
        self._closed = threading.Event()
        self._warming: _Worker | None = None  # the worker that warms and clones (Pool.warm)
        self._prefetch: list[Callable[[], None]] = []  # Pool.prefetch: run once this process waits

    def _start(self) -> None:
        for i, worker in enumerate(self._workers):
            if worker is None:
                self._workers[i] = _Worker(i)
        if self._reaper is None:
            self._reaper = threading.Thread(target=self._reap, name="storybench-pool-reaper", daemon=True)
            self._reaper.start()

    def _reap(self) -> None:
        while not self._closed.wait(IDLE_SECONDS / 4):
            with self._lock:
                if self._warming is not None and select.select([self._warming.proc.stdout], [], [], 0)[0]:
                    self._cloned()  # no task came since the warm-up: it is stopped all the same
                if self._queue:
                    continue
                now = time.monotonic()
                for i, worker in enumerate(self._workers):
                    if worker is not None and worker.task is None and now - worker.idle_since > IDLE_SECONDS:
                        worker.stop()
                        self._workers[i] = None

    def submit(
        self, key: str, function: bytes, elements: list[bytes], setup: bool = False, fresh: bool = False
    ) -> Task:
        with self._lock:
            self._start()
            task = Task(key, function, elements, setup, fresh)
            self._queue.append(task)
            self._pump(block=False)
            return task

    def prefetch(self, load: Callable[[], None]) -> None:
        """Run `load` (imports this process needs at the job's end, such as the figures'
        matplotlib) on a thread of this process the first time it waits for the workers: the
        core it would leave idle does it, instead of the job's serial tail."""
        with self._lock:
            self._prefetch.append(load)

    def _start_prefetch(self) -> None:
        loads, self._prefetch = self._prefetch, []
        for load in loads:
            threading.Thread(target=_quietly, args=(load,), name="storybench-prefetch", daemon=True).start()

    def wait(self, task: Task, block: bool = True) -> bool:
        """Whether `task` has its reply (with `block`, wait until it has)."""
        with self._lock:
            if block and task.reply is None and self._prefetch:
                self._start_prefetch()
            while task.reply is None:
                self._pump(block=block)
                if not block:
                    break
            return task.reply is not None

    def _pump(self, block: bool) -> None:
        """Read the replies that are ready (with `block`, wait for at least one if any task
        is running) and give queued tasks to idle workers."""
        if self._queue:
            self._start()  # a worker stopped (idle, or refused a function) is started again
        for worker in self._workers:
            if worker is not None and worker.task is None and self._queue:
                self._send(worker, self._queue.popleft())
        busy = {w.proc.stdout.fileno(): w for w in self._workers if w is not None and w.task is not None}
        if self._warming is not None:  # its reply comes once the clones are made: it is then stopped
            busy[self._warming.proc.stdout.fileno()] = self._warming
        if not busy:
            return
        ready, _, _ = select.select(list(busy), [], [], None if block else 0)
        for fd in ready:
            worker = busy[fd]
            if worker is self._warming:
                self._cloned()
                continue
            if worker.receive() == "here":  # it may hold Beam now: a new one is started if needed
                worker.stop()
                self._workers[worker.index] = None
            elif self._queue:
                self._send(worker, self._queue.popleft())

    def _send(self, worker: _Worker, task: Task) -> None:
        """Give `task` to an idle worker; a `fresh` task goes to a new worker in place of one
        that ran a setup, so the memory an earlier stage loaded there (jieba's dictionaries)
        does not add to a later stage that needs none of it."""
        if task.fresh and worker.loaded:
            worker.stop()
            worker = self._workers[worker.index] = _Worker(worker.index)
        worker.send(task)

    def _clone_warm(self, setups: list[Callable], key: str) -> None:
        """Start one worker that runs `setups` and then forks every worker of the pool
        (pool_worker.warm_and_clone), each on a pair of pipes made here: the setups run
        once, not once per worker, and each clone holds what they loaded in pages it shares
        with the others until it writes them. Until a clone's first message it counts as a
        worker busy warming."""
        theirs, ours = [], []
        for _ in range(self.n):
            task_r, task_w = os.pipe()
            reply_r, reply_w = os.pipe()
            theirs.append((task_r, reply_w))
            ours.append((task_w, reply_r))
        blob = cloudpickle.dumps((None, functools.partial(warm_and_clone, setups, theirs)), pickle.HIGHEST_PROTOCOL)
        try:
            warming = _Worker(-1, pass_fds=tuple(fd for pair in theirs for fd in pair))
            warming.send(Task(f"{key}/clone", blob, [], setup=True))
        finally:
            for pair in theirs:  # the clones' ends: only theirs now (a pipe ends when they exit)
                for fd in pair:
                    os.close(fd)
        self._warming = warming
        for i, (task_w, reply_r) in enumerate(ours):
            worker = self._workers[i] = _Worker(i, proc=_Clone(task_w, reply_r))
            worker.known.add(key)
            worker.loaded = True
            worker.task = Task(CLONED, b"", [], setup=True)

    def _cloned(self) -> None:
        """The warmed worker has replied: its clones are made (or, when a setup failed, none
        is: each is then replaced by a worker started here). It is stopped; the clones are
        then this process's children."""
        warming, self._warming = self._warming, None
        status = warming.receive()
        warming.stop()
        if status != "ok":
            for i, worker in enumerate(self._workers):
                if worker is not None and worker.task is not None and worker.task.key == CLONED:
                    worker.task = None
                    worker.stop()
                    self._workers[i] = None
            if self._queue:
                self._start()

    def warm(self, setups: list[Callable]) -> None:
        """Start every worker and have each run `setups` in order now, ahead of its first
        task: a setup that loads jieba's dictionary then runs while the job's process is
        still building and starting the pipeline, instead of when the stage's first records
        reach the worker. Setups that do not pickle are left to the stage's first task, as
        before. Nothing waits for it: the reply is read by `_pump` as any task's, and a
        worker still warming takes its first task once it is done; a worker that is busy
        (warming for an earlier call) is not sent another.

        Where it can (`_can_clone`), a pool with no worker yet warms one and clones it
        (`_clone_warm`): the setups run once instead of once per worker (about 2 CPU-s each
        for jieba), so the workers are ready sooner while the job's process holds the other
        core, and on N cores N-1 loads of the dictionary are saved. The clones' outputs are
        those of any worker: a step's function and its setup still arrive with its first task."""
        picklable = []
        for setup in setups:
            try:
                cloudpickle.dumps(setup, pickle.HIGHEST_PROTOCOL)
            except Exception:
                continue
            picklable.append(setup)
        if not picklable:
            return
        blob = cloudpickle.dumps((None, functools.partial(run_setups, picklable)), pickle.HIGHEST_PROTOCOL)
        key = f"warm/{hashlib.sha1(blob).hexdigest()}"
        with self._lock:
            if self.n > 1 and all(w is None for w in self._workers) and self._warming is None and _can_clone():
                self._clone_warm(picklable, key)
                return
            self._start()
            for worker in self._workers:
                if worker is not None and worker.task is None and key not in worker.known:
                    worker.send(Task(key, blob, [], setup=True))

    def close(self) -> None:
        self._closed.set()
        with self._lock:
            running = [w for w in [self._warming, *self._workers] if w is not None]
            self._warming = None
            for worker in running:  # all asked first: they end at the same time
                worker.ask_to_stop()
            for worker in running:
                worker.stop()
            self._workers = [None] * self.n


class Batches:
    """One bundle's records on their way through the pool, for a DoFn: `add(tag, element)`
    queues a record (False: it or the function does not pickle, so run it here), `ready()`
    gives `(tag, outcome)` of the records whose tasks are done, in the order they were
    added, and `finish()` all the rest. The tag stays in this process (an input id, a file
    location); the outcome is `pool_worker.outcome(fn, element)`: a list of outputs or a Drop.
    At most IN_FLIGHT_PER_WORKER tasks per worker are ahead before `ready` waits. A task holds
    at most `items` records; with `fresh`, the stage needs nothing an earlier stage's setup
    loaded on the workers, and a worker that ran one is replaced by a new one first."""

    _bundles = itertools.count()

    def __init__(
        self,
        pool: Pool,
        name: str,
        fn: Callable,
        setup: Callable | None = None,
        items: int = BATCH_ITEMS,
        fresh: bool = False,
    ):
        self._pool, self._name, self._items, self._fresh = pool, name, items, fresh
        self._fn, self._setup = fn, setup
        self._function: bytes | None = None
        self._key = f"{name}/{next(self._bundles)}"
        self._tags: list = []
        self._blobs: list[bytes] = []
        self._bytes = 0
        self._in_flight: collections.deque = collections.deque()
        self.here = False  # the workers sent this function back: it runs in this process

    def add(self, tag, element=None, *, blob: bytes | None = None) -> bool:
        if self.here:
            return False
        if self._function is None and _wiring(self._fn):
            self.here = True
            return False
        try:
            if self._function is None:
                self._function = cloudpickle.dumps((self._fn, self._setup), pickle.HIGHEST_PROTOCOL)
            if blob is None:
                blob = pickle.dumps(element, pickle.HIGHEST_PROTOCOL)
        except Exception:  # a lambda, or an object pickle cannot carry
            return False
        self._tags.append(tag)
        self._blobs.append(blob)
        self._bytes += len(blob)
        if self._bytes >= BATCH_BYTES or len(self._blobs) >= self._items:
            self.send()
        return True

    def send(self) -> None:
        if self._blobs:
            task = self._pool.submit(self._key, self._function, self._blobs, self._setup is not None, self._fresh)
            self._in_flight.append((self._tags, task))
            self._tags, self._blobs, self._bytes = [], [], 0

    def ready(self, block: bool | None = None) -> Iterator[tuple[Any, Any]]:
        """Outcomes of the done tasks, oldest first; with `block` (default: when too many
        tasks are ahead), wait for the oldest."""
        if block is None:
            block = len(self._in_flight) > IN_FLIGHT_PER_WORKER * self._pool.n
        while self._in_flight:
            tags, task = self._in_flight[0]
            if not self._pool.wait(task, block=block):
                return
            block = False
            self._in_flight.popleft()
            status, results = task.reply
            if status == "here":
                self.here = True
                results = [outcome(self._fn, pickle.loads(blob)) for blob in task.elements]
            yield from zip(tags, results)

    def finish(self) -> Iterator[tuple[Any, Any]]:
        self.send()
        while self._in_flight:
            yield from self.ready(block=True)


def _quietly(load: Callable[[], None]) -> None:
    """A prefetch: what fails here fails again, and is reported, where it is needed."""
    try:
        load()
    except Exception:
        pass


# modules of `pipelines` that never import Beam, whose functions a worker may run
BEAM_FREE = (
    "pipelines.engine.pool_worker",
    "pipelines.engine.merge_runs",
    "pipelines.engine.export_files",
    "pipelines.engine.textlines",
    "pipelines.engine.parquet_files",
    "pipelines.engine.jsontext",
)


def _wiring_module(module: str | None) -> bool:
    return bool(module) and module not in BEAM_FREE and (module.startswith("pipelines.") or module == "__main__")


def holds_wiring(obj: Any) -> bool:
    """Whether `obj` (a task's element) does not pickle, or refers to a function or class of a
    job's wiring, which a worker could only unpickle by importing Beam (a partial's function,
    a writer's class, anything it holds)."""
    found: list[str] = []

    class _Check(pickle.Pickler):
        def reducer_override(self, o):
            named = isinstance(o, (type, types.FunctionType, types.BuiltinFunctionType))
            module = getattr(o, "__module__", None) if named else type(o).__module__
            if _wiring_module(module):
                found.append(module)
            return NotImplemented

    try:
        _Check(io.BytesIO(), pickle.HIGHEST_PROTOCOL).dump(obj)
    except Exception:  # a lambda, or an object pickle cannot carry
        return True
    return bool(found)


def _wiring(fn: Callable) -> bool:
    """Whether `fn` is, or a partial of it holds, a function defined in a job's wiring (a
    module of `pipelines` other than the Beam-free ones, BEAM_FREE), which a worker could
    only unpickle by importing Beam: such a step runs in the job's process."""
    if isinstance(fn, functools.partial):
        held = [fn.func, *fn.args, *fn.keywords.values()]
        return any(_wiring(f) for f in held if callable(f))
    return _wiring_module(getattr(fn, "__module__", None) or type(fn).__module__)


_STATE: dict[str, Any] = {"workers": 0, "pool": None}


def configure(n: int) -> None:
    """Run Stages on `n` worker processes from now on (0 or 1: in this process). A pool of
    `n` workers already there (warmed while the graph was built) is kept."""
    n = n if n > 1 else 0
    if n != _STATE["workers"]:
        shutdown()
    _STATE["workers"] = n


def workers() -> int:
    return _STATE["workers"]


def current() -> Pool | None:
    """The pool of this process's local run, or None (one process, or a remote runner's
    worker, where the runner parallelises)."""
    if _STATE["workers"] < 2:
        return None
    if _STATE["pool"] is None:
        _STATE["pool"] = Pool(_STATE["workers"])
    return _STATE["pool"]


def shutdown() -> None:
    pool, _STATE["pool"] = _STATE["pool"], None
    if pool is not None:
        pool.close()


def kill() -> None:
    """End every worker at once, waiting for none (a second Ctrl-C: the job's process exits
    now, and a worker, which ignores Ctrl-C, would otherwise finish its task first)."""
    pool = _STATE["pool"]
    if pool is not None:
        for worker in [pool._warming, *pool._workers]:
            if worker is not None:
                worker.proc.kill()


atexit.register(shutdown)
