"""The native jieba core (annotators/text/_zhcut.c): built where a compiler is, identical to the
pure-Python route, walk and part-of-speech Viterbi it replaces, refused when it is not."""
from __future__ import annotations

import json
import logging
import random
import shutil

import jieba
import pytest

from annotators.text import zh_tokens
from conftest import SHARED_DATA

if shutil.which("cc") is None:  # no compiler: the module may be missing, and then nothing here applies
    pytest.importorskip("annotators.text._zhcut")


def _module():
    from annotators.text import _zhcut

    return _zhcut


def test_the_native_module_is_built_where_a_compiler_is():
    """`make setup` compiles it (optional only for machines without a C compiler)."""
    assert _module().walk and zh_tokens._NATIVE is not None
    assert zh_tokens.load("jieba").native is not None


def _python_segmenter():
    """A reference segmenter that runs only the pure-Python route and walk."""
    tok = jieba.Tokenizer()
    tok.initialize()
    from jieba import finalseg

    return zh_tokens.Segmenter("python", zh_tokens._best_route(tok.FREQ, tok.total), tok.FREQ, finalseg.cut, tok)


def _texts():
    texts = zh_tokens.canary_texts() + [
        "Tom和Jerry在2号楼302室打了一下午的电子游戏🎮，还吃了3.14个派。",
        "  空格   和\t制表符\r\n换行 也要 一样 处理。abc-def_ghi 甲-三七%", "", "x", "一", "。。。",
        "阿卜杜勒·拉赫曼和欧阳娜娜在长江大桥上看日出",
        "a\r\nb\r\r\n c\u3000d%e-f 3.5% x-y 一-二 \U0001f600\t\n\r", "\r\n", "%%--", "中文%中文-ab\x00",
    ]
    for path in sorted((SHARED_DATA / "lot").glob("*.jsonl"))[:3]:
        for line in path.read_text(encoding="utf-8").splitlines()[:60]:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and isinstance(record.get("story"), str):
                texts.append(record["story"])
    return texts


@pytest.mark.parametrize("backend", ["jieba", "jieba_next"])
def test_native_cut_equals_the_python_cut(backend):
    if backend == "jieba_next":
        pytest.importorskip("jieba_next")
    fast = zh_tokens.load(backend)
    assert fast.native is not None
    python = _python_segmenter()
    called = _python_segmenter()  # the native cut over a route it must call (no native table)
    assert called.use_native(_module()) is None
    for text in _texts():
        want = python.cut_all(text)
        assert fast.cut_all(text) == want, text[:40]
        assert called.cut_all(text) == want, text[:40]
    for text in _texts():  # again: now the unknown runs come from the HMM caches the C code reads
        assert fast.cut_all(text) == python.cut_all(text), text[:40]
    assert fast._hmm_cache and fast._pos_cache


def test_the_native_walk_takes_cached_runs_without_calling_back():
    """A run in the HMM caches is extended from there: the Python methods are not called."""
    seg = _python_segmenter()
    assert seg.use_native(_module()) is None
    text = "欧阳娜娜在长江大桥上看日出"
    want = seg.cut_all(text)
    calls = []
    seg._runs = lambda buf, on: calls.append(buf)
    seg._pos_runs = lambda buf, pos: calls.append(buf)
    assert seg.cut_all(text) == want and not calls
    seg._hmm_cache.clear()
    seg._pos_cache.clear()
    seg.cut_all(text)
    assert calls  # without the cached runs, the methods are asked again


def test_native_route_equals_jiebas_route():
    tok = jieba.Tokenizer()
    tok.initialize()
    python = zh_tokens._best_route(tok.FREQ, tok.total)
    fast = zh_tokens._native_route(tok.FREQ, tok.total, _module())
    blocks = [b for t in _texts() for b in zh_tokens.RE_HAN.findall(t)]
    assert blocks and [fast(b) for b in blocks] == [python(b) for b in blocks]
    for block in blocks[:200]:
        dag = tok.get_DAG(block)
        route: dict = {}
        tok.calc(block, dag, route)
        assert fast(block) == [route[i][1] for i in range(len(block))]  # jieba's own get_DAG + calc


def test_native_part_of_speech_viterbi_equals_jiebas_on_random_runs():
    hmm = zh_tokens._PosHMM()
    assert hmm._native_path is not None
    char_state, _, _, emit = hmm._tables
    pools = [sorted(char_state), sorted({c for d in emit.values() for c in d})]
    rng = random.Random(7)
    for pool in pools:
        for _ in range(1500):
            text = "".join(rng.choice(pool) for _ in range(rng.randint(1, 16)))
            assert hmm._native_path(text) == hmm._viterbi(text, *hmm._tables)[1], text


