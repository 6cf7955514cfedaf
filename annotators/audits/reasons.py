"""Reject reasons of the audit jobs, overlap and bias (shared ones: annotators.core.reasons.SHARED).

`REASONS` holds the codes only the audits give. `OVERLAP_REASONS` and `BIAS_REASONS` list
every code (shared or own) each job can write to rejects/, for its card; `JOB_REASONS` is
their union.
"""

REASONS: dict[str, str] = {
    "no_text_fields": "a reference record (JSON line or parquet row) holds none of the text fields read",
    "empty_split": "a task split the audit expects has no rows (its figures would silently be 0%)",
    "bad_placeholder": "a ClozeT story does not hold exactly one `<mask>`",
    "no_candidates": "a SenPos story holds no `[MASK]` candidate position",
    "bad_label": "the label is not a valid candidate index",
}

_READING = (
    "unreadable_file",
    "truncated_file",
    "line_too_long",
    "binary_file",
    "utf16",
    "encoding",
    "not_utf8",
    "malformed_json",
    "not_an_object",
    "missing_field",
    "bad_field_type",
    "unknown_split",
    "empty_split",
    "internal_error",
)

OVERLAP_REASONS: tuple[str, ...] = _READING + ("no_text_fields", "duplicate_id")

BIAS_REASONS: tuple[str, ...] = _READING + ("bad_placeholder", "no_candidates", "bad_label")

JOB_REASONS: tuple[str, ...] = tuple(sorted(set(OVERLAP_REASONS) | set(BIAS_REASONS)))
