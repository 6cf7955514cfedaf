"""Han and word counts (zh_clean.han_count, words.word_counts) equal their plain references on
every code point and on random texts and token lists."""

from __future__ import annotations

import json

import pytest
from conftest import shared_path
from hypothesis import given, settings
from hypothesis import strategies as st

from annotators.text import words, zh_clean

EVERY_CHARACTER = "".join(map(chr, range(0x110000)))  # lone surrogates included

CHARS = st.one_of(
    st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF),
    st.characters(min_codepoint=0x3400, max_codepoint=0x4DFF),  # extension A and the hexagrams after it
    st.characters(min_codepoint=0xF8F0, max_codepoint=0xFB10),
    st.characters(min_codepoint=0x20, max_codepoint=0x7E),
    st.characters(min_codepoint=0x1F300, max_codepoint=0x1FAFF),
    st.characters(min_codepoint=0x20000, max_codepoint=0x20100),
    st.characters(min_codepoint=0x2A6D0, max_codepoint=0x2A710),  # extension B's end, C's start
    st.characters(min_codepoint=0x2EE50, max_codepoint=0x2F810),  # extension I's end, compatibility
    st.characters(min_codepoint=0x2FA10, max_codepoint=0x30010),
    st.characters(min_codepoint=0x323A0, max_codepoint=0x323C0),  # extension H's end
    st.sampled_from(
        [" ", "\t", "\n", "\u3000", "\u00a0", "\x00", "\ud800", "\udfff", "，", "。", "²", "Ⅻ", "〇", "_", "é"]
    ),
)


# The Unicode Han ranges, each (first, last) counted and its neighbours not: the Unified
# Ideographs, Extension A, the compatibility ideographs, Extensions B, C-F and I (one run),
# the compatibility supplement, Extensions G-H.
HAN_RANGES = [
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0xF900, 0xFAFF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2EE5F),
    (0x2F800, 0x2FA1F),
    (0x30000, 0x323AF),
]


