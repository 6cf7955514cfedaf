"""`Stage`: apply a pure annotator function to every record and account for each one.

The function returns outputs or `annotators.core.outcome.Drop`; the stage yields the outputs,
a rejects row per Drop (or exception: `internal_error`), (key, n) tallies for JobReport
summed per bundle (jobs run in the global window), `<stage>/<outcome>` Beam metrics, and a
progress line on stderr at most every 10 s (pipelines.engine.progress).
"""

from __future__ import annotations

import collections
import functools
import itertools
import pickle
from collections.abc import Callable
from typing import Any

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.pvalue import TaggedOutput
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.timestamp import MIN_TIMESTAMP
from apache_beam.utils.windowed_value import WindowedValue

from annotators.core.outcome import Drop
from pipelines.engine import pool, progress
from pipelines.engine.pool_worker import internal_error, outcome, tune_gc
from schemas.common import Reject

REJECTS = "rejects"
TALLY = "tally"
_BUNDLES = itertools.count()  # tells one bundle's function apart from another's in the pool


def _global(value):
    return WindowedValue(value, MIN_TIMESTAMP, [GlobalWindow()])


class _StageFn(beam.DoFn):
    def __init__(self, stage: str, fn: Callable, input_id: Callable, setup: Callable | None, grouped: bool):
        self._stage, self._fn, self._input_id, self._setup = stage, fn, input_id, setup
        self._grouped = grouped
        self._counters: dict[str, Any] = {}

    def setup(self):
        tune_gc()
        if self._setup is not None:
            self._setup()

    def _count(self, outcome: str):
        """Count an outcome for the `<stage>/<outcome>` Beam metric (added once per bundle)."""
        self._outcome_counts[outcome] = self._outcome_counts.get(outcome, 0) + 1

    def _outcomes(self, element, side):
        """(input_id, list of outputs | Drop) per input record held by `element`."""
        if not self._grouped:
            return [(self._input_id(element), outcome(self._fn, element, **side))]
        try:
            return [(i, r if isinstance(r, Drop) else list(r)) for i, r in self._fn(element, **side)]
        except Exception:  # the group is one reject, as an ungrouped record is
            return [(self._input_id(element), internal_error())]

    def start_bundle(self):
        self._tally: dict[str, int] = {}
        self._outcome_counts: dict[str, int] = {}
        stage = self._stage
        self._keys = (f"{stage}|read", f"{stage}|written", f"{stage}|rejected", f"{stage}|outputs")
        self._pool = None if self._grouped else pool.current()
        self._function: bytes | None = None  # (fn, setup) pickled for the pool, once per bundle
        self._batch: list[tuple[Any, bytes]] = []  # (input_id, pickled element) not yet sent
        self._batch_bytes = 0
        self._in_flight: collections.deque = collections.deque()  # (input_ids, Task | outcomes)

    def _add(self, key: str, n: int = 1):
        self._tally[key] = self._tally.get(key, 0) + n

    def _emit(self, input_id, result, wrap=lambda v: v):
        """The outputs of one record's outcome, its accounting, and its rejects row."""
        read, written, rejected, outputs = self._keys
        self._add(read)
        if isinstance(result, Drop):
            self._count(f"rejected/{result.reason}")
            self._add(rejected)
            self._add(f"{self._stage}|rejected/{result.reason}")
            progress.count(self._stage, 0, 1)
            yield TaggedOutput(REJECTS, wrap(Reject(self._stage, str(input_id), result.reason, result.detail).to_row()))
            return
        self._count("written")
        progress.count(self._stage, 1, 0)
        self._add(written)
        if result:
            self._add(outputs, len(result))
        for value in result:
            yield wrap(value)

    def process(self, element, **side):
        if self._pool is not None and self._pooled(element, side):
            yield from self._drain(block=len(self._in_flight) > pool.IN_FLIGHT_PER_WORKER * self._pool.n)
            return
        for input_id, result in self._outcomes(element, side):
            yield from self._emit(input_id, result)

    def _pooled(self, element, side) -> bool:
        """Queue `element` for the pool; False when this stage's work cannot go there (its
        function or the element does not pickle), so it runs here instead."""
        try:
            if self._function is None:
                fn = functools.partial(self._fn, **side) if side else self._fn
                self._function = pickle.dumps((fn, self._setup), pickle.HIGHEST_PROTOCOL)
                self._key = f"{self._stage}/{next(_BUNDLES)}"
            data = pickle.dumps(element, pickle.HIGHEST_PROTOCOL)
        except Exception:  # a lambda or an object pickle cannot carry: not poolable
            self._send()
            self._pool = None
            return False
        self._batch.append((self._input_id(element), data))
        self._batch_bytes += len(data)
        if self._batch_bytes >= pool.BATCH_BYTES or len(self._batch) >= pool.BATCH_ITEMS:
            self._send()
        return True

    def _send(self):
        if self._batch:
            ids, data = zip(*self._batch)
            self._in_flight.append((ids, self._pool.submit(self._key, self._function, list(data))))
            self._batch, self._batch_bytes = [], 0

    def _drain(self, block: bool, wrap=lambda v: v):
        """Outcomes of the tasks that are done, oldest first (with `block`, wait for the
        oldest); a stage whose function did not unpickle in a worker runs here instead."""
        while self._in_flight:
            ids, task = self._in_flight[0]
            if not self._pool.wait(task, block=block):
                return
            block = False
            self._in_flight.popleft()
            status, results = task.reply
            if status != "ok":
                raise pool.PoolError(f"stage {self._stage}: its function could not run in a pool worker: {results}")
            for input_id, result in zip(ids, results):
                yield from self._emit(input_id, result, wrap)

    def finish_bundle(self):
        """Outcomes still in the pool; then one tally element per key and bundle, not per
        record: the report's shuffle stays small."""
        if self._pool is not None:
            self._send()
            while self._in_flight:
                yield from self._drain(block=True, wrap=_global)
        for outcome_, n in sorted(self._outcome_counts.items()):
            if outcome_ not in self._counters:
                self._counters[outcome_] = Metrics.counter(self._stage, outcome_)
            self._counters[outcome_].inc(n)
        self._outcome_counts = {}
        for key, n in sorted(self._tally.items()):
            yield TaggedOutput(TALLY, _global((key, n)))
        self._tally = {}


