"""Keep-first deduplication: of records that share a key, the earliest in input order stays.

Used after a GroupByKey on the duplicate key (text hash, id, game pid, edit id): the group
arrives in any order, so "earliest" is decided by a sort key (file name, line), never by
arrival. Returns the grouped-Stage shape `[(input_id, [record] | Drop), ...]`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from annotators.core.outcome import Drop


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
