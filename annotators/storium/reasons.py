"""Reject reasons only the storium job gives (shared ones: annotators.core.reasons.SHARED)."""

REASONS: dict[str, str] = {
}
