"""Typed records that travel between the LOT job's steps (instead of positional tuples).

A builder step emits `TaskRow`s (task name, parquet row, Table 3 stats); SenPos keeps its
example object until reviews are applied (`SenPosOutput`); OutGen also carries the
agreement counts of its outline with the input's own outline (`OutGenOutput`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from annotators.lot.story import PreparedStory
from schemas.lot import SenPosExample


class TaskRow(NamedTuple):
    """One example of a LOT task: its table row and its per-example Table 3 numbers."""

    task: str  # "clozet", "senpos", "plotcom" or "outgen"
    row: dict[str, Any]  # the parquet row (schemas.lot)
    stats: dict[str, Any]  # annotators.lot.stats.example_stats


class AgreementCounts(NamedTuple):
    """Distinct outline phrases of one story: shared with, built by, and given by the input."""

    shared: int
    predicted: int
    official: int


class OutGenOutput(NamedTuple):
    """An OutGen example and how its outline agrees with the input's outline (card section)."""

    task_row: TaskRow
    agreement: AgreementCounts


class SenPosOutput(NamedTuple):
    """A SenPos example (before or after review) and its Table 3 numbers."""

    example: SenPosExample
    stats: dict[str, Any]

    def as_task_row(self) -> TaskRow:
        return TaskRow("senpos", self.example.to_row(), self.stats)


class SenPosBuilt(NamedTuple):
    """What `build_senpos` returns per example: the text it came from, the removed sentence's
    index in it and the window's [start, end) sentence range."""

    example: SenPosExample
    story: PreparedStory
    removed_index: int
    window: tuple[int, int] = (0, 0)


class ReviewRecord(NamedTuple):
    """A parsed SenPos review and the input line it came from."""

    input_id: str
    review: dict[str, Any]
