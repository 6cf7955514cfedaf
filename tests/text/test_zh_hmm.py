"""The tagged cut (annotators/text/zh_posseg.py) and the native HMMs (_jieba_hmm.c) against jieba
itself (jieba.posseg, jieba.finalseg): on canary texts, real stories and generated runs, with and
without C."""

from __future__ import annotations

import json
import random

import pytest
from conftest import shared_path
from hypothesis import given, settings
from hypothesis import strategies as st
from jieba import posseg

from annotators.text import zh_posseg, zh_tokens

TABLES = (posseg.char_state_tab_P, posseg.start_P, posseg.trans_P, posseg.emit_P)
# common characters, rare ones (few HMM emissions) and characters posseg's tables lack
HAN = list("我来到北京清华大学他说今天天气很好欧阳娜娜诸葛亮长江大桥的了是驴夫卜杜勒鹦鹉螺") + [
    "\u9fd5",
    "\u4e00",
    "\u9f98",
]
RUNS = st.lists(st.sampled_from(HAN), min_size=1, max_size=30).map("".join)


@pytest.fixture(scope="module")
def native():
    module = zh_posseg.native_module()
    if module is None:
        pytest.skip("the _jieba_hmm C module is not built here")
    return module, module.posseg_model(zh_posseg.hmm_states(TABLES), *TABLES)


def _rare_run(length: int, seed: int) -> str:
    emit = TABLES[3]
    chars = sorted({c for table in emit.values() for c in table if len(c) == 1})
    rng = random.Random(seed)
    return "".join(rng.choice(chars) for _ in range(length))


def test_the_native_module_is_built_by_make_setup():
    assert zh_posseg.native_module() is not None  # a compiler is on every machine we support


def test_native_viterbi_equals_jiebas_on_canary_runs(native):
    module, model = native
    runs = [run for text in zh_tokens.canary_texts() for run in zh_posseg.RE_HAN_DETAIL.findall(text)]
    runs += [_rare_run(n, seed) for seed, n in enumerate((1, 2, 3, 7, 40, 200))]
    for run in runs:
        assert module.posseg_cut(model, run) == zh_posseg.python_hmm_cut(run, TABLES), run


@settings(max_examples=300, deadline=None)
@given(RUNS)
def test_native_viterbi_equals_jiebas_on_generated_runs(native, run):
    module, model = native
    assert module.posseg_cut(model, run) == zh_posseg.python_hmm_cut(run, TABLES)


def test_an_empty_run_and_bad_arguments(native):
    module, model = native
    assert module.posseg_cut(model, "") == []
    with pytest.raises(TypeError):
        module.posseg_cut(model, b"bytes")
    with pytest.raises(ValueError):
        module.posseg_cut(object(), "我")  # not a model capsule
    with pytest.raises(ValueError):
        module.posseg_model([], *TABLES)


@pytest.mark.parametrize("native_on", ["1", "0"])
def test_the_tagged_cut_is_posseg_with_and_without_c(monkeypatch, native_on):
    """STORYBENCH_ZH_NATIVE=0 (or no compiler) runs jieba's Viterbi: the same pairs."""
    import rjieba

    monkeypatch.setenv("STORYBENCH_ZH_NATIVE", native_on)
    tagger = zh_posseg.Tagger(rjieba.cut, zh_posseg.native_module())
    assert (tagger._model is None) == (native_on == "0")
    texts = zh_tokens.canary_texts() + ["欧阳娜娜在2020年说：e-mail是a.b@c.com，涨了3.5%。", "㐀京\r\n鶴北𠀀 x"]
    for text in texts:
        assert tagger.tagged(text) == [(p.word, p.flag) for p in posseg.lcut(text)], text


def test_the_tagged_cut_is_posseg_on_real_stories():
    import rjieba

    path = shared_path("lot", "outgen_val_sample.jsonl")
    stories = [json.loads(line)["story"] for line in path.read_text(encoding="utf-8").splitlines()]
    tagger = zh_posseg.Tagger(rjieba.cut, zh_posseg.native_module())
    for story in stories:
        assert tagger.tagged(story) == [(p.word, p.flag) for p in posseg.lcut(story)]


