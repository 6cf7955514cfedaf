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


# Bounds on `zh_word_count` from jieba's HMM-off cut (rjieba's, native), for length filters
# that need the HMM-on count only near a limit. In jieba 0.42.1's precise cut both modes walk
# the same route through each block of `re_han_default`'s characters (every other character
# is a token of its own): a route word of two or more characters is a token in both modes;
# HMM off joins runs of single ASCII letters and digits, HMM on re-cuts each run of
# single-character steps (finalseg, or one token per character) into at least one token. So
# with HMM on, every HMM-off token of two or more characters holding a Han character is a
# word, and every run of other tokens between them (a run ends at a character outside the
# blocks) that holds a letter, digit or Han character holds at least one word.
# The HMM-off tokens joined by "\x00": a token of two or more characters holding a Han
# character (a route word) becomes "\x01"; what is left of a run starts after a "\x01" or a
# character outside the blocks and holds word, block punctuation and "\x00" characters.
_HAN_WORD = re.compile("(?<![^\x00])(?=[^\x00]{2})[^\x00\u4e00-\u9fd5]*[\u4e00-\u9fd5][^\x00]*")
_RUN_WITH_WORD = re.compile(r"(?<![\w\x00+#&.%\-])[\x00+#&.%\-_]*+[^\W_][\w\x00+#&.%\-]*+")
_ALNUM = re.compile(r"[^\W_]")


def fewest_words(off_tokens: Iterable[str]) -> int:
    """The fewest words the HMM-on cut of a text can hold, given its HMM-off tokens
    (whitespace tokens may be left out): its route words holding a Han character, plus its
    runs of other tokens that hold a letter, digit or Han character (regular expressions
    over the joined tokens; a run ends at a route word or at a character outside the blocks)."""
    marked, route_words = _HAN_WORD.subn("\x01", "\x00".join(off_tokens))
    return route_words + len(_RUN_WITH_WORD.findall(marked))


# Characters outside jieba's blocks that are neither word characters nor whitespace: each is a
# token of its own in either mode, so jieba cuts a text split right after one as it cuts the
# two parts apart, and the text's words are the parts' words added up.
_SEPARATOR = re.compile("[。！？；，]")


def separable_prefix(text: str, at_least: int) -> str | None:
    """The shortest prefix of `text` of at least `at_least` characters that ends right after a
    separator (so `zh_word_count(prefix) <= zh_word_count(text)`), or None when there is none
    short of the whole text."""
    found = _SEPARATOR.search(text, max(0, at_least - 1))
    return text[: found.end()] if found and found.end() < len(text) else None


def zh_fewest_words(text: str) -> int:
    """`zh_word_range(text)[0]`: the fewest words the HMM-on cut can hold."""
    from annotators.text.tokenizers import get_tokenizer

    return fewest_words(get_tokenizer("jieba_nohmm").tokens(text))


def zh_most_words(text: str) -> int:
    """`zh_word_range(text)[1]`: its letters, digits and Han characters (no cut)."""
    return len(_ALNUM.findall(text))


def zh_word_range(text: str) -> tuple[int, int]:
    """(fewest, most) words `zh_word_count(text)` can be: `fewest_words` of the HMM-off cut,
    and the letters, digits and Han characters of the text (no two words share one). A
    length filter needs the HMM-on cut only when the range straddles a limit."""
    return zh_fewest_words(text), zh_most_words(text)
