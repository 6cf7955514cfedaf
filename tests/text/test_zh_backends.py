"""jieba backends: rjieba (with jieba on the blocks it cuts differently) gives exactly jieba 0.42.1's
tokens and posseg pairs; it is used only when it passes its canary self-check."""

from __future__ import annotations

import json
import logging

import jieba
import pytest
from conftest import shared_path
from hypothesis import given, settings
from hypothesis import strategies as st

from annotators.text import zh_tokens


class _Shifted:
    """A fake accelerated segmenter that splits one canary text differently."""

    def __init__(self, reference):
        self.reference = reference

    def lcut(self, text, HMM=True):
        words = self.reference.lcut(text, HMM=HMM)
        return ["".join(words[:2])] + words[2:] if "诸葛亮" in text else words


def _plain_jieba():
    tok = jieba.Tokenizer()
    tok.initialize()
    return tok


MIXED = [
    "欧阳娜娜和诸葛亮明天去长江大桥看日出……“真的吗？”她问。",
    "Tom和Jerry在2号楼302室打了一下午的电子游戏🎮，还吃了3.14个派。",
    "  空格   和\t制表符\r\n换行 也要 一样 处理。abc-def_ghi 甲-三七%",
    "驴夫狠狠地抽了一鞭子，卫队心里一惊，阿卜杜勒·拉赫曼笑了。",
    "",
    "   ",
    "。。。",
    "x",
    "一",
]


@pytest.mark.slow
def test_the_stored_canary_tokens_are_what_jieba_0_42_1_gives():
    assert jieba.__version__ == "0.42.1"
    tok = _plain_jieba()
    expected = zh_tokens.canary_tokens()
    texts = zh_tokens.canary_texts()
    assert expected["hmm"] == [tok.lcut(t, HMM=True) for t in texts]
    assert expected["no_hmm"] == [tok.lcut(t, HMM=False) for t in texts]
    from jieba import posseg

    assert expected["pos"] == [[[p.word, p.flag] for p in posseg.lcut(t)] for t in texts]


# Everything that can meet in a jieba block or beside one: Han (common and rare, dictionary words
# and names), ASCII letters, digits and jieba's block punctuation, other punctuation, every kind of
# whitespace (with "\r\n"), fullwidth forms, CJK Extension A / B, compatibility ideographs, emoji.
ALPHABET = (
    list("我来到北京清华大学他说今天天气很好欧阳娜娜诸葛亮长江大桥的了是在一个鹦鹉螺驴夫卜杜勒")
    + list("abcXYZe019")
    + list("+#&._%-@/")
    + [" ", "\t", "\r", "\n", "\r\n", "\u3000", "\x1c", "\x85", "\xa0"]
    + list("，。！？“”、：；（）…·")
    + list("ＡＢ１２％－．")
    + ["\u3400", "\u4db5", "\u9fd6", "\u9fff", "\uf900", "\ufa2d", "\U00020000", "\U0002a6d6", "\U0002f800", "😀"]
)
TEXTS = st.lists(st.sampled_from(ALPHABET), max_size=40).map("".join)


