"""Reject reasons only the stories job gives (shared ones: annotators.core.reasons.SHARED)."""

REASONS: dict[str, str] = {
}
