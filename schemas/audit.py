"""Tables the audit jobs write: 8-gram overlap (LOT Table 14) and bias baselines (Table 13)."""

from __future__ import annotations

import pyarrow as pa

from schemas.common import with_version

OVERLAP_EXAMPLES_SCHEMA = with_version(
    pa.schema(
        [
            pa.field("task", pa.string(), nullable=False),
            pa.field("split", pa.string(), nullable=False),
            pa.field("example_id", pa.string(), nullable=False),
            pa.field("n", pa.int64(), nullable=False),  # 8-grams of the example (with multiplicity)
            pa.field("o", pa.int64(), nullable=False),  # of those, found in the reference
            pa.field("ratio", pa.float64(), nullable=False),  # o / n, 0 when n = 0
        ]
    ),
    "overlap_examples",
)

OVERLAP_SUMMARY_SCHEMA = with_version(
    pa.schema(
        [
            pa.field("task", pa.string(), nullable=False),
            pa.field("split", pa.string(), nullable=False),
            pa.field("reference", pa.string(), nullable=False),
            pa.field("n_examples", pa.int64(), nullable=False),
            pa.field("ratio", pa.float64(), nullable=False),  # Table 14 "Percent" / 100
            pa.field("ngrams", pa.int64(), nullable=False),  # "# 8-grams"
            pa.field("examples", pa.int64(), nullable=False),  # "# Exam"
            pa.field("examples_over_10pct", pa.int64(), nullable=False),  # "# Exam >10%"
            pa.field("max_ratio", pa.float64(), nullable=False),  # "Max Percent" / 100
            pa.field("total_ngrams", pa.int64(), nullable=False),  # sum n (the Percent denominator)
        ]
    ),
    "overlap_summary",
)

OVER_THRESHOLD_SCHEMA = with_version(
    pa.schema(
        [
            pa.field("task", pa.string(), nullable=False),
            pa.field("split", pa.string(), nullable=False),
            pa.field("example_id", pa.string(), nullable=False),
            pa.field("ratio", pa.float64(), nullable=False),
        ]
    ),
    "overlap_over_10pct",
)

BIAS_BASELINES = ("random", "majority", "length", "bleu1", "bleu2", "sentiment", "discourse_markers", "candidate_only")

BIAS_SUMMARY_SCHEMA = with_version(
    pa.schema(
        [
            pa.field("task", pa.string(), nullable=False),
            pa.field("split", pa.string(), nullable=False),
            pa.field("baseline", pa.string(), nullable=False),
            pa.field("accuracy", pa.float64(), nullable=False),  # Table 13 value / 100
            pa.field("n", pa.int64(), nullable=False),
        ]
    ),
    "bias_summary",
)

BIAS_PREDICTIONS_SCHEMA = with_version(
    pa.schema(
        [
            pa.field("task", pa.string(), nullable=False),
            pa.field("split", pa.string(), nullable=False),
            pa.field("example_id", pa.string(), nullable=False),
            pa.field("baseline", pa.string(), nullable=False),
            pa.field("prediction", pa.int64(), nullable=False),  # 0-based candidate; -1 for random
            pa.field("gold", pa.int64(), nullable=False),  # 0-based candidate
            pa.field("n_candidates", pa.int64(), nullable=False),
            pa.field("credit", pa.float64(), nullable=False),  # 1/0; random: 1/n_candidates
        ]
    ),
    "bias_predictions",
)
