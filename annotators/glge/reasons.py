"""Reject reasons the glge job gives (shared ones: annotators.core.reasons.SHARED).

A task is loaded whole (GLGE paper section 2.4 scores train targets against *all* test
targets), so every reason below rejects one whole task in the `load` stage.
"""

REASONS: dict[str, str] = {
    "missing_split": "a split the task needs is absent: a GLGE `{split}.{src,tgt}` file is not "
    "found, or a LOT table has no rows of that split",
    "missing_table": "the LOT table a task is built from (`plotcom/` or `outgen/`) has no parquet files",
    "line_count_mismatch": "a split's src and tgt files have different numbers of lines",
}

# Every code the glge job can write to rejects/ (shared or its own).
JOB_REASONS: tuple[str, ...] = (
    "bad_field_type",
    "empty_file",
    "internal_error",
    "line_count_mismatch",
    "missing_field",
    "missing_split",
    "missing_table",
    "not_a_file",
    "not_utf8",
    "unknown_split",
    "unreadable_file",
)
