"""Reject reasons only the lot job gives (shared ones: annotators.core.reasons.SHARED).

`JOB_REASONS` is every code `python -m pipelines.lot` can write to `rejects/`: the shared
codes its readers, parsers and dedup steps use, and the LOT rules' own codes below.
"""

REASONS: dict[str, str] = {
    # preparing stories (LOT section 3: cleaned Chinese stories split into sentences)
    "story_too_long": "ClozeT, PlotCom and OutGen take whole stories up to --max-story-chars (20,000) characters",
    "contains_placeholder": "the story contains a LOT mask marker (`<mask>`, `[MASK]` or `<MASK>`) or a "
    "LongLM sentinel the exports write (`<extra_id_1>`)",
    "html_markup": "the story contains an HTML tag or entity (clean it with pipelines.stories)",
    "too_few_sentences": "ClozeT and PlotCom need 3 sentences or more (OutGen and SenPos have their own rules)",
    # ClozeT annotations (LOT 3.1) and PlotCom training (LOT 3.3)
    "unknown_story": "the annotation names a story id that no kept story has",
    "first_sentence": "the annotation's right sentence is the story's first sentence",
    "index_out_of_range": "the annotation's right_index is not a sentence index of the story",
    "right_sentence_mismatch": "the annotation's `right` text differs from the story's sentence at right_index",
    "wrong_equals_right": "the wrong candidate is the right sentence itself",
    "wrong_length_ratio": "the wrong candidate is not 1/2 to 2 times the right sentence's length",
    "duplicate_annotation": "an earlier annotation gives the same story, right sentence and wrong candidate",
    "annotation_of_duplicate": "the annotation names a story removed as an exact duplicate, and the copy "
    "that keeps its text has an annotation of its own",
    "clozet_story": "a ClozeT story or a near-duplicate of one is held out of PlotCom training",
    "not_train_split": "the story's one split is val or test: PlotCom val/test come from ClozeT, not from here",
    # SenPos (LOT 3.2) and its human review
    "no_removable_sentence": "no window of the text under 500 words has 4+ sentences with a middle one of "
    ">= 10 Chinese characters to remove",
    "unknown_example": "the review names no SenPos val/test example of this build",
    "duplicate_review": "an earlier review of the same SenPos example counts",
    "not_reviewed": "a SenPos val/test example without a review (--senpos-reviewed-only)",
    "review_rejected": "the reviewer discarded the SenPos example (accept: false)",
    "review_pending": "a SenPos review task fed back with accept still null: nobody reviewed it, so the "
    "example stays unreviewed",
    "review_dropped_true_position": "the review drops the answer's own candidate position",
    "review_bad_position": "the review drops a candidate position that does not exist",
    # OutGen (LOT 3.4)
    "no_outline_phrases": "RAKE finds no outline phrase in the story (empty, punctuation or stop words only)",
    "no_usable_outline_phrase": "no outline phrase is a verbatim substring of the story of at most 8 words",
}

SHARED_USED = (
    "unreadable_file",
    "truncated_file",
    "line_too_long",
    "binary_file",
    "utf16",
    "undecodable",
    "blank_line",
    "malformed_json",
    "not_an_object",
    "missing_field",
    "bad_field_type",
    "duplicate_id",
    "exact_duplicate",
    "empty_after_cleaning",
    "not_chinese",
    "internal_error",
)

JOB_REASONS: tuple[str, ...] = SHARED_USED + tuple(REASONS)
