"""`Stage`: apply a pure annotator function to every record and account for each one.

The function returns outputs or `annotators.core.outcome.Drop`; the stage yields the outputs,
a rejects row per Drop (or exception: `internal_error`), (key, n) tallies for JobReport
summed per bundle (jobs run in the global window), `<stage>/<outcome>` Beam metrics, and a
progress line on stderr at most every 10 s (pipelines.engine.progress).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.pvalue import TaggedOutput
from apache_beam.transforms.window import GlobalWindows

from annotators.core.outcome import Drop
from pipelines.engine import pool, progress
from pipelines.engine.pool_worker import each_group, each_record, outcome, tune_gc
from schemas.common import Reject

REJECTS = "rejects"
TALLY = "tally"


class _StageFn(beam.DoFn):
    def __init__(
        self,
        stage: str,
        fn: Callable,
        input_id: Callable,
        setup: Callable | None,
        grouped: bool,
        pooled: bool,
        blocks: bool = False,
        merge: Callable | None = None,
        pool_groups: bool = False,
        fresh_workers: bool = False,
    ):
        self._stage, self._fn, self._input_id, self._setup = stage, fn, input_id, setup
        self._grouped, self._blocks, self._merge, self._fresh = grouped, blocks, merge, fresh_workers
        self._here = (grouped and not pool_groups) or not pooled  # runs in this process even with a pool
        self._counters: dict[str, Any] = {}

    def setup(self):
        """The stage's own setup runs where its function runs: here only without a pool."""
        tune_gc()
        if self._setup is not None and (self._here or pool.current() is None):
            self._setup()

    def _count(self, outcome: str, n: int = 1):
        """Count an outcome for the `<stage>/<outcome>` Beam metric (added once per bundle)."""
        self._outcome_counts[outcome] = self._outcome_counts.get(outcome, 0) + n

    def _tag(self, element):
        """What stays here while `element` is worked on: its input id (a block's: each
        record's; a block read where it is worked on: the block itself, its ids come back)."""
        if self._blocks:
            return element if hasattr(element, "records") else [self._input_id(r) for r in element]
        return self._input_id(element)

    def _step(self, side):
        """The function applied to one element, here or on the pool: a block's `each_record`,
        a group's `each_group`, else the stage's function with its side inputs."""
        if self._blocks:
            return functools.partial(each_record, self._fn, self._merge, block_ids=self._input_id, **side)
        if self._grouped:
            return functools.partial(each_group, self._fn, self._merge, **side)
        return functools.partial(self._fn, **side) if side else self._fn

    def start_bundle(self):
        self._tally: dict[str, int] = {}
        self._outcome_counts: dict[str, int] = {}
        stage = self._stage
        self._keys = (f"{stage}|read", f"{stage}|written", f"{stage}|rejected", f"{stage}|outputs")
        self._batches: pool.Batches | None = None
        self._pooled = not self._here and pool.current() is not None
        self._working = progress.working(stage)  # the records in hand, for the heartbeat line

    def _add(self, key: str, n: int = 1):
        self._tally[key] = self._tally.get(key, 0) + n

    def _written(self, records: int, outputs: int):
        """The accounting of `records` written records that gave `outputs` outputs."""
        read, written, _, outputs_key = self._keys
        self._add(read, records)
        self._count("written", records)
        progress.count(self._stage, records, 0)
        self._add(written, records)
        if outputs:
            self._add(outputs_key, outputs)

    def _emit(self, input_id, result, wrap=lambda v: v):
        """The outputs of one record's outcome, its accounting, and its rejects row."""
        if isinstance(result, Drop):
            read, _, rejected, _ = self._keys
            self._add(read)
            self._count(f"rejected/{result.reason}")
            self._add(rejected)
            self._add(f"{self._stage}|rejected/{result.reason}")
            progress.count(self._stage, 0, 1)
            yield TaggedOutput(REJECTS, wrap(Reject(self._stage, str(input_id), result.reason, result.detail).to_row()))
            return
        self._written(1, len(result))
        for value in result:
            yield wrap(value)

    def _emit_block(self, input_ids, result, wrap=lambda v: v):
        """A block's outcome (`pool_worker.each_record`): each record's accounting and rejects
        row, then the block's outputs (merged, when the stage merges them). A block read
        where it was worked on (a RangeBlock: `input_ids` is the block) brings its ids."""
        if not isinstance(input_ids, list):
            block = input_ids
            if isinstance(result, Drop):  # no ids came back: the block is read again for them
                input_ids = [self._input_id(r) for r in block.records()]
            else:
                input_ids = result[2]
        if isinstance(result, Drop):  # the merge failed: every record of the block is rejected
            for input_id in input_ids:
                yield from self._emit(input_id, result, wrap)
            return
        outcomes, merged = result[0], result[1]
        if merged is None:
            for input_id, got in zip(input_ids, outcomes):
                yield from self._emit(input_id, got, wrap)
            return
        written = outputs = 0
        for input_id, got in zip(input_ids, outcomes):
            if isinstance(got, Drop):
                yield from self._emit(input_id, got, wrap)
            else:
                written, outputs = written + 1, outputs + got
        if written:
            self._written(written, outputs)
        for value in merged:
            yield wrap(value)

    def _emitter(self):
        """How an outcome is emitted (the same from the pool and from here)."""
        if self._blocks:
            return self._emit_block
        return self._emit_group if self._grouped else self._emit

    def process(self, element, **side):
        tag = self._tag(element)
        self._working.begin(tag, progress.record_size(element))
        if self._pooled:
            if self._batches is None:
                # a group is a task of its own: its outputs (a file's records) may be large
                # and so is a block (read where it is worked on, a block is a few numbers)
                items = 1 if self._grouped or self._blocks else pool.BATCH_ITEMS
                self._batches = pool.Batches(
                    pool.current(), self._stage, self._step(side), self._setup, items=items, fresh=self._fresh
                )
            if self._grouped:
                element = _listed(element)
            if self._batches.add(tag, element):
                yield from self._emit_ready(self._batches.ready())
                return
            self._run_here()
        # here, as the pool would give it: a record's outputs or Drop, a block's (`each_record`)
        # or a group's (`each_group`: an exception in the step or its merge makes the group
        # one reject, as an ungrouped record is)
        result = outcome(self._step(side), element)
        self._working.end()
        yield from self._emitter()(tag, result)

    def _emit_ready(self, done, wrap=None):
        """The outcomes the pool gave back, each record's in hand no longer."""
        emit = self._emitter()
        for input_id, result in done:
            self._working.end()
            yield from emit(input_id, result) if wrap is None else emit(input_id, result, wrap)

    def _emit_group(self, input_id, result, wrap=lambda v: v):
        """A group's outcome (`pool_worker.each_group`): each record's accounting and rejects
        row and its outputs (or, with `merge`, the group's merged outputs); a group whose
        step or merge failed is one reject, under the group's input id."""
        if isinstance(result, Drop):
            yield from self._emit(input_id, result, wrap)
            return
        pairs, merged = result
        if merged is None:
            for record_id, got in pairs:
                yield from self._emit(record_id, got, wrap)
            return
        yield from self._emit_block([i for i, _ in pairs], ([got for _, got in pairs], merged), wrap)

    def _run_here(self):
        """This stage's function or record does not pickle: it runs in this process."""
        if self._batches is not None:
            self._batches.send()
        self._pooled = False
        if self._setup is not None:
            self._setup()

    def finish_bundle(self):
        """Outcomes still in the pool; then one tally element per key and bundle, not per
        record: the report's shuffle stays small."""
        if self._batches is not None:
            yield from self._emit_ready(self._batches.finish(), GlobalWindows.windowed_value)
            self._batches = None
        progress.done(self._working)
        for outcome_, n in sorted(self._outcome_counts.items()):
            if outcome_ not in self._counters:
                self._counters[outcome_] = Metrics.counter(self._stage, outcome_)
            self._counters[outcome_].inc(n)
        self._outcome_counts = {}
        for key, n in sorted(self._tally.items()):
            yield TaggedOutput(TALLY, GlobalWindows.windowed_value((key, n)))
        self._tally = {}


