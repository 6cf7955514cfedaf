"""The split definition, re-computed independently here (plain loops, no shared code)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotators.storium.split import SplitConfig, StorySize, assign_splits, parse_ratios, split_report

NAMES = ["train", "validation", "test"]
BY_ID = SplitConfig(split_ties="story_id")


def reference_split(sizes: dict[str, int], ratios=(8, 1, 1)) -> dict[str, str]:
    """`story_id` ties, written out plainly: largest first, ties by smaller id;
    give each story to the split with the smallest words/ratio, ties train < validation < test."""
    order = sorted(sizes, key=lambda s: (-sizes[s], s))
    words = {n: 0 for n in NAMES}
    out = {}
    for story in order:
        best = None
        for name, ratio in zip(NAMES, ratios):
            if ratio <= 0:
                continue
            # compare words[a]/ra < words[b]/rb as words[a]*rb < words[b]*ra (exact)
            if best is None or words[name] * best[1] < words[best[0]] * ratio:
                best = (name, ratio)
        words[best[0]] += sizes[story]
        out[story] = best[0]
    return out


def test_small_example_by_hand():
    sizes = {"a": 100, "b": 90, "c": 10, "d": 10, "e": 5}
    # a -> train (all 0). b: train 100/8=12.5, val 0 -> validation. c: test 0 -> test.
    # d: train 12.5, val 90, test 10 -> test. e: train 12.5, val 90, test 20 -> train.
    assert assign_splits(sizes.items()) == {"a": "train", "b": "validation", "c": "test", "d": "test", "e": "train"}


def test_ties_take_smaller_story_id_first_and_train_first():
    assert assign_splits([("z", 5), ("y", 5), ("x", 0)], BY_ID) == {"y": "train", "z": "validation", "x": "test"}


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(st.text("abcdef0123", min_size=1, max_size=6), st.integers(0, 5000), max_size=60),
    st.tuples(st.integers(0, 9), st.integers(0, 9), st.integers(0, 9)).filter(lambda r: any(r)),
)
def test_assignment_equals_the_definition(sizes, ratios):
    assert assign_splits(sizes.items(), SplitConfig(ratios, "story_id")) == reference_split(sizes, ratios)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 1000), min_size=1, max_size=40), st.randoms(use_true_random=False))
def test_arrival_order_does_not_matter(values, rnd):
    pairs = [(f"s{i:03d}", v) for i, v in enumerate(values)]
    shuffled = list(pairs)
    rnd.shuffle(shuffled)
    assert assign_splits(pairs) == assign_splits(shuffled)


def test_many_similar_stories_balance_both_stories_and_words():
    rnd = random.Random(7)
    sizes = {f"game-{i:04d}": rnd.randint(15000, 25000) for i in range(1000)}
    report = split_report(sizes.items(), assign_splits(sizes.items()))
    for name, target in zip(NAMES, (0.8, 0.1, 0.1)):
        assert report[name]["target_share"] == target
        assert abs(report[name]["word_share"] - target) < 0.002
        assert abs(report[name]["story_share"] - target) < 0.01
    assert sum(r["stories"] for r in report.values()) == 1000


def test_zero_ratio_split_gets_nothing():
    sizes = {f"s{i}": i for i in range(20)}
    assert set(assign_splits(sizes.items(), SplitConfig((1, 1, 0))).values()) == {"train", "validation"}


@pytest.mark.parametrize(
    "text, expected", [("8,1,1", (8, 1, 1)), ("0.8, 0.1,0.1", (0.8, 0.1, 0.1)), ("1,0,0", (1, 0, 0))]
)
def test_parse_ratios(text, expected):
    assert parse_ratios(text) == expected


@pytest.mark.parametrize("text", ["8,1", "0,0,0", "8,-1,1", "a,b,c"])
def test_parse_ratios_rejects_bad_input(text):
    with pytest.raises(ValueError):
        parse_ratios(text)


def test_original_ties_order_by_entries_scenes_then_path_descending():
    """storium-gpt2 `split_dataset`: sorted((words, entries, scenes, filename), reverse=True)."""
    sizes = [
        StorySize("g-a", 50, 3, 1, "a.json"),
        StorySize("g-b", 50, 7, 1, "b.json"),
        StorySize("g-c", 50, 7, 2, "c.json"),
        StorySize("g-d", 50, 7, 2, "d.json"),
    ]
    # equal words: d and c (7 entries, 2 scenes; d's path is larger), then b (1 scene), a (3 entries)
    assert assign_splits(sizes, SplitConfig((1, 1, 1))) == {
        "g-d": "train",
        "g-c": "validation",
        "g-b": "test",
        "g-a": "train",
    }
    assert assign_splits(sizes, SplitConfig((1, 1, 1), "story_id")) == {
        "g-a": "train",
        "g-b": "validation",
        "g-c": "test",
        "g-d": "train",
    }


def test_original_ties_between_splits_follow_the_heap():
    """Equal keys go where heapq's layout puts them: after train gets a story and validation an
    empty one, the original's heap pops test for the next empty story; `story_id` ties pick
    validation again (train, then validation, then test)."""
    sizes = [
        StorySize("g-1", 10, 1, 1, "c.json"),
        StorySize("g-2", 0, 1, 1, "b.json"),
        StorySize("g-3", 0, 1, 1, "a.json"),
    ]
    assert assign_splits(sizes, SplitConfig((1, 1, 1))) == {"g-1": "train", "g-2": "validation", "g-3": "test"}
    assert assign_splits(sizes, SplitConfig((1, 1, 1), "story_id")) == {
        "g-1": "train",
        "g-2": "validation",
        "g-3": "validation",
    }


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 300), st.integers(0, 9), st.integers(0, 3)), min_size=1, max_size=40),
    st.randoms(use_true_random=False),
)
def test_original_ties_are_independent_of_arrival_order(values, rnd):
    sizes = [StorySize(f"g{i}", w, e, s, f"dir/{i:03d}.json") for i, (w, e, s) in enumerate(values)]
    shuffled = list(sizes)
    rnd.shuffle(shuffled)
    assert assign_splits(sizes) == assign_splits(shuffled)
