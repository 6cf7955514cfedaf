"""The one word count behind every length limit of the Chinese jobs.

A word is a jieba token (precise mode, HMM on) holding at least one letter, digit or Han
character; punctuation and whitespace tokens are not words. `pipelines.stories` (its
`--paper-length-filter`, LOT's 50-500-word stories) and `pipelines.lot` (SenPos windows
"with less than 500 words", LOT section 3.2) both count this way, so a story the stories
job keeps as under 500 words is under 500 words for SenPos too. (LOT Table 3's averages are
a separate, descriptive statistic: annotators.lot.stats.)
"""
from __future__ import annotations

from typing import Iterable


def is_word(token: str) -> bool:
    """Whether a jieba token counts as a word (a letter, digit or Han character in it)."""
    return any(ch.isalnum() for ch in token)


def count_words(tokens: Iterable[str]) -> int:
    """Words among already cut jieba tokens (most start with a letter, digit or Han
    character, so the full check runs on the rest only)."""
    return sum(1 for t in tokens if t and (t[0].isalnum() or is_word(t)))


def zh_word_count(text: str) -> int:
    """Words of a text, cut with jieba (HMM on) through the shared tokenizer interface."""
    from annotators.text.tokenizers import get_tokenizer

    return count_words(get_tokenizer("jieba").tokens(text))