def _listed(group):
    """A (key, values) group with its values a list (a GroupByKey gives an iterable that does
    not pickle), for a pool worker."""
    key, values = group
    return key, values if isinstance(values, (list, tuple, dict)) else list(values)


class Stage(beam.PTransform):
    """Apply a pure `fn(record) -> iterable of outputs | Drop` and account for every input.

    With `grouped=True`, `fn(element)` instead returns `[(input_id, outputs | Drop), ...]`,
    one pair per input record the element holds (after a GroupByKey / CoGroupByKey), so
    dedup and join steps keep the same accounting. `side_inputs` (name -> AsList/AsDict/...)
    reach `fn` as keyword arguments.

    In a local run with a pool (pipelines.engine.pool), an ungrouped stage's `fn` runs on
    the pool's worker processes when it pickles; `pooled=False` keeps a stage whose work is
    cheaper than sending its records there (a decision on records already made) here. A
    grouped stage runs here unless `pool_groups=True`: then each group is one task on the
    pool (its values made a list; `pool_worker.each_group`), for a stage whose groups are
    small to send (packed blocks, file names) and costly to decide, with the same outcomes,
    accounting and order. `fresh_workers=True`: the stage needs nothing an earlier stage's
    setup loaded on the workers (jieba's dictionaries), and workers that ran one are
    replaced by new ones before it runs, so that memory does not add to this stage's.

    With `blocks=True` each element is a block of records (a list; `ReadRecords(blocks=True)`
    reads them so) and `fn` still applies to each record, with the same accounting, rejects
    and outcomes as one record per element; Beam's per-element work is then paid once per
    block, and a pool task carries whole blocks. With `merge` as well, `merge(outputs)` of
    each block's outputs in order (where `fn` ran) is what the stage yields: a reference's
    thousands of small per-document values leave as one or a few per block. A grouped stage
    with `merge` yields `merge(outputs)` of each group's outputs in the same way.

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
        input_id: Callable = operator.itemgetter(0),
        setup: Callable | None = None,
        grouped: bool = False,
        pooled: bool = True,
        blocks: bool = False,
        merge: Callable | None = None,
        pool_groups: bool = False,
        fresh_workers: bool = False,
        side_inputs: dict[str, Any] | None = None,
        report: Any = None,
        with_rejects: bool = False,
    ):
        super().__init__(f"Stage[{stage}]")
        self.name = stage
        if merge is not None and not (blocks or grouped):
            raise ValueError("merge needs blocks=True or grouped=True")
        self._args = (stage, fn, input_id, setup, grouped, pooled, blocks, merge, pool_groups, fresh_workers)
        self._side = side_inputs or {}
        self._report, self._with_rejects = report, with_rejects

    def expand(self, pcoll):
        setup, grouped, pooled = self._args[3:6]
        if setup is not None and pooled and not grouped:  # the pool's workers may start it now
            from pipelines.engine.options import warm_setup

            warm_setup(pcoll.pipeline, setup)
        result = pcoll | beam.ParDo(_StageFn(*self._args), **self._side).with_outputs(REJECTS, TALLY, main="main")
        if self._report is None:
            return result
        main = self._report.add(self.name, result)
        return (main, result[REJECTS]) if self._with_rejects else main


class PooledFlatMap(beam.DoFn):
    """`beam.FlatMap(fn)` for a pure `fn` (of an annotators module, so a worker can unpickle
    it), run on the pool's workers in a local run that has one (pipelines.engine.pool) and
    here otherwise. It accounts for nothing (not a Stage): an exception fails the job, as in
    a FlatMap. For heavy work on few elements (a near-duplicate component's clusters, a
    table's shards); `fresh_workers` as a Stage's; `items`: elements per task at most (1:
    each its own task); `worth(element)`: whether an element is worth sending (one that is
    not runs here at once, so its outputs may come before those of elements sent earlier)."""

    def __init__(
        self,
        name: str,
        fn: Callable,
        fresh_workers: bool = False,
        items: int = pool.BATCH_ITEMS,
        worth: Callable[[Any], bool] | None = None,
    ):
        self._name, self._fn, self._fresh, self._items, self._worth = name, fn, fresh_workers, items, worth

    def setup(self):
        tune_gc()

    def start_bundle(self):
        workers = pool.current()
        self._batches = (
            None
            if workers is None
            else pool.Batches(workers, self._name, self._fn, items=self._items, fresh=self._fresh)
        )
        self._working = progress.working(self._name)  # the elements in hand, for the heartbeat line

    def _outputs(self, done):
        for _, result in done:
            self._working.end()
            if isinstance(result, Drop):  # as the function's exception would have, here
                raise RuntimeError(f"{self._name}: {result.detail}")
            yield from result

    def process(self, element):
        self._working.begin(_input_id(element), progress.record_size(element))
        sent = self._batches is not None and (self._worth is None or self._worth(element))
        if sent and self._batches.add(None, element):
            yield from self._outputs(self._batches.ready())
            return
        yield from self._fn(element)
        self._working.end()

    def finish_bundle(self):
        if self._batches is not None:
            for value in self._outputs(self._batches.finish()):
                yield GlobalWindows.windowed_value(value)
        progress.done(self._working)


def _input_id(element):
    """An element's input id when it is (input_id, payload), for the progress line; else None."""
    return element[0] if type(element) is tuple and element and isinstance(element[0], str) else None