def _stories():
    path = shared_path("lot", "outgen_val_sample.jsonl")
    return [json.loads(line)["story"] for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("backend", ["jieba", "rjieba"])
def test_every_mode_equals_jieba_on_canaries_and_mixed_texts(backend):
    """lcut, cut_both, tokenize, cut_all and cut_tagged give jieba's own tokens and posseg pairs."""
    from jieba import posseg

    seg = zh_tokens.load(backend)
    assert seg.name == backend
    tok = _plain_jieba()
    texts = (
        MIXED
        + zh_tokens.canary_texts()
        + [
            "50%的人-说",
            "-%-",
            "小明在2020年-3月说：ABC123 def。",
            "我来到北京清华大学，e-mail是a.b@c.com。",
            "涨了3.5%",
            "㐀京鶴北𠀀",
        ]
    )
    for text in texts:
        on, off = seg.cut_both(text)
        assert (on, off) == (tok.lcut(text, HMM=True), tok.lcut(text, HMM=False)), text
        assert seg.lcut(text) == on and seg.lcut(text, HMM=False) == off
        assert list(seg.tokenize(text)) == list(tok.tokenize(text))
        expected = [(p.word, p.flag) for p in posseg.lcut(text)]
        assert seg.cut_tagged(text) == expected, text
        assert seg.cut_all(text) == (on, off, expected)
        assert seg.cut_all(text, off=False, pos=False) == (on, None, None)
    assert seg.pos_exact


@settings(max_examples=400, deadline=None)
@given(TEXTS)
def test_rjieba_cuts_generated_strings_as_jieba_does(text):
    seg = zh_tokens.load("rjieba")
    assert seg.cut_both(text) == (jieba.lcut(text, HMM=True), jieba.lcut(text, HMM=False))


@settings(max_examples=200, deadline=None)
@given(TEXTS)
def test_rjieba_tags_generated_strings_as_posseg_does(text):
    from jieba import posseg

    seg = zh_tokens.load("rjieba")
    expected = [(p.word, p.flag) for p in posseg.lcut(text)]
    assert seg.cut_tagged(text) == expected
    assert seg.cut_all(text)[2] == expected


@settings(max_examples=100, deadline=None)
@given(st.lists(TEXTS, max_size=5))
def test_cut_sentences_is_cut_all_of_each_sentence(sentences):
    seg = zh_tokens.load("rjieba")
    words, off, pos = seg.cut_sentences(sentences)
    parts = [seg.cut_all(s) for s in sentences]
    assert words == tuple(tuple(t for t in on if t.strip()) for on, _, _ in parts)
    assert off == [t for _, o, _ in parts for t in o] and pos == [p for _, _, ps in parts for p in ps]
    assert seg.cut_sentences(sentences, off=False, pos=False) == (words, None, None)


CLEAN = ["我来到北京清华大学。", "他说今天天气很好！", "欧阳娜娜和诸葛亮去长江大桥，", "卜杜勒笑了。", "驴夫"]
DIRTY = ["小明在2020年说：", "ABC123 def。", "e-mail是a.b@c.com。", "涨了3.5%", "㐀京鶴北𠀀。", "第3章"]
# letters and digits only (no `+#&._%-`): cut in the clean runs' one call, along jieba's route
LETTERS = ["A计划开始了。", "他买了iPhone12和3个苹果", "12", "Google说", "x", "第1章：", "北京A大学在B区"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(CLEAN + DIRTY + LETTERS), max_size=8))
def test_cut_sentences_of_clean_and_dirty_runs_is_jiebas(sentences):
    """Runs of sentences rjieba cuts as jieba does (one call each, walked in C along jieba's
    route, letters and digits included), sentences with blocks it may not (`+#&._%-`, CJK
    outside jieba's range) between them, and sentences that meet inside a block ("驴夫" then
    "第3章", "12" then "x"): each sentence's own jieba cut."""
    from jieba import posseg

    seg = zh_tokens.load("rjieba")
    words, off, pos = seg.cut_sentences(sentences)
    assert words == tuple(tuple(t for t in jieba.lcut(s) if t.strip()) for s in sentences)
    assert off == [t for s in sentences for t in jieba.lcut(s, HMM=False)]
    assert pos == [(p.word, p.flag) for s in sentences for p in posseg.lcut(s)]


def test_the_pieces_rjieba_may_cut_differently_are_whole_jieba_blocks():
    text = "他说e-mail是a.b@c.com，㐀字3.5%\r\n好"
    pieces = list(zh_tokens.spans(text))
    assert "".join(text[a:b] for a, b, _ in pieces) == text
    assert [text[a:b] for a, b, same in pieces if not same] == ["他说e-mail是a.b", "c.com", "㐀", "字3.5%"]


def test_a_tagged_cut_that_disagrees_falls_back_to_posseg(monkeypatch, caplog):
    from jieba import posseg

    from annotators.text import zh_posseg

    seg = zh_tokens._accelerated_segmenter()
    monkeypatch.setattr(zh_posseg.Tagger, "hmm_cut", lambda self, text: [(text, "n")])  # unknown runs stay whole
    with caplog.at_level(logging.WARNING, logger="storybench"):
        seg.cut_tagged("欧阳娜娜来了。")
    assert not seg.pos_exact and "differs from jieba.posseg" in caplog.text
    for text in zh_tokens.canary_texts()[:5]:
        assert seg.cut_tagged(text) == [(p.word, p.flag) for p in posseg.lcut(text)]
        assert seg.cut_all(text)[2] == seg.cut_tagged(text)


def test_reference_backend_is_always_jieba():
    assert zh_tokens.resolve("jieba") == "jieba"
    assert zh_tokens.backend_info("jieba")["version"].startswith("0.42")


def test_the_accelerated_backend_is_rjieba_0_2_2():
    assert zh_tokens.resolve("auto") == "rjieba"
    assert zh_tokens.backend_info() == zh_tokens.backend_info("rjieba") == {"backend": "rjieba", "version": "0.2.2"}


