"""Reject reasons only the audits job gives (shared ones: annotators.core.reasons.SHARED)."""

REASONS: dict[str, str] = {
}
