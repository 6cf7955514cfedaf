"""Reject reasons only the glge job gives (shared ones: annotators.core.reasons.SHARED)."""

REASONS: dict[str, str] = {
}