@pytest.fixture(scope="module")
def finalseg_model(native):
    from jieba import finalseg

    module = native[0]
    return module, module.finalseg_model(finalseg.start_P, finalseg.trans_P, finalseg.emit_P)


def test_native_finalseg_equals_jiebas_on_canary_and_rare_runs(finalseg_model):
    from jieba import finalseg

    module, model = finalseg_model
    runs = [run for text in zh_tokens.canary_texts() for run in zh_posseg.RE_HAN_DETAIL.findall(text)]
    runs += [_rare_run(n, seed) for seed, n in enumerate((1, 2, 3, 7, 40, 200))]
    for run in runs:
        assert module.finalseg_cut(model, run) == list(finalseg.cut(run)), run
    assert module.finalseg_cut(model, "") == []


@settings(max_examples=300, deadline=None)
@given(RUNS)
def test_native_finalseg_equals_jiebas_on_generated_runs(finalseg_model, run):
    from jieba import finalseg

    module, model = finalseg_model
    assert module.finalseg_cut(model, run) == list(finalseg.cut(run))


@pytest.mark.parametrize("native_on", ["1", "0"])
def test_the_hmm_on_cut_is_jiebas_with_and_without_c(monkeypatch, native_on):
    import jieba

    monkeypatch.setenv("STORYBENCH_ZH_NATIVE", native_on)
    seg = zh_tokens._accelerated_segmenter()
    assert (seg._finalseg is None) == (native_on == "0")
    for text in zh_tokens.canary_texts() + ["今江江江来", "驴夫卜杜勒鹦鹉螺在2020年说"]:
        assert seg.cut_both(text) == (jieba.lcut(text), jieba.lcut(text, HMM=False)), text


# HMM-off tokens: dictionary words, single Han characters, ASCII letters and digits (route
# steps, which form unknown and known runs), what lies between blocks (punctuation, every
# kind of whitespace, "\r\n") and a joined "ab12" (both walks take it one by one: `_route`).
WALK_TOKENS = st.lists(
    st.sampled_from(
        HAN
        + ["北京", "清华大学", "今天", "天气", "长江大桥", "鹦鹉螺", "欧阳"]
        + list("，。！？“”…")
        + list("aZ09")
        + ["ab12"]
        + [" ", "  ", "\t", "\u3000", "\r\n", "\n", "\xa0"]
    ),
    max_size=40,
)


def _segmenter_with_walk():
    seg = zh_tokens._accelerated_segmenter()
    walk = seg._native_walk()
    if walk is None:
        pytest.skip("the _jieba_hmm C module is not built here")
    return seg, walk


@settings(max_examples=300, deadline=None)
@given(WALK_TOKENS)
def test_the_native_walk_is_the_python_walk(tokens):
    """`_jieba_hmm.walk` gives `Segmenter._walk_both`'s words (whitespace tokens left out) and
    pairs, its words interned, whatever its caches already hold."""
    import sys

    seg, walk = _segmenter_with_walk()
    on, pairs = [], []
    assert seg._walk_both(list(tokens), on, pairs)
    for _ in range(2):  # the second time every word and run comes from the caches
        words, got = walk(list(tokens))
        assert words == [w for w in on if w.strip()]
        assert got == pairs
        assert all(sys.intern(w) is w for w in words)
        assert all(type(p) is tuple and len(p) == 2 for p in got)


def test_joined_letters_and_digits_are_route_steps_unless_a_dictionary_word():
    """jieba's HMM-off cut joins letters and digits: the walk takes them one by one, as the
    route has them (both walks); when such a token is a dictionary word the route is unsure:
    None from the C walk, False from the Python one."""
    import copy

    seg, walk = _segmenter_with_walk()
    tokens = ["他", "买", "了", "iPhone12", "，", "A", "计划", "。"]
    on, pairs = [], []
    assert seg._walk_both(tokens, on, pairs)
    assert walk(tokens) == ([w for w in on if w.strip()], pairs)
    route = seg._route(tokens)
    assert walk(route) == walk(tokens) and route != tokens
    tagger = seg.load_tagging()
    module = zh_posseg.native_module()
    freq = {**seg._freq, "iPhone12": 5}
    args = (freq, tagger.tags, {}, seg._hmm_cache, seg._hmm_words, tagger.runs, tagger.detail)
    assert module.walk(tokens, *args) is None
    assert module.walk(tokens, *args, [16]) is None  # with ends too
    assert module.walk(tokens, seg._freq, *args[1:], [16])[0] == [tuple(w for w in on if w.strip())]
    known = copy.copy(seg)
    known._freq = freq
    assert known._walk_both(tokens, [], []) is False


