"""OutGen (LOT section 3.4): title, outline of at most 8 RAKE phrases, story.

The outline comes from `annotators.lot.outline` (RAKE over the story's jieba tokens, cut once
when the story was prepared: `jieba.posseg` pairs for the default `posrake` method, HMM-off
tokens for `rake`), or from the input's own outline when `outline_from="input"` and the story
has one. A RAKE phrase's words are the tokens it was built from (at most 8, the extractor's
cut); an input phrase's words are its HMM-on jieba words. When the
input has an outline, agreement counts (shared phrases) are kept for the dataset card.
"""

from __future__ import annotations

import operator

from annotators.core.ids import stable_id
from annotators.core.outcome import Drop
from annotators.lot.records import AgreementCounts
from annotators.lot.story import PreparedStory
from annotators.text.tokenizers import get_tokenizer
from schemas.lot import OutGenExample

_WORD = operator.itemgetter(0)  # a (word, tag) pair's word


def _story_tokens(story: PreparedStory) -> list[tuple[str, ...]] | None:
    """The prepared story's HMM-off tokens as the extractor's one paragraph, if they cover it."""
    joined = story.joined
    if story.outline_tokens and "".join(story.outline_tokens) == joined and len(joined.splitlines()) == 1:
        return [story.outline_tokens]
    return None


def _story_tagged(story: PreparedStory) -> tuple[tuple[str, str], ...] | None:
    """The prepared story's `jieba.posseg` pairs, if they cover it."""
    if story.pos_tokens and "".join(map(_WORD, story.pos_tokens)) == story.joined:
        return story.pos_tokens
    return None


def outline_and_words(
    story: PreparedStory,
    *,
    seed: int,
    outline_from: str = "rake",
    max_words: int = 8,
    outline_method: str = "posrake",
    outline_fill: str = "longest",
    outline_opening: str = "last",
) -> tuple[tuple[tuple[str, tuple[str, ...]], ...], str] | Drop:
    """((phrase, its words) ..., source) of one story's outline, or Drop (`outline_fill`,
    `outline_opening`: OutlineConfig.fill and .opening_clause of the posrake method)."""
    from annotators.lot.outline import OutlineConfig, outline_with_words

    text = story.joined
    if outline_from == "input" and story.outline:
        jieba_words = get_tokenizer("jieba")
        pairs = tuple((p, tuple(jieba_words.tokens(p))) for p in dict.fromkeys(story.outline) if p)
        source = "input"
    else:
        config = OutlineConfig(method=outline_method, fill=outline_fill, opening_clause=outline_opening)
        if outline_method == "posrake":
            pairs = outline_with_words(
                text, seed=seed, story_id=story.story_id, config=config, tagged=_story_tagged(story)
            )
        else:
            pairs = outline_with_words(
                text, seed=seed, story_id=story.story_id, config=config, paragraph_tokens=_story_tokens(story)
            )
        source = "rake"
        if isinstance(pairs, Drop):
            return pairs
    pairs = tuple((p, w) for p, w in pairs if p in text and len(w) <= max_words)
    if not pairs:
        return Drop("no_usable_outline_phrase", f"no {source} phrase is a substring of <= {max_words} words")
    return pairs, source


def build_outgen(
    story: PreparedStory,
    split: str,
    *,
    seed: int,
    outline_from: str = "rake",
    max_words: int = 8,
    outline_method: str = "posrake",
    title_from: str = "none",
    outline_fill: str = "longest",
    outline_opening: str = "last",
) -> OutGenExample | Drop:
    built = build_outgen_with_words(
        story,
        split,
        seed=seed,
        outline_from=outline_from,
        max_words=max_words,
        outline_method=outline_method,
        title_from=title_from,
        outline_fill=outline_fill,
        outline_opening=outline_opening,
    )
    return built if isinstance(built, Drop) else built[0]


_TITLE_END = "。！？；…!?;.，,：:"


def title_of(story: PreparedStory, title_from: str = "none") -> tuple[str, tuple[str, ...], str]:
    """(title, its words, title_source) of an OutGen example. A story without a title keeps
    an empty one (`none`, the default: nothing is invented; the card counts these) or takes
    its first sentence without its closing punctuation (`first-sentence`; the story itself
    is left whole)."""
    if story.title:
        return story.title, story.title_words, "input"
    if title_from == "first-sentence" and story.sentences:
        title = story.sentences[0].strip().rstrip(_TITLE_END + "”’」』\"'").strip()
        if title:
            from annotators.text import zh_tokens

            return title, tuple(t for t in zh_tokens.load().lcut(title) if t.strip()), "first_sentence"
    return "", (), "none"


def build_outgen_with_words(
    story: PreparedStory,
    split: str,
    *,
    seed: int,
    outline_from: str = "rake",
    max_words: int = 8,
    outline_method: str = "posrake",
    title_from: str = "none",
    outline_fill: str = "longest",
    outline_opening: str = "last",
) -> tuple[OutGenExample, tuple[tuple[str, ...], ...], tuple[str, ...]] | Drop:
    """(the example, each outline phrase's words, the title's words) or Drop."""
    outline = outline_and_words(
        story,
        seed=seed,
        outline_from=outline_from,
        max_words=max_words,
        outline_method=outline_method,
        outline_fill=outline_fill,
        outline_opening=outline_opening,
    )
    if isinstance(outline, Drop):
        return outline
    pairs, source = outline
    title, title_words, title_source = title_of(story, title_from)
    ex = OutGenExample(
        stable_id("outgen", story.story_id),
        story.story_id,
        split,
        title,
        tuple(p for p, _ in pairs),
        story.joined,
        source,
        title_source,
    )
    return ex, tuple(w for _, w in pairs), title_words


def agreement_counts(predicted: tuple[str, ...], official: tuple[str, ...] | None) -> AgreementCounts:
    """Distinct phrases (shared, predicted, official) for micro precision/recall/F1."""
    if not official:
        return AgreementCounts(0, 0, 0)
    pred, gold = set(predicted), set(official)
    return AgreementCounts(len(pred & gold), len(pred), len(gold))
