"""Reject reasons of the storium and edits jobs (shared ones: annotators.core.reasons.SHARED).

`REASONS` holds the codes only these jobs give, one failure each. `STORIUM_REASONS` and
`EDITS_REASONS` list every code (shared or own) each job can write to rejects/, for its
card; `JOB_REASONS` is their union.
"""

REASONS: dict[str, str] = {
    "no_characters": "the STORIUM game has no `characters` list, or the list is empty",
    "no_usable_character": "no character of the STORIUM game has a `character_seq_id`",
    "no_scenes": "the STORIUM game has no `scenes` list, or the list is empty",
    "unknown_character": "a STORIUM entry's role (or character_seq_id) names a character the game "
    "does not have among its usable characters",
    "budget_below_segments": "the packed example has more non-empty segments than budget tokens "
    "(every segment needs at least one token)",
    "unalignable_tokens": "the edit's USER tokens cannot be mapped back to character spans "
    "(a case-folding oddity), so its preserved text is not analysed",
    "empty_text": "the edit's generated and published texts are both empty or only spaces: nothing to score",
}

_READING = (
    "empty_file",
    "truncated_file",
    "line_too_long",
    "malformed_json",
    "utf16",
    "encoding",
    "binary_file",
    "not_utf8",
    "not_an_object",
    "missing_field",
    "bad_field_type",
    "duplicate_id",
    "internal_error",
)

STORIUM_REASONS: tuple[str, ...] = _READING + (
    "no_characters",
    "no_usable_character",
    "no_scenes",
    "unknown_character",
    "budget_below_segments",
)

EDITS_REASONS: tuple[str, ...] = tuple(c for c in _READING if c != "empty_file") + (
    "blank_line",
    "empty_text",
    "unalignable_tokens",
    "over_size_limit",
)

JOB_REASONS: tuple[str, ...] = tuple(sorted(set(STORIUM_REASONS) | set(EDITS_REASONS)))
