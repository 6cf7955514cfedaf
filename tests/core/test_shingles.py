"""annotators.core.shingles: the numpy one-permutation MinHash and exact shingle sets equal
small pure-Python references (written here from their definitions), bit for bit; band keys
are the ones the stories and lot jobs have always made."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from conftest import shared_path
from hypothesis import given, settings
from hypothesis import strategies as st

from annotators.core import near_dup
from annotators.core import shingles as sh

M64 = (1 << 64) - 1


def _splitmix(x: int, seed: int) -> int:
    x = ((x ^ seed) + 0x9E3779B97F4A7C15) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def reference_oph(codes: list[int], n: int, bins: int, seed: int) -> list[int]:
    """One-permutation hashing by its definition, one shingle at a time, in Python ints."""
    if len(codes) < n:
        n = len(codes)
    windows = [codes[i : i + n] for i in range(len(codes) - n + 1)] or [[]]
    shift = 64 - bins.bit_length() + 1
    value: list[int | None] = [None] * bins
    for window in windows:
        h = 0
        for c in window:
            h = (h * 1000003 + c) & M64
        y = _splitmix(h, seed & M64)
        b = y >> shift if shift < 64 else 0
        if value[b] is None or y < value[b]:
            value[b] = y
    out = []
    for b in range(bins):
        d = next(d for d in range(bins) if value[(b + d) % bins] is not None)  # next filled, circularly
        out.append((value[(b + d) % bins] + d * 0x9E3779B97F4A7C15) & M64)
    return out


def reference_band_keys(text: str, config: near_dup.NearDupConfig) -> list[str]:
    codes = [ord(c) for c in "".join(text.split())]
    data = b"".join(v.to_bytes(8, "little") for v in reference_oph(codes, config.shingle, config.num_perm, config.seed))
    b, r = near_dup.bands_rows(config.threshold, config.num_perm)
    return [
        f"{i:03d}-{hashlib.blake2b(data[i * r * 8 : (i + 1) * r * 8], digest_size=12).hexdigest()}" for i in range(b)
    ]


# Han, CJK extension A and its edges, ASCII, emoji and other astral characters, whitespace of
# every kind, NUL and a lone surrogate
CHARS = st.one_of(
    st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF),
    st.characters(min_codepoint=0x3400, max_codepoint=0x4DBF),
    st.characters(min_codepoint=0x20, max_codepoint=0x7E),
    st.characters(min_codepoint=0x1F300, max_codepoint=0x1FAFF),
    st.sampled_from([" ", "\t", "\n", "\u3000", "\u00a0", "\r", "\x00", "\U0010ffff", "\ud800", "，", "。"]),
)
TEXTS = st.text(CHARS, max_size=60)


def _related(draw_text: str, edit: str) -> str:
    """A near copy: the text with one piece replaced, so pairs share many shingles."""
    cut = len(draw_text) // 2
    return draw_text[:cut] + edit + draw_text[cut + len(edit) :]


@settings(max_examples=300, deadline=None)
@given(TEXTS, st.integers(1, 9), st.sampled_from([1, 2, 4, 16, 128, 256]), st.integers(0, M64))
def test_oph_signature_is_the_definitions(text, n, bins, seed):
    codes = [ord(c) for c in "".join(text.split())]
    want = reference_oph(codes, n, bins, seed)
    assert sh.oph_signature(text, n, bins, seed).tolist() == want
    assert sh.oph_bytes(text, n, bins, seed) == b"".join(v.to_bytes(8, "little") for v in want)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, M64), max_size=40), st.integers(1, 9), st.sampled_from([2, 8, 256]), st.integers(0, M64))
def test_oph_of_any_codes_is_the_definitions(codes, n, bins, seed):
    """Word ids (ChapterBreak's book dedup) are any 64-bit values: the arithmetic wraps alike."""
    assert sh.oph_of_codes(np.array(codes, dtype=np.uint64), n, bins, seed).tolist() == reference_oph(
        codes, n, bins, seed
    )


@settings(max_examples=150, deadline=None)
@given(TEXTS, st.sampled_from([0.5, 0.8, 0.9]), st.sampled_from([3, 5]))
def test_band_keys_are_the_definitions(text, threshold, shingle):
    config = near_dup.NearDupConfig(threshold=threshold, shingle=shingle)
    assert near_dup.band_keys(text, config) == reference_band_keys(text, config)


def test_band_keys_are_the_ones_the_jobs_always_made():
    """Band keys decide which pairs are checked, so outputs depend on them: these are the
    keys of the C module the numpy code replaced (and of the numpy code before it)."""
    text = "一个星期天的上午，小狗熊刚刚和小熊菲菲带着自己心爱的皮球，来到了森林公园里玩。"
    assert near_dup.band_keys(text)[:3] == [
        "000-d9e94849f74264e83ad66f71",
        "001-74aeeabdc3cf20d9e1ef2eaf",
        "002-ab2d0dc91bd7d65a4574f99d",
    ]
    stories = [
        json.loads(line)["story"]
        for line in shared_path("lot", "outgen_val_sample.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    digest = hashlib.sha256()
    for story in stories:
        for key in near_dup.band_keys(story):
            digest.update(key.encode() + b"\n")
    assert digest.hexdigest() == "9d34e586d8facdf12dbeb2c0419c003c23ad34fbb991419c47f28a4e087f5043"


@settings(max_examples=300, deadline=None)
@given(TEXTS, TEXTS, st.text(CHARS, max_size=3), st.integers(1, 8))
def test_shingle_sets_count_exactly_as_sets_of_strings(a, b, edit, n):
    """Sizes, shared counts and so every Jaccard equal the sets of strings', for unrelated
    texts, near copies, texts shorter than a shingle and empty ones."""
    for x, y in ((a, b), (a, _related(a, edit)), (a, a), (a, a + b)):
        want = sh.jaccard(sh.shingles(x, n), sh.shingles(y, n))
        fast_x, fast_y = sh.shingle_set(x, n), sh.shingle_set(y, n)
        assert sh.shingle_jaccard(fast_x, fast_y) == want
        assert sh.shingle_jaccard(sh.shingles(x, n), fast_y) == want  # a mixed pair: strings
        assert fast_x.strings() == sh.shingles(x, n)


def test_shingle_sets_stay_exact_when_hashes_collide(monkeypatch):
    """With a hash that keeps only a shingle's last characters, different shingles share
    hashes within a text (the text falls back to its set of strings) and across texts (the
    exact keys decide): every Jaccard is still the sets of strings'."""
    monkeypatch.setattr(sh, "_KEY_MIX", np.array(0, dtype=np.uint64))  # hash = the last key word
    texts = [
        "春眠不觉晓处处闻啼鸟",
        "夜来风雨声花落知多少处处闻啼鸟",
        "不觉晓处处闻啼鸟春眠",
        "甲乙丙丁闻啼鸟",
        "甲乙丙丁戊闻啼鸟",
        "abcdefgh",
        "xbcdefgh",
        "甲乙丙啼鸟丁戊己啼鸟",
        "啼鸟啼鸟",
        "",
    ]
    made = [(sh.shingles(t, 5), sh.shingle_set(t, 5)) for t in texts]
    assert any(isinstance(s, set) for _, s in made) and any(isinstance(s, sh.ShingleSet) for _, s in made)
    for grams, fast in made:
        for other_grams, other in made:
            assert sh.shingle_jaccard(fast, other) == sh.jaccard(grams, other_grams)


def test_shingle_set_of_a_real_story_and_its_near_copy():
    story = json.loads(shared_path("lot", "outgen_val_sample.jsonl").read_text(encoding="utf-8").splitlines()[0])[
        "story"
    ]
    copy = story[:40] + "啊" + story[41:]
    for n in (5, 7):
        want = sh.jaccard(sh.shingles(story, n), sh.shingles(copy, n))
        assert 0.9 < want < 1.0
        assert sh.shingle_jaccard(sh.shingle_set(story, n), sh.shingle_set(copy, n)) == want


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError):
        sh.oph_signature("abc", 5, 100)
    with pytest.raises(ValueError):
        sh.shingle_set("abc", 0)
