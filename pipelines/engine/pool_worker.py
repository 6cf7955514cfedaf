"""The worker side of the local process pool (pipelines.engine.pool): no Beam here.

A pool worker is `python pool_worker.py`, started by the job's process with the job's
`sys.path`. It imports only what unpickling a stage's function brings in (annotators,
schemas, jieba...), not Beam: a worker costs the memory of the text logic it runs (about
0.1-0.15 GB with jieba's dictionaries) instead of another Beam process (0.3 GB before any
data).

Protocol, on stdin/stdout, one task at a time: a task is an 8-byte big-endian length and a
pickle of `(key, function_blob | None, [element pickles])`; the function blob is a pickle of
`(fn, setup)`, sent the first time this worker sees `key` (then `setup()` runs once). The
reply is a length and a pickle of `("ok", [outcome per element])`, or `("here", why)` when
the task should run in the job's process instead: its function did not unpickle here, or
unpickling it imported Beam (a function of a job's wiring, which would make this worker as
big as a Beam process). The job then runs that stage itself and stops this worker. An
outcome is `outcome(fn, element)`, exactly what the job's process would have computed. A
zero length (or end of input) ends the worker.

`outcome` and `tune_gc` are shared with `pipelines.engine.stage`, which runs the same
function in its own process when there is no pool."""

from __future__ import annotations

import gc
import os
import pickle
import signal
import struct
import sys
import traceback
from collections.abc import Callable
from typing import Any

from annotators.core.outcome import Drop  # a dataclass module: nothing else comes with it

HEADER = struct.Struct(">Q")
NICE_ENV = "STORYBENCH_POOL_NICE"  # how much lower a worker's CPU priority is than the job's process
DEFAULT_NICE = 10
GC_YOUNG_THRESHOLD = 50_000  # allocations between young-generation collections (CPython: 700)


def tune_gc() -> None:
    """Collect the young generation every GC_YOUNG_THRESHOLD allocations instead of every 700
    in a worker process: the steps make millions of short-lived tuples and lists (tokens,
    tags, rows) but few reference cycles, and each early collection walked them for nothing
    (about 3% of the LOT build). Older generations keep their settings; idempotent."""
    young, middle, old = gc.get_threshold()
    if young and young < GC_YOUNG_THRESHOLD:
        gc.set_threshold(GC_YOUNG_THRESHOLD, middle, old)


def lower_priority() -> None:
    """Lower this worker's CPU priority by STORYBENCH_POOL_NICE (default DEFAULT_NICE; 0 keeps
    it). The job's process feeds every worker (it reads the
    input, groups, writes) and, when the cores are all busy, competed with them for CPU: on
    2 cores the overlap audit's default run took 19.5 and 19.9 s with workers at the job's
    priority against 18.2 and 18.9 s at nice 10 (two sets of five runs each, means). A lower
    priority only matters when something else wants the core; it never changes an output."""
    text = os.environ.get(NICE_ENV, "").strip()
    increment = max(0, min(int(text) if text.lstrip("-").isdigit() else DEFAULT_NICE, 19))
    if increment:
        try:
            os.nice(increment)
        except (OSError, AttributeError):  # AttributeError: no os.nice on this platform
            pass


def outcome(fn: Callable, element: Any, **side: Any):
    """`fn(element)` as a list of outputs, or its Drop; an exception becomes an
    `internal_error` Drop (bad input must not crash the job; it is recorded instead). A
    reader's (input_id, Drop) record (a compressed file that broke: readers.broken_read) is
    that Drop, whatever `fn`."""
    if type(element) is tuple and len(element) == 2 and isinstance(element[1], Drop):
        return element[1]
    try:
        result = fn(element, **side)
        return result if isinstance(result, Drop) else list(result)
    except Exception:
        return internal_error()


def one_block(outputs: list) -> list:
    """A block Stage's `merge` that sends a block's outputs on as one tuple (none when it has
    none): the steps after it then take a block of outputs per element, as the stage took a
    block of records."""
    return [tuple(outputs)] if outputs else []


