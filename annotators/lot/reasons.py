"""Reject reasons only the lot job gives (shared ones: annotators.core.reasons.SHARED)."""

REASONS: dict[str, str] = {
}
