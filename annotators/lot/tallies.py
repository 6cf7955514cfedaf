"""What the LOT job adds up about the examples it wrote, as folds (plain Python; the job runs
them through pipelines.engine.folds): `Summary` (LOT Table 3 per (task, split), the count of
each title source, the outline agreement sums), `LeakSum` (leak reports of the
near-duplicate groups summed) and `OfficialTable3` (Table 3 of the official OutGen lines).

A fold has `create()`, `add(acc, item)`, `merge(accs)` and `result(acc)`; `leak_entry` and
`band_entries` give the (partition, value) pairs the job gathers per bundle before a shuffle.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from annotators.core.lsh_sets import band_part
from annotators.lot import splits
from annotators.lot.records import AgreementCounts, OutGenOutput, TaskRow
from annotators.lot.stats import Table3Accumulator
from annotators.lot.steps import KeyBands, agreement_from_sums, table3
from schemas.lot import TASKS


def task_row_of(item: TaskRow | OutGenOutput) -> TaskRow:
    """The TaskRow of a producer's element: itself, or the one an OutGenOutput holds."""
    return item.task_row if isinstance(item, OutGenOutput) else item


def table_row(item: TaskRow | OutGenOutput) -> tuple[tuple[str, dict], ...]:
    """The (table, row) a producer's element writes (WriteTables' `rows_of`)."""
    row = task_row_of(item)
    return ((row.task, row.row),)


@dataclass
class AgreementSums:
    """Outline agreement summed over OutGen examples (AgreementCounts), and the stories that
    came with an input outline."""

    shared: int = 0
    predicted: int = 0
    official: int = 0
    stories: int = 0

    def add(self, counts: AgreementCounts) -> None:
        self.shared += counts.shared
        self.predicted += counts.predicted
        self.official += counts.official
        self.stories += 1 if counts.official else 0

    def merged(self, other: AgreementSums) -> AgreementSums:
        return AgreementSums(
            self.shared + other.shared,
            self.predicted + other.predicted,
            self.official + other.official,
            self.stories + other.stories,
        )

    def result(self) -> dict:
        return agreement_from_sums(self.shared, self.predicted, self.official, self.stories)


@dataclass
class SummaryAcc:
    """The Summary fold's accumulator."""

    table3: dict = field(default_factory=dict)  # (task, split) -> Table3Accumulator
    titles: dict = field(default_factory=dict)  # title source -> OutGen examples
    agreement: AgreementSums = field(default_factory=AgreementSums)


class Summary:
    """The job's summaries of its written examples (TaskRows; OutGenOutputs for OutGen): LOT
    Table 3 per (task, split) from the rows' stats; from the OutGenOutputs also the outline
    agreement sums and the count of each title source."""

    def create(self) -> SummaryAcc:
        return SummaryAcc()

    def add(self, acc: SummaryAcc, item: TaskRow | OutGenOutput) -> SummaryAcc:
        if isinstance(item, OutGenOutput):
            acc.agreement.add(item.agreement)
            source = item.task_row.row["title_source"]
            acc.titles[source] = acc.titles.get(source, 0) + 1
        row = task_row_of(item)
        key = (row.task, row.row["split"])
        part = acc.table3.get(key)
        if part is None:
            part = acc.table3[key] = Table3Accumulator()
        part.add(row.stats)
        return acc

    def merge(self, accs: Iterable[SummaryAcc]) -> SummaryAcc:
        out = self.create()
        for acc in accs:
            for key, part in acc.table3.items():
                if key in out.table3:
                    out.table3[key].merge(part)
                else:
                    out.table3[key] = part
            for source, n in acc.titles.items():
                out.titles[source] = out.titles.get(source, 0) + n
            out.agreement = out.agreement.merged(acc.agreement)
        return out

    def result(self, acc: SummaryAcc) -> dict:
        return {
            "table3": table3(acc.table3.items(), TASKS),
            "outgen_titles": dict(sorted(acc.titles.items())),
            "outline_agreement": acc.agreement.result(),
        }


class LeakTriple(NamedTuple):
    """One written example, as the leak check reads it."""

    task: str
    story_id: str
    split: str


LEAK_PARTS = 64  # partitions of the leak keys: what the leak check's shuffle is keyed by


def leak_part(key: str, parts: int = LEAK_PARTS) -> int:
    """The partition of a leak key (CRC-32 of its UTF-8, the same in every process)."""
    return zlib.crc32(key.encode("utf-8")) % parts


def leak_entry(item: TaskRow | OutGenOutput, groups) -> list[tuple[int, tuple[str, LeakTriple]]]:
    """(partition, (leak key, LeakTriple)) of one written example: the key is its
    near-duplicate group's cluster id, or its story id (splits.group_key); the partition
    is `leak_part(key)`, so a key's triples all meet in one partition."""
    row = task_row_of(item)
    story_id = row.row["story_id"]
    key = splits.group_key(story_id, groups)
    return [(leak_part(key), (key, LeakTriple(row.task, story_id, row.row["split"])))]


def leak_entries(items: Iterable[TaskRow | OutGenOutput], groups) -> list[tuple[int, tuple[str, LeakTriple]]]:
    """`leak_entry` of every written example of a block, in order."""
    return [entry for item in items for entry in leak_entry(item, groups)]


def partition_leaks(gathered: tuple[int, list[tuple[str, LeakTriple]]], groups) -> dict | None:
    """The leak reports of every leak key of one partition, summed (splits.summed_leaks; None
    for no key): a report per partition crosses the job, not one per story."""
    return splits.summed_leaks(gathered[1], groups)


def band_entries(key_bands: KeyBands) -> list[tuple[int, tuple[str, str]]]:
    """(band partition, (band, input id)) of every LSH band key of one parsed story."""
    input_id = key_bands.key.input_id
    return [(band_part(band), (band, input_id)) for band in key_bands.bands]


class LeakSum:
    """Leak reports (splits.group_leaks) summed; the empty report when there are none."""

    def create(self) -> dict | None:
        return None

    def add(self, acc: dict | None, leaks: dict | None) -> dict | None:
        return splits.add_leaks(acc, leaks) if leaks else acc

    def merge(self, accs: Iterable[dict | None]) -> dict | None:
        out = None
        for acc in accs:
            if acc:
                out = splits.add_leaks(out, acc)
        return out

    def result(self, acc: dict | None) -> dict:
        return acc or splits.group_leaks("", [], False)


class OfficialTable3:
    """Official OutGen lines' Table 3 numbers -> {"outgen": Table 3 column -> value} ({} if none)."""

    def create(self) -> Table3Accumulator:
        return Table3Accumulator()

    def add(self, acc: Table3Accumulator, stats: dict[str, Any]) -> Table3Accumulator:
        return acc.add(stats)

    def merge(self, accs: Iterable[Table3Accumulator]) -> Table3Accumulator:
        out = Table3Accumulator()
        for acc in accs:
            out.merge(acc)
        return out

    def result(self, acc: Table3Accumulator) -> dict:
        return {"outgen": acc.result("outgen")} if acc.n else {}


# What the summary and the leak report stand for when nothing was written.
EMPTY_SUMMARY = Summary().result(Summary().create())
EMPTY_LEAKS = LeakSum().result(None)
