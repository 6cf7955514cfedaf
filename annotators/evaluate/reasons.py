"""Reject reasons only the evaluate job gives (shared ones: annotators.core.reasons.SHARED).

`JOB_REASONS` is every code `python -m pipelines.evaluate` can write to `rejects/`.
"""

REASONS: dict[str, str] = {
    "missing_prediction": "a gold example has no prediction (no line at its position, or no prediction with its id)",
    "unexpected_prediction": (
        "a prediction matches no gold example (a line past the gold's end, or an id the gold does not have)"
    ),
    "skipped_by_official_scorer": (
        "the official GLGE scorer leaves this example out (an empty target; for files2rouge also an empty "
        "prediction, which its -ir/-is flags skip); the metrics follow it"
    ),
    "missing_source": "a GLGE gold line has no --source line at its position",
    "unexpected_source": "a --source line has no gold line at its position",
    "score_count_mismatch": (
        "a ChapterBreak prediction's scores are not one per candidate (gold first, then each negative)"
    ),
}

SHARED_USED = (
    "unreadable_file",
    "truncated_file",
    "line_too_long",
    "not_utf8",
    "blank_line",
    "malformed_json",
    "not_an_object",
    "missing_field",
    "bad_field_type",
    "duplicate_id",
    "over_size_limit",
    "internal_error",
)

JOB_REASONS: tuple[str, ...] = SHARED_USED + tuple(REASONS)