def test_the_native_walk_refuses_what_is_not_a_list_of_str():
    seg, walk = _segmenter_with_walk()
    with pytest.raises(TypeError):
        walk(("北京",))
    with pytest.raises(TypeError):
        walk(["北京", 3])
    assert walk([]) == ([], [])


def test_the_native_walk_calls_the_hmms_only_for_unknown_runs():
    """A run that is a dictionary word (今天 as two route steps) is its characters; an unknown
    run goes through both HMMs once, then comes from the caches."""
    seg, _ = _segmenter_with_walk()
    tagger = seg.load_tagging()
    calls = []

    def on_miss(run):
        calls.append(("on", run))
        return seg._hmm_words(run)

    def pos_miss(run):
        calls.append(("pos", run))
        return tagger.detail(run)

    module = zh_posseg.native_module()
    args = (seg._freq, tagger.tags, {}, seg._hmm_cache, on_miss, tagger.runs, pos_miss)
    tokens = ["今", "天", "，", "卜", "杜", "勒"]
    words, pairs = module.walk(tokens, *args)
    assert module.walk(tokens, *args) == (words, pairs)
    assert calls == [("on", "卜杜勒"), ("pos", "卜杜勒")]
    assert words == ["今", "天", "，", *seg._hmm_cache["卜杜勒"]]
    assert pairs == [("今", tagger.tags["今"]), ("天", tagger.tags["天"]), ("，", "x"), *tagger.runs["卜杜勒"]]


SENTENCE_CHARS = HAN + ["北京", "清华大学", "今天", "长江大桥"] + list("，。！？“”…")
SENTENCE_CHARS += [" ", "\t", "\r", "\n", "\u3000"]
SENTENCES = st.lists(st.lists(st.sampled_from(SENTENCE_CHARS), max_size=12).map("".join), min_size=1, max_size=6)


def _meet_in_a_block(sentences) -> bool:
    texts = [s for s in sentences if s]
    return any(
        zh_tokens.BLOCK_CHAR.match(a[-1]) and zh_tokens.BLOCK_CHAR.match(b[0]) or (a[-1], b[0]) == ("\r", "\n")
        for a, b in zip(texts, texts[1:])
    )


@settings(max_examples=300, deadline=None)
@given(SENTENCES)
def test_the_native_walk_of_a_whole_text_is_the_walk_of_each_sentence(sentences):
    """Walked with its sentences' ends, one cut of the joined text gives each sentence's own
    words and the pairs of all of them; None exactly when two sentences meet inside a block
    (or split a "\\r\\n"), where the joined text's tokens may differ."""
    import itertools

    seg, walk = _segmenter_with_walk()
    walked = [walk(seg._fast.cut(s, False)) for s in sentences]
    got = walk(seg._fast.cut("".join(sentences), False), list(itertools.accumulate(map(len, sentences))))
    if _meet_in_a_block(sentences):
        assert got is None or got == ([tuple(w) for w, _ in walked], [p for _, ps in walked for p in ps])
    else:
        assert got == ([tuple(w) for w, _ in walked], [p for _, ps in walked for p in ps])


def test_the_native_walk_refuses_ends_that_do_not_match_its_tokens():
    seg, walk = _segmenter_with_walk()
    tokens = seg._fast.cut("我来到北京。他说。", False)
    assert walk(tokens, [6, 9])[0] == [("我", "来到", "北京", "。"), ("他", "说", "。")]
    for ends in ([6, 10], [6], [], [6, 9, 12]):
        with pytest.raises(ValueError):
            walk(tokens, ends)
    assert walk(tokens, [2, 9]) is None  # "来到" runs across the first sentence's end
    assert walk(tokens, [3, 9]) is None  # the first sentence ends inside a block
    assert walk([], []) == ([], [])
    assert walk([], [0, 0]) == ([(), ()], [])
