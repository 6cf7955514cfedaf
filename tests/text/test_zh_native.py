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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


def test_native_one_permutation_hash_equals_numpys():
    """near_dup's band keys take the C `oph`; it must give the numpy signature's bytes."""
    from annotators.core import near_dup

    rng = random.Random(7)
    texts = ["", "a", "abcd", "abcde", "一个星期天的上午，小狗熊带着皮球来到森林公园。\n 它们玩了很久。",
             "\U0001d518\U0001d52b text \U0001f600 " * 5, "x" * 2000]
    texts += ["".join(rng.choice("ab 天地") for _ in range(rng.randint(0, 40))) for _ in range(300)]
    for n, bins, seed in ((5, 128, 1), (3, 64, 7), (8, 256, 2 ** 64 - 1), (1, 2, 0)):
        for text in texts:
            want = near_dup.oph_signature(text, n, bins, seed).astype("<u8").tobytes()
            assert _module().oph("".join(text.split()), n, bins, seed) == want, (text, n, bins)
            assert near_dup.oph_bytes(text, n, bins, seed) == want
    assert near_dup._native_oph(5, 128, 1) is _module().oph


def test_a_native_oph_that_differs_is_refused(monkeypatch):
    from annotators.core import near_dup

    monkeypatch.setattr(near_dup, "_native_oph_checked", {})
    monkeypatch.setattr(_module(), "oph", lambda chars, n, bins, seed: b"\0" * (8 * bins))
    with pytest.warns(RuntimeWarning, match="differs"):
        assert near_dup._native_oph(5, 128, 1) is None
    text = "春眠不觉晓处处闻啼鸟"
    assert near_dup.oph_bytes(text, 5, 128, 1) == near_dup.oph_signature(text, 5, 128, 1).astype("<u8").tobytes()


def test_native_shingle_sets_score_exactly_as_python_sets():
    """near_dup verifies candidate pairs with the C shingle keys: set sizes, shared counts and
    so every Jaccard equal the Python sets', for every shingle size it takes (1-6), on texts
    with repeats, NUL, astral characters and texts shorter than a shingle."""
    from annotators.core import near_dup

    rng = random.Random(11)
    alphabet = "ab 天地\x00\U0010ffff\U0001f600"
    texts = ["", "a", "abcd", "abcde", "ab\x00", "\x00ab", "x" * 700]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(250)]
    for n in (1, 2, 5, 6):
        made = [(near_dup.shingles(t, n), near_dup.shingle_set(t, n)) for t in texts]
        assert all(isinstance(keys, bytes) for _, keys in made)
        for grams, keys in made[:60]:
            for other_grams, other in made:
                assert near_dup.shingle_jaccard(keys, other) == near_dup.jaccard(grams, other_grams)
    assert near_dup._native_shingles(7) is None  # 7 x 21 bits do not fit a key: Python sets
    assert isinstance(near_dup.shingle_set("abcdefghij", 7), set)


def test_native_shingle_sets_that_differ_are_refused(monkeypatch):
    from annotators.core import near_dup

    monkeypatch.setattr(near_dup, "_native_shingles_checked", {})
    monkeypatch.setattr(_module(), "shingle_keys", lambda chars, n: b"")
    with pytest.warns(RuntimeWarning, match="differ"):
        assert near_dup._native_shingles(5) is None
    assert near_dup.shingle_set("春眠不觉晓处处", 5) == near_dup.shingles("春眠不觉晓处处", 5)


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


def test_native_han_count_counts_as_the_regex_does():
    """zh_clean.han_count is the C count when built (SenPos and sentence merging call it per
    sentence); it must equal the regex count on every kind of character, edges included."""
    from annotators.text import zh_clean

    assert zh_clean.han_count is _module().han_count
    rng = random.Random(3)
    pool = [chr(c) for lo, hi in ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF))
            for c in (lo - 1, lo, lo + 1, hi - 1, hi, hi + 1)] + list("ab 。，\n\x00é") + ["\U00020000", "\U0001f600"]
    for _ in range(3000):
        text = "".join(rng.choice(pool) for _ in range(rng.randint(0, 25)))
        assert zh_clean.han_count(text) == zh_clean.python_han_count(text), text


def test_han_count_without_the_native_module(monkeypatch):
    from annotators.text import zh_clean

    monkeypatch.setenv("STORYBENCH_ZH_NATIVE", "0")
    assert zh_clean._native_han_count() is None
    assert zh_clean.python_han_count("一个abc\u4dbf") == 3


