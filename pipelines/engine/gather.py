"""`Gather`: a whole PCollection as one list, without Beam's default-injection side input;
`once`/`seeded`: a few fixed elements from an impulse; `after_all`: a step run once every
element of a PCollection is there; `compact_map`/`as_compact`: pairs as one CompactMap side input.

`beam.combiners.ToList()` (CombineGlobally) adds a side input holding its result, so that an
empty input still yields `[]`; the portable runners decode that side input and weigh it
object by object for their state cache in every bundle that reads it, which costs seconds
on lists of tens of thousands of elements (measured on the LOT job: 4 s at 20,000 stories).
`Gather` yields nothing for an empty input instead: consumers read it through
`beam.pvalue.AsSingleton(..., default_value=...)` or a FlatMap that then simply does not run.
"""

from __future__ import annotations

from collections.abc import Callable

import apache_beam as beam
from apache_beam.transforms.window import GlobalWindows

from annotators.core.compact import CompactMap


def once(pipeline, label: str):
    """A PCollection of one element (b"", to be ignored) at the start of `pipeline`: Beam's
    Impulse primitive alone, where `beam.Create([None])` adds a decode and a reshuffle (five
    transforms, each of which every run builds, pickles and sets up)."""
    return pipeline | label >> beam.Impulse()


def seeded(pipeline, label: str, items: list):
    """A PCollection of the few fixed `items` (a FlatMap of one impulse; their order never
    matters to a consumer, which groups or sorts them)."""
    items = list(items)
    return once(pipeline, f"{label}Impulse") | label >> beam.FlatMap(lambda _: items)


class _BundleDone(beam.DoFn):
    """One None per bundle of its input, at the bundle's end: what a barrier waits on."""

    def process(self, element):
        return ()

    def finish_bundle(self):
        yield GlobalWindows.windowed_value(None)


def after_all(pcoll, label: str, fn: Callable, *args):
    """`fn(marks, *args)` once, when every element of `pcoll` is there (`marks`: a list with a
    None per bundle of `pcoll`, to be ignored): a side-input barrier on one mark per bundle,
    never on the elements themselves (the local runner holds a side input whole: a barrier
    on the stories job's final stories held the corpus)."""
    marks = pcoll | f"{label}Marks" >> beam.ParDo(_BundleDone())
    return once(pcoll.pipeline, f"{label}Once") | label >> beam.FlatMap(
        lambda _, done, *a: fn(done, *a), beam.pvalue.AsList(marks), *args
    )


class Gather(beam.PTransform):
    """PCollection -> a PCollection of one list of all its elements (none if it is empty)."""

    def expand(self, pcoll):
        return pcoll | beam.CombineGlobally(beam.combiners.ToListCombineFn()).without_defaults()


def compact_of(pairs) -> CompactMap:
    """A CompactMap of (key, value) pairs."""
    return CompactMap(dict(pairs))


def compact_map(pairs, label: str):
    """(key, value) pairs -> a one-element PCollection of their CompactMap (read it with
    `as_compact`)."""
    return pairs | f"{label}List" >> Gather() | f"{label}Map" >> beam.Map(compact_of)


def as_compact(compact):
    """A `compact_map` as an AsSingleton side input: every bundle that reads it decodes and
    weighs one blob instead of a dict of every entry (annotators.core.compact)."""
    return beam.pvalue.AsSingleton(compact, default_value=CompactMap())
