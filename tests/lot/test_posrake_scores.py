"""posrake's phrase scores (outline.posrake_scored) equal a reference written from the method's
definition: the same phrases, order, float scores and word tuples, on real tagged stories and
on random runs of delimiting tags, list words, line breaks, Latin words, digits and repeats."""

from __future__ import annotations

import functools
import json
import operator
from collections import Counter

import pytest
from conftest import shared_path
from hypothesis import given, settings
from hypothesis import strategies as st

from annotators.lot import outline


def reference_scores(tagged, max_words: int) -> dict:
    stop, delim = outline._resources().posrake_lists()

    def ends(word: str, tag: str) -> bool:
        return (
            tag in outline.POSRAKE_TAGS
            or word in stop
            or word in delim
            or word == "\n"
            or any(c.isascii() and c.isalpha() or c.isdigit() for c in word)
        )

    phrases, run = [], []
    for word, tag in tagged:
        if ends(word, tag):
            if run:
                phrases.append(tuple(run))
            run = []
        else:
            run.append(word)  # a run nothing closes is not a phrase
    freq = Counter(w for p in phrases for w in p)
    degree = Counter()
    for p in phrases:
        for w in p:
            degree[w] += len(p)
    out = {}
    for p in phrases:
        if len(p) <= max_words:  # the same additions, in the same order
            out["".join(p)] = (functools.reduce(operator.add, [degree[w] / freq[w] for w in p], 0.0), p)
    return out


@pytest.fixture(scope="module", autouse=True)
def _lists():
    outline._resources().posrake_lists()


def _pool():
    stop, delim = outline._resources().posrake_lists()
    words = [
        "小狗",
        "熊",
        "带着",
        "皮球",
        "森林",
        "公园",
        "我们",
        "跑",
        "老人",
        "\n",
        "abc",
        "3",
        "Ⅻ",
        "３",
        "é",
        "一只",
    ]
    return words + sorted(stop)[:6] + sorted(delim)[:6]


SCORERS = {"default": outline.posrake_scored, "python": outline.python_posrake_scored}


def test_the_default_scorer_is_the_c_one():
    assert outline._native() is not None  # make setup builds it (a compiler is on every machine we support)


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_posrake_scores_on_random_tagged_runs(data):
    tags = sorted(outline.POSRAKE_TAGS) + ["n", "v", "a", "eng", "r"]
    tagged = data.draw(st.lists(st.tuples(st.sampled_from(_pool()), st.sampled_from(tags)), max_size=60))
    for scored in SCORERS.values():
        for max_words in (0, 1, 3, 8, 1000):
            assert list(scored(tagged, max_words).items()) == list(reference_scores(tagged, max_words).items())
        assert list(scored(tuple(tagged), 8).items()) == list(reference_scores(tagged, 8).items())


def test_the_c_scorer_refuses_what_is_not_word_tag_pairs():
    native = outline._native()
    breaks = outline._posrake_breaks()
    for bad in ([("a", "n", "x")], [["熊", "n"]], [(3, "n")], 5):
        with pytest.raises(TypeError):
            native.posrake_scored(bad, outline.POSRAKE_TAGS, breaks, outline._posrake_break, 8)
    assert native.posrake_scored([], outline.POSRAKE_TAGS, breaks, outline._posrake_break, 8) == {}


def test_an_error_deciding_a_break_comes_out_of_the_c_scorer():
    def broken(word):
        raise RuntimeError(word)

    with pytest.raises(RuntimeError, match="未见过的词"):
        outline._native().posrake_scored([("未见过的词", "n"), ("。", "x")], outline.POSRAKE_TAGS, {}, broken, 8)


def test_posrake_scores_on_real_tagged_stories():
    import jieba.posseg

    lines = shared_path("lot", "outgen_val_sample.jsonl").read_text(encoding="utf-8").splitlines()[:40]
    for line in lines:
        tagged = [(p.word, p.flag) for p in jieba.posseg.lcut(json.loads(line)["story"])]
        for scored in SCORERS.values():
            got = scored(tagged, 8)
            assert got and list(got.items()) == list(reference_scores(tagged, 8).items())


def test_a_small_case_by_hand():
    tagged = [("小狗", "n"), ("熊", "n"), ("。", "x"), ("小狗", "n"), ("跑", "v")]  # the last run is open
    assert outline.posrake_scored(tagged, 8) == {"小狗熊": (4.0, ("小狗", "熊"))}  # each word: degree 2 / 1