def test_native_posrake_scores_equal_pythons():
    """OutGen's posrake outline scores its phrases with the C `posrake_scored`: the same dict
    (order, float scores, word tuples) as the Python code on real tagged stories and on random
    runs of delimiting tags, list words, line breaks, Latin words and repeats; and the words
    it looks up land in the shared break cache with the values the Python code gives them."""
    from annotators.lot import outline

    outline.load("posrake")
    assert outline._posrake_scored([], 8) == {} and outline._NATIVE_POSRAKE == [_module().posrake_scored]
    seg = zh_tokens.load()
    texts = zh_tokens.canary_texts()
    path = SHARED_DATA / "lot" / "outgen_val_sample.jsonl"
    if path.exists():
        texts += [json.loads(line)["story"] for line in path.read_text(encoding="utf-8").splitlines()[:150]]
    cases = [seg.cut_tagged(t) for t in texts]
    rng = random.Random(5)
    words = [("小狗", "n"), ("熊", "n"), ("带着", "v"), ("，", "x"), ("\n", "x"), ("abc", "eng"), ("3", "m"),
             ("的", "uj"), ("了", "ul"), ("里", "f"), ("我们", "r"), ("跑", "v"), ("皮球", "n"), ("\n", "n")]
    cases += [[rng.choice(words) for _ in range(rng.randint(0, 60))] for _ in range(400)]
    for tagged in cases:
        for max_words in (0, 1, 3, 8):
            want = outline.posrake_scored_python(tagged, max_words)
            got = _module().posrake_scored(tagged, outline.POSRAKE_TAGS, outline._posrake_breaks(),
                                           outline._posrake_break, max_words)
            assert list(got.items()) == list(want.items()), (tagged, max_words)
    breaks = outline._posrake_breaks()
    assert breaks and all(breaks[w] == outline._posrake_break(w) for w in list(breaks)[:500])


def test_a_native_posrake_that_differs_is_refused(monkeypatch):
    from annotators.lot import outline

    monkeypatch.setattr(outline, "_NATIVE_POSRAKE", [])
    monkeypatch.setattr(_module(), "posrake_scored", lambda tagged, tags, breaks, is_break, max_words: {})
    tagged = [("小狗", "n"), ("熊", "n"), ("。", "x")]
    with pytest.warns(RuntimeWarning, match="differ"):
        assert outline._posrake_scored(tagged, 8) == outline.posrake_scored_python(tagged, 8)
    assert outline._NATIVE_POSRAKE == [None]


def test_posrake_without_the_native_module(monkeypatch):
    from annotators.lot import outline

    monkeypatch.setattr(outline, "_NATIVE_POSRAKE", [])
    monkeypatch.setenv("STORYBENCH_ZH_NATIVE", "0")
    tagged = [("小狗", "n"), ("熊", "n"), ("。", "x")]
    assert outline._posrake_scored(tagged, 8) == {"小狗熊": (4.0, ("小狗", "熊"))}  # each word: degree 2 / 1
    assert outline._NATIVE_POSRAKE == [None]


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


def test_native_word_counts_equal_count_words(monkeypatch):
    from annotators.text import words

    rng = random.Random(3)
    alphabet = [chr(c) for c in range(0, 0x3100, 3)] + ["一", "，", "²", "Ⅻ", "😀", "\U0001d7d8", ""]
    sentences = [[rng.choice(alphabet) * rng.randint(1, 2) for _ in range(rng.randint(0, 12))] for _ in range(600)]
    assert words.word_counts(sentences) == [words.count_words(s) for s in sentences]
    assert words._NATIVE == [_module().word_counts]
    monkeypatch.setattr(words, "_NATIVE", [])
    monkeypatch.setattr(_module(), "word_counts", lambda sentences: [0] * len(sentences))
    with pytest.warns(RuntimeWarning, match="differ"):
        assert words.word_counts([["一个", "，"]]) == [1]
    assert words._NATIVE == [None]


def _fresh_accelerated(monkeypatch, cache_dir):
    """A new jieba_next segmenter in this process, with its table cache in `cache_dir`."""
    monkeypatch.setenv("STORYBENCH_CACHE_DIR", str(cache_dir))
    monkeypatch.setattr(zh_tokens, "_SEGMENTERS", {})
    return zh_tokens._accelerated_segmenter()


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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