@pytest.mark.parametrize("first, last", HAN_RANGES)
def test_han_ranges_count_and_their_neighbours_do_not(first, last):
    inside = chr(first) + chr(last) + chr((first + last) // 2)
    outside = chr(first - 1) + chr(last + 1)
    for count in (zh_clean.han_count, zh_clean.python_han_count):
        assert (count(inside), count(outside), count("a" + inside + "。")) == (3, 0, 3)


def test_han_count_on_every_code_point():
    total = sum(last - first + 1 for first, last in HAN_RANGES)
    assert zh_clean.han_count(EVERY_CHARACTER) == zh_clean.python_han_count(EVERY_CHARACTER) == total == 98768
    assert [c for c in EVERY_CHARACTER if zh_clean.han_count(c) != zh_clean.python_han_count(c)] == []


@settings(max_examples=500, deadline=None)
@given(st.text(CHARS, max_size=80))
def test_han_count_on_random_texts(text):
    assert zh_clean.han_count(text) == zh_clean.python_han_count(text)


def test_han_count_on_real_sentences():
    from annotators.text.zh_sentences import split_sentences

    lines = shared_path("lot", "outgen_val_sample.jsonl").read_text(encoding="utf-8").splitlines()
    sentences = [s for line in lines for s in split_sentences(json.loads(line)["story"])]
    assert [zh_clean.han_count(s) for s in sentences] == [zh_clean.python_han_count(s) for s in sentences]
    assert sum(map(zh_clean.han_count, sentences)) > 50000


def test_the_word_regex_is_isalnum_on_every_code_point():
    """word_counts' regex and str.isalnum agree on every character (is_word's definition)."""
    assert [c for c in EVERY_CHARACTER if bool(words._HAS_ALNUM(c)) != c.isalnum()] == []


TOKENS = st.lists(
    st.one_of(st.text(CHARS, max_size=4), st.sampled_from(["", "3.5", "e-mail", "，", "……", "a\u0301"])), max_size=20
)


@settings(max_examples=500, deadline=None)
@given(st.lists(TOKENS, max_size=8))
def test_word_counts_on_random_token_lists(sentences):
    assert words.word_counts(sentences) == [words.count_words(s) for s in sentences]
    assert words.word_counts([tuple(s) for s in sentences]) == [words.count_words(s) for s in sentences]


def test_word_counts_of_cut_real_sentences():
    import jieba

    lines = shared_path("lot", "outgen_val_sample.jsonl").read_text(encoding="utf-8").splitlines()[:40]
    sentences = [jieba.lcut(json.loads(line)["story"]) for line in lines]
    counts = words.word_counts(sentences)
    assert counts == [words.count_words(s) for s in sentences]
    assert all(0 < c < len(s) for c, s in zip(counts, sentences))  # punctuation tokens are not words


WORDY = st.one_of(
    CHARS,
    st.sampled_from(
        list("中文字我了的一眼看他们")
        + ["e-mail", "a.b@c.com", "x.cn", "3.5%", "１２３", "\r\n", "+#&._%-", "ab", "c++"]
    ),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(WORDY, max_size=30).map("".join).filter(lambda t: "\ud800" not in t and "\udfff" not in t))
def test_word_range_holds_jiebas_own_count(text):
    """zh_word_range's bounds hold jieba 0.42.1's HMM-on count, on texts made to break them
    (runs of single characters, ASCII letters and digits, block punctuation, other scripts;
    lone surrogates left out: rjieba takes UTF-8 only)."""
    import jieba

    exact = words.count_words(jieba.lcut(text))
    fewest, most = words.zh_word_range(text)
    assert fewest <= exact == words.zh_word_count(text) <= most
    assert words.fewest_words(jieba.lcut(text, HMM=False)) <= exact


def test_word_range_on_real_stories_is_tight_enough_to_skip_the_cut():
    lines = shared_path("lot", "outgen_val_sample.jsonl").read_text(encoding="utf-8").splitlines()
    stories = [json.loads(line)["story"] for line in lines]
    ranges = [words.zh_word_range(s) for s in stories]
    counts = [words.zh_word_count(s) for s in stories]
    assert all(f <= c <= m for (f, m), c in zip(ranges, counts))
    assert sum(f >= 50 for f, _ in ranges) > 0.9 * len(stories)  # LOT's 50-word limit needs no cut
    assert words.fewest_words(["他", "看", "了", "我", "一眼", "，", "3", ".", "5"]) == 3


SPLITTABLE = st.lists(st.one_of(WORDY, st.sampled_from(list("。！？；，"))), max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(SPLITTABLE.filter(lambda t: "\ud800" not in t and "\udfff" not in t), st.integers(0, 45))
def test_a_separable_prefix_is_cut_as_the_whole_text_cuts_it(text, at_least):
    """jieba (0.42.1 itself) cuts a text split after a separator as it cuts the two parts, HMM
    on and off, so the prefix's words never exceed the text's: the length filter's lower bound."""
    import jieba

    prefix = words.separable_prefix(text, at_least)
    if prefix is None:
        return
    assert len(prefix) >= at_least and prefix[-1] in "。！？；，" and len(prefix) < len(text)
    rest = text[len(prefix) :]
    for hmm in (True, False):
        assert jieba.lcut(text, HMM=hmm) == jieba.lcut(prefix, HMM=hmm) + jieba.lcut(rest, HMM=hmm)
    assert words.zh_fewest_words(prefix) <= words.zh_word_count(prefix) <= words.zh_word_count(text)


def test_length_decisions_on_real_stories_are_the_exact_counts_at_every_limit():
    """check_story (prefix bound, word range, exact count) against the exact count alone, on
    real stories at limits around each one's count and at the usual ones."""
    from annotators.stories.clean import CleanConfig, check_story

    lines = shared_path("lot", "outgen_val_sample.jsonl").read_text(encoding="utf-8").splitlines()[:60]
    for line in lines:
        text = json.loads(line)["story"]
        exact = words.zh_word_count(text)
        for low in (1, 20, 50, exact - 1, exact, exact + 1):
            for high in (0, exact - 1, exact, exact + 1, 500):
                got = check_story(text, CleanConfig(min_words=low, max_words=high))
                want = "too_short" if exact < low else "too_long" if high and exact > high else None
                assert (got.reason if got else None) == want, (line[:30], low, high)