def test_self_check_names_the_first_difference():
    reference = zh_tokens.load("jieba")
    assert zh_tokens.self_check(reference) is None
    assert zh_tokens.self_check(zh_tokens.load("rjieba")) is None
    assert zh_tokens.self_check(_Shifted(reference)).startswith("HMM=True")


def test_a_backend_that_differs_on_a_canary_falls_back_to_jieba(monkeypatch, caplog):
    reference = zh_tokens.load("jieba")
    monkeypatch.setattr(zh_tokens, "_RESOLVED", {})
    monkeypatch.setattr(zh_tokens, "_SEGMENTERS", {"jieba": reference})
    monkeypatch.setitem(zh_tokens._FACTORIES, "rjieba", lambda: _Shifted(reference))
    with caplog.at_level(logging.WARNING, logger="storybench"):
        assert zh_tokens.resolve("rjieba") == "jieba"
    assert "splits a canary text differently" in caplog.text
    assert zh_tokens.load("rjieba") is reference


def test_a_missing_backend_falls_back_to_jieba(monkeypatch):
    def missing():
        raise ImportError("no rjieba")

    monkeypatch.setattr(zh_tokens, "_RESOLVED", {})
    monkeypatch.setattr(zh_tokens, "_SEGMENTERS", {"jieba": zh_tokens.load("jieba")})
    monkeypatch.setitem(zh_tokens._FACTORIES, "rjieba", missing)
    assert zh_tokens.resolve("auto") == "jieba"


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="rjieba"):
        zh_tokens.configure("pkuseg")


def test_no_native_cut_functions_remain():
    """Only the two HMM Viterbis are native; the old cut module is gone."""
    import importlib.util

    assert importlib.util.find_spec("annotators.text._zhcut") is None
    assert not hasattr(zh_tokens, "native_function")


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jieba", "rjieba"])
def test_every_mode_equals_jieba_on_real_stories(backend):
    """All 161 real OutGen stories: HMM on and off as jieba.lcut, tagged as jieba.posseg.lcut,
    whole and sentence by sentence."""
    from jieba import posseg

    stories = _stories()
    seg = zh_tokens.load(backend)
    assert [seg.cut_both(s) for s in stories] == [(jieba.lcut(s), jieba.lcut(s, HMM=False)) for s in stories]
    assert [seg.cut_tagged(s) for s in stories] == [[(p.word, p.flag) for p in posseg.lcut(s)] for s in stories]
    for story in stories[:40]:
        sentences = [s + "。" for s in story.split("。")]
        _, off, pos = seg.cut_sentences(sentences)
        assert off == [t for s in sentences for t in jieba.lcut(s, HMM=False)]
        assert pos == [(p.word, p.flag) for s in sentences for p in posseg.lcut(s)]


def _rjieba_differs(char: str) -> bool:
    import rjieba

    text = "我" + char + "来到" + char * 2 + "a1" + char + "\r" + char + "\n北京"
    return any(rjieba.cut(text, hmm) != jieba.lcut(text, HMM=hmm) for hmm in (True, False))


@pytest.mark.slow
def test_the_extra_han_ranges_are_exactly_where_rjieba_differs():
    """Every code point was scanned once (54 s); here the edges of each range and a sample of
    all planes: rjieba differs from jieba beside a character exactly when RE_DIFFERS has it
    (or it is one of jieba's block characters "+#&._%-", which rjieba keeps inside words)."""
    edges = [0x3400, 0x4DBF, 0x9FD6, 0x9FFF, 0xF900, 0xFAFF, 0x20000, 0x2A6DF, 0x2A700, 0x2EBEF, 0x2F800, 0x2FA1F]
    points = {p + d for p in edges for d in (-1, 0, 1)} | set(range(0x20, 0x30000, 211))
    for point in sorted(points):
        char = chr(point)
        if 0xD800 <= point <= 0xDFFF or char in "+#&._%-":
            continue
        assert _rjieba_differs(char) == bool(zh_tokens.RE_DIFFERS.match(char)), hex(point)


def test_the_route_gives_joined_letters_and_digits_as_characters():
    """jieba's HMM-off cut joins single letters and digits; its route holds them one by one
    (`_route`), unless such a token is a dictionary word: the route is then unsure (None)."""
    import copy

    seg = zh_tokens.load("rjieba")
    tokens = ["他", "买", "了", "iPhone12", "和", "3", "个", "苹果", "。"]
    assert seg._route(tokens) == ["他", "买", "了", *"iPhone12", "和", "3", "个", "苹果", "。"]
    clean = ["我", "来到", "北京", "。"]
    assert seg._route(clean) is clean
    known = copy.copy(seg)
    known._freq = {"iPhone12": 3}
    assert known._route(tokens) is None and known._route(clean) is clean