def test_the_stored_viterbi_paths_are_jiebas_and_a_wrong_one_refuses_the_native_viterbi(monkeypatch, caplog):
    """zh_canary_viterbi.json holds jieba's own Python Viterbi path of every check run (so a
    process checks the native Viterbi without running jieba's); a stored path the native one
    does not give means jieba's Viterbi, with a warning."""
    hmm = zh_tokens._PosHMM()
    stored = zh_tokens.canary_viterbi()
    assert stored["texts"] == hmm.check_texts() and len(stored["texts"]) > 300
    assert stored["paths"] == hmm.python_paths()
    wrong = json.loads(json.dumps(stored))
    path = wrong["paths"][5]
    path[0] = "S/x" if path[0] != "S/x" else "B/n"
    monkeypatch.setattr(zh_tokens, "canary_viterbi", lambda: wrong)
    with caplog.at_level(logging.WARNING, logger="storybench"):
        assert zh_tokens._PosHMM()._native_path is None
    assert "differs from jieba's" in caplog.text


class _Broken:
    """A native module whose walk drops the last token of every block (and cut, of every text)."""

    def __init__(self, real):
        self.real = real

    def walk(self, blk, route, on, off, pos, tags, runs, pos_runs):
        self.real.walk(blk, route, on, off, pos, tags, runs, pos_runs)
        for out in (on, off):
            if out:
                out.pop()

    def cut(self, text, table, logtotal, route, on, off, pos, tags, runs, pos_runs, pos_block):
        self.real.cut(text, table, logtotal, route, on, off, pos, tags, runs, pos_runs, pos_block)
        for out in (on, off):
            if out:
                out.pop()


def test_a_native_walk_that_differs_is_refused(caplog):
    seg = _python_segmenter()
    assert seg.use_native(_Broken(_module())) is not None and seg.native is None
    assert seg.use_native(_module()) is None and seg.native is not None
    with caplog.at_level(logging.WARNING, logger="storybench"):
        seg.native = None
        zh_tokens._NATIVE, saved = _Broken(_module()), zh_tokens._NATIVE
        try:
            zh_tokens._use_native(seg)
        finally:
            zh_tokens._NATIVE = saved
    assert seg.native is None and "differs from the Python one" in caplog.text


def test_the_environment_turns_it_off(monkeypatch):
    monkeypatch.setenv("STORYBENCH_ZH_NATIVE", "0")
    assert zh_tokens._native_module() is None
    monkeypatch.setenv("STORYBENCH_ZH_NATIVE", "1")
    assert zh_tokens._native_module() is not None


def test_the_native_route_on_a_small_dictionary():
    """Words, zero-count prefixes, float counts, astral characters and unknown characters
    route as the Python route does over the dict itself."""
    freq = {"天": 50, "天气": 30, "天气预": 0, "天气预报": 12.5, "预": 3, "报": 4, "好": 0,
            "\U0001f600": 2, "\U0001f600\U0001f600": 7, "气": 1}
    total = sum(freq.values())
    fast, python = zh_tokens._native_route(freq, total, _module()), zh_tokens._best_route(freq, total)
    for block in ("天气预报好", "天天气气预报", "\U0001f600\U0001f600\U0001f600天", "好好", "未知字", ""):
        assert fast(block) == python(block)


def test_jieba_next_takes_the_native_table_route_when_it_walks_alike():
    pytest.importorskip("jieba_next")
    seg = zh_tokens.load("jieba_next")
    if seg.name != "jieba_next":
        pytest.skip("jieba_next did not pass its self-check here")
    assert getattr(seg._route, "__name__", "") == "native_route"
    blocks = [b for t in _texts()[:20] for b in zh_tokens.RE_HAN.findall(t)]
    reference = zh_tokens.load("jieba")
    assert [seg.cut_all(b)[0] for b in blocks] == [reference.cut_all(b)[0] for b in blocks]
    assert zh_tokens._path([3, 1, 3, 3, 4, 6, 7, 8, 8, 0], 9) == [3, 4, 6, 8]


def test_the_native_cut_tags_route_words_by_their_table_entries():
    """With a table route whose entries were tagged from the segmenter's own tag dict, the
    C cut tags by entry: the same pairs as the dict lookups (words, zero-count prefixes,
    single characters, words the dict lacks); a table tagged from another dict is not used."""
    freq = {"天": 50, "天气": 30, "天气预": 0, "天气预报": 12.5, "预": 3, "报": 4, "好": 0, "气": 1, "很": 9}
    tags = {"天": "n", "天气": "n", "天气预报": "nz", "预": "v", "好": "a", "很": "d", "外": "f"}
    route = zh_tokens._native_route(freq, sum(freq.values()), _module())
    texts = ["天气预报很好。", "天天气气预报", "好好外外天", "未知的字，很好", "天气预"]

    def tagged(table_tags):
        _module().freq_table_tags(route.table, table_tags)
        out = []
        for text in texts:
            pos: list = []
            _module().cut(text, route.table, route.logtotal, route, None, None, pos, tags,
                          lambda buf, on: on.extend(buf), lambda buf, pos: pos.extend((c, tags.get(c, "x")) for c in buf),
                          lambda blk, pos: None)
            out.append(pos)
        return out

    by_dict = tagged({"天": "zz"})  # another dict: the entries are not trusted, the dict is read
    by_entry = tagged(tags)
    assert by_entry == by_dict
    assert ("天气预报", "nz") in by_entry[0] and ("很", "d") in by_entry[0] and ("。", "x") in by_entry[0]
    assert ("外", "f") in by_entry[2]  # in the tag dict only: looked up there


