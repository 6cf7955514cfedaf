"""The one word count behind every length limit of the Chinese jobs.

A word is a jieba token (precise mode, HMM on) holding at least one letter, digit or Han
character; punctuation and whitespace tokens are not words. `pipelines.stories` (its
`--paper-length-filter`, LOT's 50-500-word stories) and `pipelines.lot` (SenPos windows
"with less than 500 words", LOT section 3.2) both count this way, so a story the stories
job keeps as under 500 words is under 500 words for SenPos too. (LOT Table 3's averages are
a separate, descriptive statistic: annotators.lot.stats.)
"""
from __future__ import annotations

import threading
from typing import Iterable, Sequence


def is_word(token: str) -> bool:
    """Whether a jieba token counts as a word (a letter, digit or Han character in it)."""
    return any(ch.isalnum() for ch in token)


def count_words(tokens: Iterable[str]) -> int:
    """Words among already cut jieba tokens (most start with a letter, digit or Han
    character, so the full check runs on the rest only)."""
    return sum(1 for t in tokens if t and (t[0].isalnum() or is_word(t)))


# tokens whose word-ness the native count must agree on: letters, Han, every kind of
# digit and numeral (decimal, superscript, fullwidth, Roman, CJK), punctuation, symbols,
# whitespace, combining marks and the empty token
_CANARY_TOKENS = ("", "a", "Z", "我们", "3", "３", "²", "½", "Ⅻ", "〇", "一", "٣", "，", "。", " ", "\n", "\u3000",
                  "-", "_", "%", "©", "😀", "\u0301", "a\u0301", "!a", "..3", "ǅ", "ß", "\U0001d7d8", "\x00")
_NATIVE: list = []  # [the C word_counts, or None], decided on first use
_NATIVE_LOCK = threading.Lock()


def _checked_native():
    from annotators.text.zh_tokens import native_function

    fn = native_function("word_counts")
    if fn is None:
        return None
    cases = [[t] for t in _CANARY_TOKENS] + [list(_CANARY_TOKENS), [], ("一个", "，", "x")]
    cases += [[chr(c)] for c in range(0, 0x3400, 7)]
    try:
        same = fn(cases) == [count_words(c) for c in cases]
    except Exception:  # a native failure is a difference, never a crash
        same = False
    if not same:
        import warnings

        warnings.warn("the native word counts differ from the Python ones; using Python", RuntimeWarning)
        return None
    return fn


def word_counts(sentences: Sequence[Sequence[str]]) -> list[int]:
    """`count_words` of each token sequence, from the native module (annotators.text._zhcut)
    once it counts a fixed set of tokens exactly as `count_words` does (not built,
    STORYBENCH_ZH_NATIVE=0 or a difference: the Python code)."""
    if not _NATIVE:
        with _NATIVE_LOCK:
            if not _NATIVE:
                _NATIVE.append(_checked_native())
    fn = _NATIVE[0]
    return fn(sentences) if fn is not None else [count_words(s) for s in sentences]


def zh_word_count(text: str) -> int:
    """Words of a text, cut with jieba (HMM on) through the shared tokenizer interface."""
    from annotators.text.tokenizers import get_tokenizer

    return word_counts([get_tokenizer("jieba").tokens(text)])[0]
