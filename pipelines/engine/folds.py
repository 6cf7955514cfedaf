"""Beam adapters for pure folds, so a job's aggregation logic lives beside its rules.

A fold is any object with four methods: `create()` (an empty accumulator), `add(acc, item)`
(returns the accumulator), `merge(accs)` (one accumulator of several) and `result(acc)`.
Its logic stays plain Python (annotators/<benchmark>/..., testable without Beam); these
classes only say where Beam runs it:

- `CombineFold(fold)`: a CombineFn (CombineGlobally / CombinePerKey);
- `MergeFold(fold)`: a CombineFn whose inputs are already accumulators (per bundle, below);
- `FoldPerBundle(fold)`: each bundle's elements folded where they are made, one accumulator
  out per bundle, so a shuffle carries accumulators instead of elements;
- `KeyedFoldPerBundle(fold, entries)`: the same per key, one (key, result) per key and bundle;
- `BlocksPerBundle(pairs_of)`: each element's (key, value) pairs gathered per key in a
  bundle and sent on as (key, [values]) blocks, so a grouping shuffle carries a block per
  key and bundle instead of one element per pair;
- `ConcatLists()`: the fold that joins such blocks' lists;
- `ListsPerBundle(values_of, size)`: each element's values gathered into lists of about
  `size` within a bundle, so the steps after it pay Beam's per-element work once per list;
- `EachOf(fold)`: a fold over such lists that adds each item of a list.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterable
from typing import Any

import apache_beam as beam
from apache_beam.transforms.window import GlobalWindows


class CombineFold(beam.CombineFn):
    """A CombineFn that runs a fold (create / add / merge / result)."""

    def __init__(self, fold):
        super().__init__()
        self._fold = fold

    def create_accumulator(self):
        return self._fold.create()

    def add_input(self, acc, item):
        return self._fold.add(acc, item)

    def merge_accumulators(self, accs):
        return self._fold.merge(accs)

    def extract_output(self, acc):
        return self._fold.result(acc)


class MergeFold(CombineFold):
    """CombineFold over inputs that are the fold's accumulators (from FoldPerBundle)."""

    def add_input(self, acc, other):
        return self._fold.merge([acc, other])


class FoldPerBundle(beam.DoFn):
    """Elements -> one accumulator of `fold` per bundle (emitted when the bundle ends)."""

    def __init__(self, fold):
        super().__init__()
        self._fold = fold

    def start_bundle(self):
        self._acc = self._fold.create()

    def process(self, item):
        self._acc = self._fold.add(self._acc, item)
        return ()

    def finish_bundle(self):
        yield GlobalWindows.windowed_value(self._acc)


class KeyedFoldPerBundle(beam.DoFn):
    """element -> (key, fold result) once per key and bundle: the (key, item) pairs of
    `entries(element)` folded per key where they are made, sent on sorted by key when the
    bundle ends (what leaves a worker is one result per key, not every item)."""

    def __init__(self, fold, entries: Callable[[Any], Iterable[tuple[Any, Any]]]):
        super().__init__()
        self._fold, self._entries = fold, entries

    def start_bundle(self):
        self._accs: dict = {}

    def process(self, element):
        fold, accs = self._fold, self._accs
        for key, item in self._entries(element):
            acc = accs[key] if key in accs else fold.create()
            accs[key] = fold.add(acc, item)
        return ()

    def finish_bundle(self):
        accs, self._accs = self._accs, {}
        for key in sorted(accs):
            yield GlobalWindows.windowed_value((key, self._fold.result(accs[key])))


def pack(records: list) -> bytes:
    """A block of records as one pickle, for a shuffle or stage boundary to carry as bytes.

    Beam's default coder walks plain lists and tuples element by element and pickles every
    record it does not know (a NamedTuple, a dataclass) on its own, a few microseconds each,
    in the one process that runs a local job's shuffles; and the local runner writes and
    reads a multi-input Flatten in full. Bytes cross every boundary as a copy: a block is
    pickled once where it is made and `unpack`ed once where it is used."""
    return pickle.dumps(records, protocol=pickle.HIGHEST_PROTOCOL)


def unpack(blob: bytes) -> list:
    """The records of a block made by `pack`."""
    return pickle.loads(blob)


def unpacked(key, blocks: Iterable[bytes]) -> tuple[Any, list]:
    """(key, the records of every block `pack`ed under it, block after block): a grouped
    key's packed blocks (BlocksPerBundle with `packed`, after a GroupByKey) as one list."""
    return key, [record for blob in blocks for record in unpack(blob)]


class BlocksPerBundle(beam.DoFn):
    """element -> (key, [values]) blocks: the (key, value) pairs of `pairs_of(element, *side
    inputs)` gathered per key within a bundle, sent on sorted by key when `flush` values are
    held and when the bundle ends; with `packed`, each block is `pack`ed (records, not
    primitives)."""

    FLUSH = 1 << 18

    def __init__(self, pairs_of: Callable[..., Iterable[tuple[Any, Any]]], flush: int = FLUSH, packed: bool = False):
        super().__init__()
        self._pairs_of, self._flush, self._packed = pairs_of, flush, packed

    def start_bundle(self):
        self._blocks: dict = {}
        self._held = 0

    def process(self, element, *args, **kwargs):
        blocks = self._blocks
        for key, value in self._pairs_of(element, *args, **kwargs):
            blocks.setdefault(key, []).append(value)
            self._held += 1
        if self._held >= self._flush:
            yield from self._drain()

    def _drain(self):
        blocks, self._blocks, self._held = self._blocks, {}, 0
        if self._packed:
            return [(key, pack(block)) for key, block in sorted(blocks.items())]
        return sorted(blocks.items())

    def finish_bundle(self):
        for block in self._drain():
            yield GlobalWindows.windowed_value(block)


class ConcatLists:
    """The fold of lists into one list (in the order they are added and merged)."""

    def create(self) -> list:
        return []

    def add(self, acc: list, items: Iterable) -> list:
        acc.extend(items)
        return acc

    def merge(self, accs: Iterable[list]) -> list:
        out: list = []
        for acc in accs:
            out.extend(acc)
        return out

    def result(self, acc: list) -> list:
        return acc


class ListsPerBundle(beam.DoFn):
    """element -> lists of the values `values_of(element, *side inputs)` gives, in the order
    they come within a bundle, sent on once `size` values are held and when the bundle ends:
    the steps after it (a Stage with `blocks=True`, ...) pay Beam's per-element work (a few
    microseconds a step) once per list, not once per value. Which values share a list follows
    the bundles, so nothing may decide an output by it."""

    def __init__(self, values_of: Callable[..., Iterable[Any]], size: int):
        super().__init__()
        self._values_of, self._size = values_of, size

    def start_bundle(self):
        self._held: list = []

    def process(self, element, *args, **kwargs):
        self._held.extend(self._values_of(element, *args, **kwargs))
        if len(self._held) >= self._size:
            held, self._held = self._held, []
            yield held

    def finish_bundle(self):
        if self._held:
            held, self._held = self._held, []
            yield GlobalWindows.windowed_value(held)


class EachOf:
    """The fold `fold` over lists of its items (ListsPerBundle's, a block Stage's merged
    outputs): a list adds each of its items in order; create, merge and result are `fold`'s."""

    def __init__(self, fold):
        self._fold = fold

    def create(self):
        return self._fold.create()

    def add(self, acc, items: Iterable):
        add = self._fold.add
        for item in items:
            acc = add(acc, item)
        return acc

    def merge(self, accs):
        return self._fold.merge(accs)

    def result(self, acc):
        return self._fold.result(acc)