class Stage(beam.PTransform):
    """Apply a pure `fn(record) -> iterable of outputs | Drop` and account for every input.

    With `grouped=True`, `fn(element)` instead returns `[(input_id, outputs | Drop), ...]`,
    one pair per input record the element holds (after a GroupByKey / CoGroupByKey), so
    dedup and join steps keep the same accounting. `side_inputs` (name -> AsList/AsDict/...)
    reach `fn` as keyword arguments.

    Jobs build it with `report.stage(name, fn, ...)`: applied, it registers its rejects and
    tallies in the JobReport and returns the main output, so a stage's name is written once.
    With `with_rejects=True` it returns (main, rejects rows), for a job that also reports its
    rejects elsewhere (ChapterBreak's books table). Without a report it returns the
    DoOutputsTuple (main, `rejects`, `tally`) itself.
    """

    def __init__(
        self,
        stage: str,
        fn: Callable,
        *,
        input_id: Callable = lambda e: e[0],
        setup: Callable | None = None,
        grouped: bool = False,
        side_inputs: dict[str, Any] | None = None,
        report: Any = None,
        with_rejects: bool = False,
    ):
        super().__init__(f"Stage[{stage}]")
        self.name = stage
        self._args = (stage, fn, input_id, setup, grouped)
        self._side = side_inputs or {}
        self._report, self._with_rejects = report, with_rejects

    def expand(self, pcoll):
        result = pcoll | beam.ParDo(_StageFn(*self._args), **self._side).with_outputs(REJECTS, TALLY, main="main")
        if self._report is None:
            return result
        main = self._report.add(self.name, result)
        return (main, result[REJECTS]) if self._with_rejects else main
