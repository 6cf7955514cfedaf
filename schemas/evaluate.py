"""Tables of the evaluate job (issue 16): corpus metrics and per-example scores."""

from __future__ import annotations

from typing import Any, NamedTuple

import pyarrow as pa

from schemas.common import with_version

METRICS_SCHEMA = with_version(
    pa.schema(
        [
            pa.field("task", pa.string(), nullable=False),
            pa.field("compat", pa.string(), nullable=False),
            pa.field("group", pa.string(), nullable=False),  # "all", "source=pg19", "prefix_length=512", ...
            pa.field("metric", pa.string(), nullable=False),
            pa.field("value", pa.float64(), nullable=True),  # null: nothing to compute it over
            pa.field("n", pa.int64(), nullable=False),  # examples (or phrases for coverage) it averages
        ]
    ),
    "evaluate_metrics",
)

SCORES_SCHEMA = with_version(
    pa.schema(
        [
            pa.field("task", pa.string(), nullable=False),
            pa.field("key", pa.string(), nullable=False),  # the line number or id that aligned the pair
            pa.field("example_id", pa.string(), nullable=False),
            pa.field("prediction_input_id", pa.string(), nullable=False),
            pa.field("gold_input_id", pa.string(), nullable=False),
            pa.field("metric", pa.string(), nullable=False),
            pa.field("value", pa.float64(), nullable=True),
        ]
    ),
    "evaluate_scores",
)


class Prediction(NamedTuple):
    key: str
    input_id: str
    record: dict


class Gold(NamedTuple):
    key: str
    input_id: str
    example_id: str
    record: dict


class Pair(NamedTuple):
    key: str
    example_id: str
    prediction_input_id: str
    gold_input_id: str
    prediction: dict
    gold: dict


class ExampleScore(NamedTuple):
    """One example's scores (`values`), the groups it counts in, and what corpus metrics need
    (`grams`: per n the candidate's n-grams for distinct; `coverage`: its phrase values)."""

    task: str
    key: str
    example_id: str
    prediction_input_id: str
    gold_input_id: str
    values: dict
    groups: tuple = ("all",)
    grams: Any = None
    coverage: tuple = ()

    def rows(self) -> list[dict]:
        return [
            {
                "task": self.task,
                "key": self.key,
                "example_id": self.example_id,
                "prediction_input_id": self.prediction_input_id,
                "gold_input_id": self.gold_input_id,
                "metric": metric,
                "value": value,
            }
            for metric, value in sorted(self.values.items())
        ]
