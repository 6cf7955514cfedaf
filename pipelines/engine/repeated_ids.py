"""`RepeatedIds`: the records whose id an earlier record has, as one CompactMap side input.

Only (id, order) entries travel (`entries(element)`, made where the records are), packed per
bundle and partition of the ids (`annotators.core.dedup.id_part`), never the records
themselves; `annotators.core.dedup.repeated_id_pairs` decides each partition and a job's
stage looks its records up with `keeper_of`, rejecting the named ones as `duplicate_id`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import apache_beam as beam

from annotators.core.dedup import id_part, repeated_id_pairs
from pipelines.engine.folds import BlocksPerBundle
from pipelines.engine.gather import as_compact, compact_map

KEY_BLOCK = 1 << 14  # entries a bundle holds before it sends its blocks on


def id_blocks(entries: Callable, element) -> list:
    return [(id_part(record_id), (record_id, order)) for record_id, order in entries(element)]


class RepeatedIds(beam.PTransform):
    """PCollections of records (one, or one per input kind) -> the side input naming every
    record whose id an earlier one has. `entries(record)`: its (id, order) entries, `order` a
    sortable tuple ending in (input_id, key) (`repeated_id_pairs`); none for a record that
    holds no id to check."""

    def __init__(self, entries: Callable):
        super().__init__()
        self.entries = entries

    def expand(self, branches):
        branches = branches if isinstance(branches, (list, tuple)) else [branches]
        blocks_of = functools.partial(id_blocks, self.entries)
        blocks = [
            branch | f"IdBlocks{i}" >> beam.ParDo(BlocksPerBundle(blocks_of, KEY_BLOCK, packed=True))
            for i, branch in enumerate(branches)
        ]
        pairs = (
            blocks
            | "AllIdBlocks" >> beam.Flatten()
            | "GroupIds" >> beam.GroupByKey()
            | "RepeatedIdPairs" >> beam.FlatMap(repeated_id_pairs)
        )
        return as_compact(compact_map(pairs, "RepeatedIds"))
