"""The one word count behind every length limit of the Chinese jobs.

A word is a jieba token (precise mode, HMM on) holding at least one letter, digit or Han
character; punctuation and whitespace tokens are not words. `pipelines.stories` (its
`--paper-length-filter`, LOT's 50-500-word stories) and `pipelines.lot` (SenPos windows
"with less than 500 words", LOT section 3.2) both count this way, so a story the stories
job keeps as under 500 words is under 500 words for SenPos too. (LOT Table 3's averages are
a separate, descriptive statistic: annotators.lot.stats.)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from itertools import filterfalse


def is_word(token: str) -> bool:
    """Whether a jieba token counts as a word (a letter, digit or Han character in it)."""
    return any(ch.isalnum() for ch in token)


def count_words(tokens: Iterable[str]) -> int:
    """Words among already cut jieba tokens (most start with a letter, digit or Han
    character, so the full check runs on the rest only)."""
    return sum(1 for t in tokens if t and (t[0].isalnum() or is_word(t)))


# a letter, digit or other alphanumeric character: re's \w is str.isalnum() or "_" (a test
# checks every code point)
_HAS_ALNUM = re.compile(r"[^\W_]").search


def word_counts(sentences: Sequence[Sequence[str]]) -> list[int]:
    """`count_words` of each token sequence, about 3x faster: tokens that are all letters,
    digits or Han characters (most) are words; the regex looks only at the rest."""
    return [len(tokens) - len(list(filterfalse(_HAS_ALNUM, filterfalse(str.isalnum, tokens)))) for tokens in sentences]


def zh_word_count(text: str) -> int:
    """Words of a text, cut with jieba (HMM on) through the shared tokenizer interface."""
    from annotators.text.tokenizers import get_tokenizer

    return word_counts([get_tokenizer("jieba").tokens(text)])[0]
