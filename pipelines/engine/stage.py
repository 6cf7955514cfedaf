"""`Stage`: apply a pure annotator function to every record and account for each one.

The function returns outputs or `annotators.core.outcome.Drop`; the stage yields the outputs,
a rejects row per Drop (or exception: `internal_error`), (key, n) tallies for JobReport
summed per bundle (jobs run in the global window), `<stage>/<outcome>` Beam metrics, and a
progress line on stderr at most every 10 s (pipelines.engine.progress).
"""

from __future__ import annotations

import gc
import traceback
from collections.abc import Callable
from typing import Any

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.pvalue import TaggedOutput
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.timestamp import MIN_TIMESTAMP
from apache_beam.utils.windowed_value import WindowedValue

from annotators.core.outcome import Drop
from pipelines.engine import progress
from schemas.common import Reject

REJECTS = "rejects"
TALLY = "tally"
GC_YOUNG_THRESHOLD = 50_000  # allocations between young-generation collections (CPython: 700)


def tune_gc() -> None:
    """Collect the young generation every GC_YOUNG_THRESHOLD allocations instead of every 700
    in a worker process: the steps make millions of short-lived tuples and lists (tokens,
    tags, rows) but few reference cycles, and each early collection walked them for nothing
    (about 3% of the LOT build). Older generations keep their settings; idempotent."""
    young, middle, old = gc.get_threshold()
    if young and young < GC_YOUNG_THRESHOLD:
        gc.set_threshold(GC_YOUNG_THRESHOLD, middle, old)


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
        try:
            if self._grouped:
                return [(i, r if isinstance(r, Drop) else list(r)) for i, r in self._fn(element, **side)]
            result = self._fn(element, **side)
            return [(self._input_id(element), result if isinstance(result, Drop) else list(result))]
        except Exception as exc:  # bad input must not crash the job; it is recorded instead
            tb = traceback.format_exc(limit=3).strip().splitlines()[-1]
            drop = Drop("internal_error", f"{type(exc).__name__}: {exc} | {tb}"[:2000])
            return [(self._input_id(element), drop)]

    def start_bundle(self):
        self._tally: dict[str, int] = {}
        self._outcome_counts: dict[str, int] = {}
        stage = self._stage
        self._keys = (f"{stage}|read", f"{stage}|written", f"{stage}|rejected", f"{stage}|outputs")

    def _add(self, key: str, n: int = 1):
        self._tally[key] = self._tally.get(key, 0) + n

    def process(self, element, **side):
        read, written, rejected, outputs = self._keys
        for input_id, result in self._outcomes(element, side):
            self._add(read)
            if isinstance(result, Drop):
                self._count(f"rejected/{result.reason}")
                self._add(rejected)
                self._add(f"{self._stage}|rejected/{result.reason}")
                progress.count(self._stage, 0, 1)
                yield TaggedOutput(REJECTS, Reject(self._stage, str(input_id), result.reason, result.detail).to_row())
                continue
            self._count("written")
            progress.count(self._stage, 1, 0)
            self._add(written)
            if result:
                self._add(outputs, len(result))
            yield from result

    def finish_bundle(self):
        """One tally element per key and bundle, not per record: the report's shuffle stays small."""
        for outcome, n in sorted(self._outcome_counts.items()):
            if outcome not in self._counters:
                self._counters[outcome] = Metrics.counter(self._stage, outcome)
            self._counters[outcome].inc(n)
        self._outcome_counts = {}
        for key, n in sorted(self._tally.items()):
            yield TaggedOutput(TALLY, WindowedValue((key, n), MIN_TIMESTAMP, [GlobalWindow()]))
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