def each_record(fn: Callable, merge: Callable | None, block, *, block_ids: Callable | None = None, **side: Any) -> list:
    """A block of records (a Stage with `blocks=True`): `[outcomes, merged]`, where
    `outcomes` holds `outcome(fn, record)` per record in order, and with `merge` each
    outcome's outputs are replaced by their number and `merged` is `merge(all the block's
    outputs in order)` (a list), so the block's outputs leave as a few values; without it
    `merged` is None. A block read here (one with `records()`: a textlines.RangeBlock) also
    gives its records' input ids, `block_ids(record)` each, as a third item."""
    lazy = hasattr(block, "records")
    records = block.records() if lazy else block
    outcomes = [outcome(fn, record, **side) for record in records]
    if merge is None:
        result = [outcomes, None]
    else:
        outputs = [value for got in outcomes if not isinstance(got, Drop) for value in got]
        counts = [got if isinstance(got, Drop) else len(got) for got in outcomes]
        result = [counts, list(merge(outputs))]
    if lazy:
        result.append([block_ids(record) for record in records])
    return result


def each_group(fn: Callable, merge: Callable | None, group, **side: Any) -> list:
    """A group (a grouped Stage's element, after a GroupByKey): `[pairs, merged]`, where
    `pairs` holds `(input_id, outputs | Drop)` per record `fn(group)` accounts for, and with
    `merge` each outputs list is replaced by its length and `merged` is `merge(all the
    group's outputs in order)` (a list; empty when there are none); without it `merged` is
    None. An exception is the caller's (`outcome`): the group is then one reject."""
    pairs = [(i, r if isinstance(r, Drop) else list(r)) for i, r in fn(group, **side)]
    if merge is None:
        return [pairs, None]
    outputs = [value for _, got in pairs if not isinstance(got, Drop) for value in got]
    counts = [(i, got if isinstance(got, Drop) else len(got)) for i, got in pairs]
    return [counts, list(merge(outputs)) if outputs else []]


def read_file_bytes(path: str) -> bytes:
    """A whole file's bytes: opened directly when it is local (a pool worker imports no
    Beam), through Beam's FileSystems when it is remote."""
    if "://" not in path:
        with open(path, "rb") as f:
            return f.read()
    from apache_beam.io.filesystems import FileSystems

    with FileSystems.open(path, compression_type="uncompressed") as f:
        return f.read()


def run_setups(setups: list[Callable]) -> None:
    """Each of `setups` in order: the setup of a pool's warm-up task (Pool.warm), whose
    function is None and which carries no records."""
    for setup in setups:
        setup()


def warm_and_clone(setups: list[Callable], ends: list[tuple[int, int]]) -> None:
    """Each of `setups`, then one clone of this process per `(task end, reply end)` pair of
    pipes the pool passed it (the setup of the warm-up task of a pool that clones, when this
    process is the one that warms: `Pool.warm`). A clone is a fork: it holds what the setups
    loaded (jieba's dictionaries...) without loading it again, and serves tasks on its own
    pair; this process only warms and clones, and is stopped once it has replied."""
    run_setups(setups)
    gc.collect()
    gc.freeze()  # what the setups made stays out of every clone's collections (fewer pages copied)
    for task_end, reply_end in ends:
        if os.fork() == 0:  # the clone
            code = 0
            try:
                for fd in (fd for pair in ends for fd in pair if fd not in (task_end, reply_end)):
                    os.close(fd)
                null = os.open(os.devnull, os.O_RDWR)
                for fd in _SERVING:  # the parent's task and reply ends: a stray write goes nowhere
                    os.dup2(null, fd)
                os.close(null)
                write_message(reply_end, pickle.dumps(("ok", [os.getpid()]), pickle.HIGHEST_PROTOCOL))
                serve(os.fdopen(task_end, "rb", buffering=0), reply_end)
            except BaseException:
                code = 1
            finally:
                os._exit(code)  # never back into this process's own loop
    for pair in ends:
        for fd in pair:
            os.close(fd)


