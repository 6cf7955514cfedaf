"""Steps for tests/engine/test_pool.py, in a module that does not import Beam (as the
annotators' steps do not), so pool workers can unpickle them."""

from __future__ import annotations

import os
import time

from annotators.core.outcome import Drop

_SETUP = {"done": False}


def words(record: str):
    if record == "boom":
        raise ValueError("a record that breaks the step")
    if not record:
        return Drop("empty", "no words")
    return record.split()


def pid_of(record: str):
    return [(record, os.getpid())]


def mark_setup() -> None:
    _SETUP["done"] = True


def setup_done() -> bool:
    return _SETUP["done"]


def tagger(tag: str):
    # module state through a function: cloudpickle copies the plain values a closure names
    def tag_record(record: str, extra: dict):
        return [(tag, record, setup_done(), extra["x"], os.getpid())]

    return tag_record


def with_helper(helper, record: str):
    """A step given a helper object (a Beam class, in the test: it imports Beam where it unpickles)."""
    return [(f"{record}1", os.getpid())]


def die(record: str):
    os._exit(3)


def pid_key(record: str):
    """A spill key that says which process computed it."""
    return (record, os.getpid())


def big(record: str):
    """An outcome of about 2 MB: a reply that fills the pipe many times over."""
    return [record * (2 << 20)]


def pieces(record: str):
    """Several outputs per element, each saying which process made it; "boom" raises."""
    if record == "boom":
        raise ValueError("a component that breaks the step")
    return [(part, os.getpid()) for part in record.split()]


def word_counts(outputs: list) -> list:
    """A block's words merged into (word, times) pairs, in word order."""
    counts: dict = {}
    for word in outputs:
        counts[word] = counts.get(word, 0) + 1
    return sorted(counts.items())


def bad_merge(outputs: list) -> list:
    raise ValueError("a merge that breaks")


def note_setup(path: str) -> None:
    """A setup that leaves a line with the process id in `path` (which worker ran it, when)."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(f"{os.getpid()}\n")


def niceness(record: str):
    return [(record, os.getpriority(os.PRIO_PROCESS, 0))]


def group_words(group):
    """A grouped step: (key, records) -> (record, its words | Drop) per record; the group "bad" raises."""
    key, records = group
    if key == "bad":
        raise ValueError("a group that breaks the step")
    return [(r, r.split() if r else Drop("empty", "no words")) for r in records]


def group_pids(group):
    """(record, [the id of the process that decided it]) per record of a group."""
    return [(r, [os.getpid()]) for r in group[1]]


def joined(outputs: list) -> list:
    """A group's outputs merged into one tuple."""
    return [tuple(outputs)]


def pid_setup(record: str):
    """(record, the process id, whether this process ran `mark_setup`)."""
    return [(record, os.getpid(), setup_done())]


def _meet(folder: str, n: int = 2, seconds: float = 60.0) -> None:
    """Note this process in `folder`, then wait (at most `seconds`) until `n` processes have:
    a task that waits here keeps its worker busy, so the pool hands the next task to another
    one, however late that one started (a loaded machine clones slowly)."""
    open(os.path.join(folder, str(os.getpid())), "w").close()
    end = time.monotonic() + seconds
    while len(os.listdir(folder)) < n and time.monotonic() < end:
        time.sleep(0.01)


def pid_setup_met(args: tuple):
    """pid_setup(record) once two workers have met in `folder`: args = (record, folder)."""
    record, folder = args
    _meet(folder)
    return pid_setup(record)


def spin_met(args: tuple):
    """spin(seconds) once two workers have met in `folder`: args = (seconds, folder)."""
    seconds, folder = args
    _meet(folder)
    return spin(seconds)


def spin(seconds: float):
    """Busy for about `seconds` of CPU time; (the process id)."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    return [os.getpid()]


def failing_setup() -> None:
    raise RuntimeError("a setup that breaks")


def noting_pid(fn, folder: str, *args):
    """`fn(*args)`, after noting this process's pid as a file in `folder` (a writer wrapped so
    that a test sees which process ran it)."""
    with open(os.path.join(folder, f"{os.getpid()}-{time.monotonic_ns()}"), "w"):
        pass
    return fn(*args)


def export_lines(row: dict):
    """Two files' lines of a row, for an export written on the pool."""
    return [(f"{row['g']}.txt", f"{row['id']} {row['text']}"), (f"{row['g']}.n", str(row["n"]))]


def by_group_id(row: dict):
    return row["g"], row["id"]


def by_id(row: dict):
    return row["id"]


def line_words(record):
    """Words of a RawRecord's line, with the worker's pid (a read failure stays its Drop)."""
    if isinstance(record.payload, Drop):
        return record.payload
    got = words(record.payload.decode())
    return got if isinstance(got, Drop) else [(word, os.getpid()) for word in got]


def word_counts_of_pairs(outputs: list) -> list:
    return word_counts([word for word, _ in outputs])


SLOW_SECONDS = 1.5


def slow_book(record: tuple[str, bytes]):
    """(name, size) of a book; a book whose name starts with "slow" takes SLOW_SECONDS (one
    huge book that keeps a step busy)."""
    name, data = record
    if name.startswith("slow"):
        time.sleep(SLOW_SECONDS)
    return [(name, len(data))]
