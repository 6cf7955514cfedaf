"""Unit and property tests of the GLGE low-frequency score and level selections (GLGE 2.4)."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotators.glge.score import (
    TokenConfig,
    low_frequency_order,
    lowest,
    medium_indices,
    overlap,
    score,
    score_parts,
    stop_word_set,
    term_frequencies,
    tokens,
)

ZH = TokenConfig(tokenizer="jieba", stop_words="spacy_zh")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("The CAT sat on the Mat .", ["cat", "sat", "mat"]),  # case, stop words, punct
        ("n - dubz have revealed [UNK] plans", ["n", "dubz", "revealed", "[unk]", "plans"]),
        ("1,000 fans -- ... ' s", ["1,000", "fans", "s"]),  # digits kept, '-- ...' dropped
        ("  the   of and  ", []),  # only stop words
        ("", []),
    ],
)
def test_tokens_english(text, expected):
    assert tokens(text) == expected


def test_tokens_other_lists_and_no_lowercase():
    assert tokens("The cat", TokenConfig(stop_words="none")) == ["the", "cat"]
    assert tokens("The Cat the", TokenConfig(lowercase=False)) == ["The", "Cat"]


def test_tokens_chinese_jieba_drops_stop_words_and_punctuation():
    assert tokens("小明在公园里散步，看到了一只小狗。", ZH) == ["小明", "公园", "里", "散步", "一只", "小狗"]
    assert tokens("他们 很 开心 ABC 123！", ZH) == ["开心", "abc", "123"]


def test_unknown_settings_are_refused():
    with pytest.raises(ValueError, match="stop-word list"):
        stop_word_set("nltk")
    with pytest.raises(ValueError, match="tokenizer"):
        tokens("x", TokenConfig(tokenizer="bert"))


def test_score_exact_values():
    tf = term_frequencies([["cat", "sat", "mat"], ["cat", "dog"], ["dogs", "chase", "cats"]])
    assert tf == Counter({"cat": 2, "sat": 1, "mat": 1, "dog": 1, "dogs": 1, "chase": 1, "cats": 1})
    assert score(["cat", "sat"], tf) == 1.5
    assert score(["cat", "cat", "cat"], tf) == 2.0  # repeats count every time
    assert score(["dog", "barked"], tf) == 0.5  # unseen tokens count 0
    assert score(["moon"], tf) == 0.0
    assert score([], tf) is None  # empty target: no score
    assert score_parts(["mat", "dog", "zebra"], tf) == (2, 3)


def test_order_ties_go_to_lower_index_and_empty_targets_are_left_out():
    # scores: 1/3, none, 2/6 (= 1/3 exactly), 0, 1/3, none
    parts = [(1, 3), (0, 0), (2, 6), (0, 2), (3, 9), (0, 0)]
    assert low_frequency_order(parts) == [3, 0, 2, 4]
    assert lowest(low_frequency_order(parts), 6, 0.5) == (0, 2, 3)
    assert lowest(low_frequency_order(parts), 6, 0.25) == (3,)


def test_lowest_when_fewer_targets_are_scorable_than_the_fraction():
    parts = [(0, 0)] * 7 + [(4, 2)]
    assert lowest(low_frequency_order(parts), 8, 0.25) == (7,)  # floor(8/4) = 2, only 1 scorable
    assert lowest(low_frequency_order([(0, 0)] * 4), 4, 0.5) == ()


def test_medium_is_seeded_and_depends_on_seed_and_task():
    a = medium_indices(200, seed=0, task="xsum")
    assert a == medium_indices(200, seed=0, task="xsum")
    assert a != medium_indices(200, seed=1, task="xsum")
    assert a != medium_indices(200, seed=0, task="cnndm")
    assert medium_indices(0, 0, "t") == () and medium_indices(1, 0, "t") == ()
    assert len(medium_indices(3, 0, "t")) == 1


def test_overlap_rates():
    test = [["cat", "sat"], ["cat", "dog"], []]
    out = overlap(test, {"cat", "bird"})
    assert out == {
        "test_types": 3,
        "shared_types": 1,
        "type_overlap": 1 / 3,
        "test_tokens": 4,
        "covered_tokens": 2,
        "token_overlap": 0.5,
    }
    assert overlap([[]], {"cat"})["type_overlap"] is None


@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, 400), seed=st.integers(0, 2**32))
def test_medium_property_floor_half_distinct_in_order(n, seed):
    chosen = medium_indices(n, seed, "task")
    assert len(chosen) == n // 2
    assert len(set(chosen)) == len(chosen)
    assert list(chosen) == sorted(chosen)
    assert all(0 <= i < n for i in chosen)


VOCAB = ["cat", "dog", "the", "moon", "sun", "of", "star", ".", "7", "sea"]
targets = st.lists(st.lists(st.sampled_from(VOCAB), max_size=6).map(" ".join), max_size=60)


@settings(max_examples=150, deadline=None)
@given(train=targets, test=targets)
def test_hard_is_inside_medium_plus_and_below_everything_left_out(train, test):
    tf = term_frequencies(tokens(t) for t in test)
    parts = [score_parts(tokens(t), tf) for t in train]
    order = low_frequency_order(parts)
    hard, plus = lowest(order, len(train), 0.25), lowest(order, len(train), 0.5)
    assert set(hard) <= set(plus)
    assert len(hard) <= len(train) // 4 and len(plus) <= len(train) // 2
    assert all(parts[i][1] > 0 for i in plus)
    scorable = [i for i, p in enumerate(parts) if p[1]]
    assert len(plus) == min(len(train) // 2, len(scorable))
    worst_kept = max((parts[i][0] / parts[i][1] for i in plus), default=float("-inf"))
    for i in set(scorable) - set(plus):
        assert parts[i][0] / parts[i][1] >= worst_kept