_SERVING: list[int] = []  # the descriptors this process serves on (a clone points its parent's at /dev/null)


def one(fn: Callable, element: Any) -> list:
    """`[fn(element)]`: a function of one result as a step of one output (a key for a pool)."""
    return [fn(element)]


def internal_error():
    """The `internal_error` Drop of the exception being handled: its type, message and line."""
    exc = sys.exc_info()[1]
    tb = traceback.format_exc(limit=3).strip().splitlines()[-1]
    return Drop("internal_error", f"{type(exc).__name__}: {exc} | {tb}"[:2000])


def _read_exact(stream, n: int) -> bytes:
    """`n` bytes, or fewer only at the end of the stream (a pipe gives what it holds)."""
    parts, got = [], 0
    while got < n:
        part = stream.read(n - got)
        if not part:
            break
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def read_message(stream) -> bytes | None:
    """One length-prefixed message, or None at a zero length or the end of the stream."""
    header = _read_exact(stream, HEADER.size)
    if len(header) < HEADER.size:
        return None
    (n,) = HEADER.unpack(header)
    if n == 0:
        return None
    data = _read_exact(stream, n)
    if len(data) < n:
        raise EOFError(f"message cut short: {len(data)} of {n} bytes")
    return data


def write_all(fd: int, data: bytes) -> None:
    """Write every byte to a file descriptor: a pipe's write may take only part (a signal, a
    full pipe), and a buffered writer is not relied on to carry the rest."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_message(fd: int, data: bytes) -> None:
    write_all(fd, HEADER.pack(len(data)) + data)


def run_task(task: bytes, functions: dict[str, Callable]) -> bytes:
    """The reply to one task (see the module's protocol)."""
    try:
        key, blob, elements = pickle.loads(task)
        if key not in functions:
            fn, setup = pickle.loads(blob)
            if "apache_beam" in sys.modules:  # the function belongs to a job's wiring
                return pickle.dumps(("here", "its function imports Beam"), pickle.HIGHEST_PROTOCOL)
            if setup is not None:
                setup()
            functions[key] = fn
        fn = functions[key]
    except Exception:
        return pickle.dumps(("here", traceback.format_exc(limit=5)), pickle.HIGHEST_PROTOCOL)
    results = [outcome(fn, pickle.loads(e)) for e in elements]
    return pickle.dumps(("ok", results), pickle.HIGHEST_PROTOCOL)


def serve(stdin=None, stdout: int | None = None) -> None:
    stdin = stdin or sys.stdin.buffer
    stdout = sys.stdout.fileno() if stdout is None else stdout
    _SERVING[:] = [stdin.fileno(), stdout]
    tune_gc()
    functions: dict[str, Callable] = {}
    while (task := read_message(stdin)) is not None:
        write_message(stdout, run_task(task, functions))


if __name__ == "__main__":
    import json

    # The job's import path (set by the pool), without this file's folder, whose module
    # names (report, options, ...) must not shadow anything.
    sys.path[:] = json.loads(os.environ.get("STORYBENCH_POOL_PATH", "[]")) or sys.path[1:]
    # Functions of this module (`one`) unpickle from here, not through the package
    # `pipelines.engine`, whose __init__ imports Beam.
    sys.modules["pipelines.engine.pool_worker"] = sys.modules["__main__"]
    lower_priority()
    # Ctrl-C reaches every process of the terminal's group: the job's process decides (it
    # stops its workers), and a worker that raised KeyboardInterrupt printed a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    out = sys.stdout.fileno()
    sys.stdout = sys.stderr  # a stray print in a step must not corrupt the replies
    serve(sys.stdin.buffer, out)
    # Nothing is left to write (the replies went out with os.write): end without unloading
    # the modules a step imported (jieba's dictionaries, ...), which took longer than the
    # last task of a short stage.
    sys.stderr.flush()
    os._exit(0)
