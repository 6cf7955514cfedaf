"""`BlocksPerBundle`: many small keyed items shuffled as a few blocks instead of one element each.

Why: a shuffle costs about 30 us per element on the local runner, and the local runner holds
every element it shuffles. A job that would shuffle one (band key, id) pair per story and band
(nine per story) instead gathers a bundle's items per partition and emits one block per
partition and bundle; the step after the GroupByKey reads a partition's blocks together.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

import apache_beam as beam
from apache_beam.transforms.window import GlobalWindows


class BlocksPerBundle(beam.DoFn):
    """element -> (part, [item, ...]) blocks, from the (part, item) pairs `items_of(element)`
    gives: a bundle's items gathered per part, sent when FLUSH items are held and at the end
    of the bundle, parts in sorted order (a block's order never decides an output: the step
    after the shuffle must not depend on the order of its blocks)."""

    FLUSH = 1 << 18

    def __init__(self, items_of: Callable[[Any], Iterable[tuple[Any, Any]]]):
        self._items_of = items_of

    def start_bundle(self):
        self._parts: dict = {}
        self._held = 0

    def process(self, element):
        parts = self._parts
        for part, item in self._items_of(element):
            parts.setdefault(part, []).append(item)
            self._held += 1
        if self._held >= self.FLUSH:
            yield from self._blocks()

    def _blocks(self):
        parts, self._parts, self._held = self._parts, {}, 0
        return sorted(parts.items(), key=lambda kv: kv[0])

    def finish_bundle(self):
        for block in self._blocks():
            yield GlobalWindows.windowed_value(block)
