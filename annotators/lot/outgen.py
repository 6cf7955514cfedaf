"""OutGen (LOT section 3.4): title, outline of at most 8 RAKE phrases, story.

The outline comes from `annotators.lot.outline.extract_outline` (RAKE over jieba words), or
from the input's own outline when `outline_from="input"` and the story has one. When the
input has an outline, agreement counts (shared phrases) are kept for the dataset card.
"""
from __future__ import annotations

from annotators.core.ids import stable_id
from annotators.lot.records import AgreementCounts
from annotators.lot.story import PreparedStory
from annotators.text.tokenizers import get_tokenizer
from annotators.core.outcome import Drop
from schemas.lot import OutGenExample


def build_outgen(story: PreparedStory, split: str, *, seed: int, outline_from: str = "rake",
                 max_words: int = 8) -> OutGenExample | Drop:
    from annotators.lot.outline import extract_outline

    text = story.joined
    if outline_from == "input" and story.outline:
        phrases, source = tuple(dict.fromkeys(story.outline)), "input"
    else:
        phrases, source = extract_outline(text, seed=seed, story_id=story.story_id), "rake"
        if isinstance(phrases, Drop):
            return phrases
    # The contract counts words with default jieba (HMM on); the extractor cuts with HMM off.
    phrases = tuple(p for p in phrases if p and p in text and get_tokenizer("jieba").count(p) <= max_words)
    if not phrases:
        return Drop("no_usable_outline_phrase", f"no {source} phrase is a substring of <= {max_words} words")
    return OutGenExample(stable_id("outgen", story.story_id), story.story_id, split, story.title,
                         tuple(phrases), text, source)


def agreement_counts(predicted: tuple[str, ...], official: tuple[str, ...] | None) -> AgreementCounts:
    """Distinct phrases (shared, predicted, official) for micro precision/recall/F1."""
    if not official:
        return AgreementCounts(0, 0, 0)
    pred, gold = set(predicted), set(official)
    return AgreementCounts(len(pred & gold), len(pred), len(gold))
