"""jieba backends: one pass gives both modes exactly; the accelerated backend is used only when
it cuts like jieba 0.42.1."""
from __future__ import annotations

import json
import logging

import jieba
import pytest

from annotators.text import zh_tokens
from conftest import shared_path


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
    "", "   ", "。。。", "x", "一",
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


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jieba", "jieba_next"])
def test_one_pass_gives_posseg_pairs_exactly(backend):
    """The tagged cut shares the route with the other modes and equals jieba.posseg.lcut,
    including posseg's own blocks (no "%" or "-") and its HMM for unknown runs."""
    from jieba import posseg

    if backend == "jieba_next":
        pytest.importorskip("jieba_next")
    seg = zh_tokens.load(backend)
    texts = MIXED + zh_tokens.canary_texts() + ["50%的人-说", "-%-", "小明在2020年-3月说：ABC123 def。"]
    for text in texts:
        expected = [(p.word, p.flag) for p in posseg.lcut(text)]
        assert seg.cut_tagged(text) == expected, text
        on, off, pos = seg.cut_all(text)
        assert pos == expected and (on, off) == seg.cut_both(text)
    assert seg.pos_exact


@pytest.mark.slow
def test_a_tagged_cut_that_disagrees_falls_back_to_posseg(monkeypatch, caplog):
    from jieba import posseg

    seg = zh_tokens._reference_segmenter()
    monkeypatch.setattr(zh_tokens._PosHMM, "detail", lambda self, text: [(text, "n")])  # unknown runs stay whole
    with caplog.at_level(logging.WARNING, logger="storybench"):
        seg.cut_tagged("欧阳娜娜来了。")
    assert not seg.pos_exact and "differs from jieba.posseg" in caplog.text
    for text in zh_tokens.canary_texts()[:5]:
        assert seg.cut_tagged(text) == [(p.word, p.flag) for p in posseg.lcut(text)]
        assert seg.cut_all(text)[2] == seg.cut_tagged(text)


@pytest.mark.parametrize("backend", ["jieba", "jieba_next"])
def test_one_pass_gives_both_modes_exactly(backend):
    if backend == "jieba_next":
        pytest.importorskip("jieba_next")
    seg = zh_tokens.load(backend)
    assert seg.name == backend and seg.one_pass
    tok = _plain_jieba()
    for text in MIXED + zh_tokens.canary_texts():
        on, off = seg.cut_both(text)
        assert on == tok.lcut(text, HMM=True)
        assert off == tok.lcut(text, HMM=False)
        assert seg.lcut(text) == on and seg.lcut(text, HMM=False) == off
        assert [(w, s, e) for w, s, e in seg.tokenize(text)] == list(tok.tokenize(text))


def test_reference_backend_is_always_jieba():
    assert zh_tokens.resolve("jieba") == "jieba"
    assert zh_tokens.backend_info("jieba")["version"].startswith("0.42")


def test_self_check_names_the_first_difference():
    reference = zh_tokens.load("jieba")
    assert zh_tokens.self_check(reference) is None
    assert zh_tokens.self_check(_Shifted(reference)).startswith("HMM=True")


def test_a_backend_that_differs_on_a_canary_falls_back_to_jieba(monkeypatch, caplog):
    reference = zh_tokens.load("jieba")
    monkeypatch.setattr(zh_tokens, "_RESOLVED", {})
    monkeypatch.setattr(zh_tokens, "_SEGMENTERS", {"jieba": reference})
    monkeypatch.setitem(zh_tokens._FACTORIES, "jieba_next", lambda: _Shifted(reference))
    with caplog.at_level(logging.WARNING, logger="storybench"):
        assert zh_tokens.resolve("jieba_next") == "jieba"
    assert "splits a canary text differently" in caplog.text
    assert zh_tokens.load("jieba_next") is reference


def test_a_missing_backend_falls_back_to_jieba(monkeypatch):
    def missing():
        raise ImportError("no jieba_next")

    monkeypatch.setattr(zh_tokens, "_RESOLVED", {})
    monkeypatch.setattr(zh_tokens, "_SEGMENTERS", {"jieba": zh_tokens.load("jieba")})
    monkeypatch.setitem(zh_tokens._FACTORIES, "jieba_next", missing)
    assert zh_tokens.resolve("auto") == "jieba"


@pytest.mark.slow
def test_a_one_pass_cut_that_disagrees_falls_back_to_lcut(monkeypatch, caplog):
    seg = zh_tokens._reference_segmenter()
    seg._hmm_cut = lambda buf: [buf]  # a broken HMM step: unknown runs stay whole
    monkeypatch.setattr(zh_tokens, "_SEGMENTERS", {"jieba": seg})
    with caplog.at_level(logging.WARNING, logger="storybench"):
        loaded = zh_tokens.load("jieba")
    assert loaded is seg and not seg.one_pass and "cutting twice" in caplog.text
    tok = _plain_jieba()
    for text in zh_tokens.canary_texts():
        assert seg.cut_both(text) == (tok.lcut(text), tok.lcut(text, HMM=False))


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="jieba_next"):
        zh_tokens.configure("pkuseg")


@pytest.mark.slow
def test_accelerated_backend_gives_identical_tokens_on_real_stories():
    pytest.importorskip("jieba_next")
    assert zh_tokens.resolve("auto") == "jieba_next"
    path = shared_path("lot", "outgen_val_sample.jsonl")
    stories = [json.loads(line)["story"] for line in path.read_text(encoding="utf-8").splitlines()]
    fast, tok = zh_tokens.load("jieba_next"), _plain_jieba()
    assert [fast.cut_both(s) for s in stories] == [(tok.lcut(s), tok.lcut(s, HMM=False)) for s in stories]
