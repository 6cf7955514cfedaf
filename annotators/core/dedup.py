"""Keep-first deduplication: of records that share a key, the earliest in input order stays.

Used after a GroupByKey on the duplicate key (text hash, id, game pid, edit id): the group
arrives in any order, so "earliest" is decided by a sort key (file name, line), never by
arrival. Returns the grouped-Stage shape `[(input_id, [record] | Drop), ...]`.

A repeated id (two different records given one id) is found without shuffling the records:
only (id, order) entries travel, partitioned by `id_part` (pipelines.engine.repeated_ids),
`repeated_id_pairs` names every record whose id an earlier one has, and `keeper_of` looks a
record up in that side input; the job makes it a `duplicate_id` reject.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from annotators.core.outcome import Drop


def input_order(input_id: str) -> tuple:
    """Sort key for "file:line" ids: file name, then line number as a number."""
    name, _, line = input_id.rpartition(":")
    return (name, int(line)) if line.isdigit() else (input_id, -1)


def keep_first(
    group: Iterable[Any],
    *,
    order: Callable[[Any], Any],
    input_id: Callable[[Any], str],
    reason: str,
    detail: Callable[[Any], str] | None = None,
) -> list[tuple[str, Any]]:
    """The earliest record by `order` is kept; each later one is `Drop(reason, detail(kept))`."""
    ordered = sorted(group, key=order)
    if not ordered:
        return []
    first = ordered[0]
    why = detail(first) if detail else f"same as {input_id(first)}"
    return [(input_id(first), [first])] + [(input_id(r), Drop(reason, why)) for r in ordered[1:]]


ID_PARTS = 64  # partitions of the ids: what the repeated-id shuffle is keyed by


def id_part(record_id: str, parts: int = ID_PARTS) -> int:
    """The partition of an id (a stable digest, never `hash()`): equal ids share it."""
    return int.from_bytes(hashlib.blake2b(record_id.encode("utf-8"), digest_size=4).digest(), "big") % parts


def repeated_id_pairs(group: tuple[int, Iterable[bytes]]) -> list[tuple[tuple, str]]:
    """Of one partition of ids (packed blocks of (id, order) entries, `order` a sortable tuple
    ending in the record's input id and a key telling apart records of one input id, a text
    hash or ""): ((input_id, key), the input id that keeps the id) for every record whose id
    an earlier one has in `order`, and ((input_id,), "") beside each, so a record not named
    costs one look-up before its key is made (`keeper_of`)."""
    _, blobs = group
    by_id: dict[str, list[tuple]] = {}
    for blob in blobs:
        for record_id, order in pickle.loads(blob):
            by_id.setdefault(record_id, []).append(order)
    out: list[tuple[tuple, str]] = []
    for record_id in sorted(by_id):
        orders = sorted(set(by_id[record_id]))
        first = orders[0][-2]
        for order in orders[1:]:
            input_id, key = order[-2:]
            out += [((input_id, key), first), ((input_id,), "")]
    return out


def keeper_of(repeated: Mapping, input_id: str, key: Callable[[], str]) -> str | None:
    """The input id that keeps the id of the record at `input_id` (`repeated_id_pairs`), or
    None when the record keeps its own; `key()` is made only for a record named there."""
    if (input_id,) not in repeated:
        return None
    return repeated.get((input_id, key()))
