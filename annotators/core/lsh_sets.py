"""Near-duplicate candidate sets from LSH band keys, in pieces a shuffle can carry cheaply.

A job never shuffles one element per story and band (a million stories are nine million
elements): each bundle gathers its (band key, input id) pairs in blocks per partition of the
band keys (`band_part`), one shuffle brings a partition's blocks together, and
`partition_id_sets` finds that partition's candidate sets (the input ids sharing a band key,
two or more), ids only. `near_dup.id_components` then joins sets that share a story. In the
stories job a component's members rebuild their sets from the band keys they carry
(`member_band_sets`); the LOT job, whose members are read again without their band keys,
sends each component its own sets (annotators.lot.steps.components_and_sets) instead of
making every member's MinHash a second time.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

BAND_PARTS = 256  # partitions of the LSH band keys: what the band shuffle is keyed by


class ComponentMember(NamedTuple):
    """A candidate story as its component receives it: its cluster node, where its text is
    (a spill location) and its band keys (to rebuild its candidate sets there)."""

    node: Any
    loc: Any
    bands: tuple[str, ...]


def band_part(band: str, parts: int = BAND_PARTS) -> int:
    """The partition of an LSH band key (near_dup.band_keys: "iii-" then hex digits)."""
    return int(band[-6:], 16) % parts


def partition_id_sets(blocks: Iterable[Iterable[tuple[str, str]]], dropped: Any = ()) -> list[tuple[str, ...]]:
    """The distinct candidate sets of one partition of band keys, from the (band, input id)
    pairs every bundle gathered for it: per band key, the sorted distinct ids no dedup dropped
    (`dropped`: any container of ids), when two or more; sorted."""
    by_band: dict[str, set[str]] = {}
    for block in blocks:
        for band, input_id in block:
            by_band.setdefault(band, set()).add(input_id)
    out = set()
    for ids in by_band.values():
        kept = [i for i in ids if i not in dropped] if dropped else ids
        if len(kept) > 1:
            out.add(tuple(sorted(kept)))
    return sorted(out)


def member_band_sets(members: Iterable[tuple[Any, Iterable[str]]]) -> list[tuple[Any, ...]]:
    """The candidate sets among one component's members, as sorted tuples of their nodes, from
    the (node, band keys) each member carries: the band groups of two or more, sorted."""
    by_band: dict[str, set] = {}
    for node, bands in members:
        for band in bands:
            by_band.setdefault(band, set()).add(node)
    return sorted({tuple(sorted(nodes)) for nodes in by_band.values() if len(nodes) > 1})