def _fresh_accelerated(monkeypatch, cache_dir):
    """A new jieba_next segmenter in this process, with its table cache in `cache_dir`."""
    monkeypatch.setenv("STORYBENCH_CACHE_DIR", str(cache_dir))
    monkeypatch.setattr(zh_tokens, "_SEGMENTERS", {})
    return zh_tokens._accelerated_segmenter()


def test_the_accelerated_backend_caches_its_table_and_cuts_the_same_from_it(monkeypatch, tmp_path):
    """The first jieba_next load builds FREQ and writes its native table to the cache; the
    next process reads the table and builds no FREQ at all, and cuts every text exactly as
    the pure-Python reference does, in every mode."""
    pytest.importorskip("jieba_next")
    built = _fresh_accelerated(monkeypatch, tmp_path)
    assert isinstance(built._freq, dict) and len(list(tmp_path.glob("zh-table-*.bin"))) == 1
    cached = _fresh_accelerated(monkeypatch, tmp_path)
    assert isinstance(cached._freq, zh_tokens._TableFreq) and cached.native is not None
    assert zh_tokens.self_check(cached) is None
    python = _python_segmenter()
    for text in _texts():
        assert cached.cut_all(text) == python.cut_all(text), text[:40]
    assert cached.pos_exact


def test_a_damaged_table_cache_is_rebuilt(monkeypatch, tmp_path, caplog):
    pytest.importorskip("jieba_next")
    _fresh_accelerated(monkeypatch, tmp_path)
    (path,) = tmp_path.glob("zh-table-*.bin")
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="storybench"):
        seg = _fresh_accelerated(monkeypatch, tmp_path)
    assert "ignoring the jieba table cache" in caplog.text and isinstance(seg._freq, dict)
    assert _fresh_accelerated(monkeypatch, tmp_path)._freq.__class__ is zh_tokens._TableFreq  # rewritten


def test_the_table_cache_can_be_turned_off(monkeypatch, tmp_path):
    pytest.importorskip("jieba_next")
    monkeypatch.setenv("STORYBENCH_ZH_CACHE", "0")
    seg = _fresh_accelerated(monkeypatch, tmp_path)
    assert isinstance(seg._freq, dict) and not list(tmp_path.iterdir())


def test_old_table_caches_are_pruned(monkeypatch, tmp_path):
    pytest.importorskip("jieba_next")
    import os
    import time

    for i in range(6):  # caches of older builds
        old = tmp_path / f"zh-table-old{i}.bin"
        old.write_bytes(b"x")
        os.utime(old, (time.time() - 1000 + i, time.time() - 1000 + i))
    _fresh_accelerated(monkeypatch, tmp_path)
    left = sorted(p.name for p in tmp_path.glob("zh-table-*.bin"))
    assert len(left) == zh_tokens._CACHES_KEPT and "zh-table-old5.bin" in left and "zh-table-old0.bin" not in left


def test_cut_sentences_in_one_native_call_equals_cutting_each_sentence():
    """A story's sentences are cut in one C call (`cut_many`): the same non-blank words per
    sentence, HMM-off tokens and posseg pairs as `cut_all` on each sentence, whitespace-only
    and empty sentences included."""
    from annotators.text.zh_sentences import split_sentences

    seg = zh_tokens.load()
    assert seg.native is not None
    python = _python_segmenter()
    stories = [split_sentences(t) for t in _texts()] + [["", " \t", "一个\u3000人。", "a b", "\r\n"]]
    for sentences in stories:
        for off, pos in ((False, True), (True, False), (True, True), (False, False)):
            got = seg.cut_sentences(sentences, off=off, pos=pos)
            parts = [python.cut_all(s, off=off, pos=pos) for s in sentences]
            want = (tuple(tuple(w for w in on if w.strip()) for on, _, _ in parts),
                    [t for _, o, _ in parts for t in o] if off else None,
                    [p for _, _, ps in parts for p in ps] if pos else None)
            assert got == want, sentences[:2]
            assert python.cut_sentences(sentences, off=off, pos=pos) == want  # the pure-Python path
