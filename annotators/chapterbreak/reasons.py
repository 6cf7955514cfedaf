"""Reject reasons only the chapterbreak job gives (shared ones: annotators.core.reasons.SHARED)."""

REASONS: dict[str, str] = {
}
