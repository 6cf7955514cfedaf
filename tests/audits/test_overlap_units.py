"""Unit tests of the 8-gram overlap annotators (LOT Table 14) on tiny inputs, exact values."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotators.audits import overlap as ng
from annotators.audits import records as ar
from annotators.audits.overlap_report import summarize, table14_markdown
from annotators.core.outcome import Drop

WS = ng.make_tokenizer("whitespace")
CFG3 = ng.OverlapConfig(n=3, tokenizer="whitespace")


def test_placeholders_are_removed_before_tokenising():
    assert ng.strip_placeholders("他走了。<mask>她[MASK]哭<MASK>了。") == "他走了。她哭了。"


def test_jieba_tokens_drop_whitespace_and_keep_punctuation():
    tok = ng.make_tokenizer("jieba")
    assert tok("小猴 边跑边笑，\n结果掉进了水池里。") == [
        "小猴",
        "边",
        "跑",
        "边",
        "笑",
        "，",
        "结果",
        "掉",
        "进",
        "了",
        "水池",
        "里",
        "。",
    ]


def test_regex_tokenizer_splits_words_and_punctuation():
    assert ng.make_tokenizer("regex")("It's late, Tom.") == ["It", "'", "s", "late", ",", "Tom", "."]


def test_unknown_tokenizer_is_an_error():
    with pytest.raises(ValueError):
        ng.make_tokenizer("bpe")


def test_ngrams_are_contiguous_and_never_cross_fields():
    grams = ng.example_ngrams(["a b c d", "e f g"], WS, CFG3)
    assert grams == ("a\x1fb\x1fc", "b\x1fc\x1fd", "e\x1ff\x1fg")  # no "c d e" / "d e f"


def test_ngrams_count_multiplicity_and_short_fields_give_none():
    assert ng.example_ngrams(["x y x y x"], WS, CFG3) == ("x\x1fy\x1fx", "y\x1fx\x1fy", "x\x1fy\x1fx")
    assert ng.example_ngrams(["a b", ""], WS, CFG3) == ()


def test_field_texts_expand_lists_in_field_order():
    record = {"title": "T", "story": "S", "outline": ["o1", "o2"], "other": "x"}
    assert ng.field_texts(record, ("title", "story", "outline")) == ["T", "S", "o1", "o2"]


def test_score_example_counts_with_multiplicity():
    ex = ng.ExampleGrams("t", "test", "e1", ("a", "b", "a", "c"))
    assert ng.score_example(ex, {"a"}) == {
        "task": "t",
        "split": "test",
        "example_id": "e1",
        "n": 4,
        "o": 2,
        "ratio": 0.5,
    }
    empty = ng.score_example(ng.ExampleGrams("t", "test", "e2", ()), {"a"})
    assert (empty["n"], empty["o"], empty["ratio"]) == (0, 0, 0.0)


def test_matched_ngrams_emit_only_wanted_distinct_sorted():
    toks = [["a", "b", "c", "a", "b", "c"], ["c", "a", "b"]]
    wanted = frozenset({"a\x1fb\x1fc", "c\x1fa\x1fb", "z\x1fz\x1fz"})
    assert ng.matched_ngrams(toks, wanted, 3) == ["a\x1fb\x1fc", "c\x1fa\x1fb"]
    assert ng.matched_ngrams(toks, frozenset(), 3) == []


def test_separator_never_survives_in_tokens():
    for name in ng.TOKENIZERS:
        assert all("\x1f" not in t for t in ng.make_tokenizer(name)("甲\x1f乙 a\x1fb c"))


def test_summarize_gives_every_table14_figure():
    rows = [
        {"n": 10, "o": 0, "ratio": 0.0},
        {"n": 20, "o": 2, "ratio": 0.1},
        {"n": 5, "o": 3, "ratio": 0.6},
        {"n": 0, "o": 0, "ratio": 0.0},
    ]
    s = summarize("senpos", "test", "senpos/train", rows)
    assert s == {
        "task": "senpos",
        "split": "test",
        "reference": "senpos/train",
        "n_examples": 4,
        "ratio": 5 / 35,
        "ngrams": 5,
        "examples": 2,
        "examples_over_10pct": 1,
        "max_ratio": 0.6,
        "total_ngrams": 35,
    }


def test_summarize_empty_is_zero():
    s = summarize("clozet", "test", "r", [])
    assert (s["ratio"], s["ngrams"], s["max_ratio"], s["n_examples"]) == (0.0, 0, 0.0, 0)


def test_markdown_has_the_table14_rows_in_task_order():
    rows = [
        summarize(t, "test", f"{t}/train", [{"n": 1000, "o": o, "ratio": o / 1000}])
        for t, o in (("outgen", 0), ("senpos", 1040), ("clozet", 6))
    ]
    md = table14_markdown(rows)
    assert "| Tasks | ClozeT | SenPos | OutGen |" in md
    assert "| Percent | 0.60% | 104.00% | 0.00% |" in md
    assert "| # 8-grams | 6 | 1,040 | 0 |" in md
    assert "| # Exam >10% | 0 | 1 | 0 |" in md


@pytest.mark.parametrize(
    "head,reason",
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary_file"),
        ("中文".encode("gbk") + b" more", "encoding"),  # a GBK file names its charset (issue 28)
        ("一个故事\n".encode("utf-16"), "utf16"),
        ("a story\n".encode("utf-16-le"), "utf16"),  # no byte-order mark: NULs at every other byte
        ("一个故事。\n".encode() * 7 + "坏".encode("gbk") + b"\n", None),  # one bad line: that line only
        ("一个故事。\n".encode(), None),
        ("一个故事".encode()[:-1], None),  # a character cut by the sniff window is fine
    ],
)
def test_sniff_text(head, reason):
    out = ar.sniff_text(head)
    assert (out.reason if out else None) == reason


@pytest.mark.parametrize(
    "kind,raw,expected",
    [
        ("text", "一行字".encode(), {"text": "一行字"}),
        ("jsonl", json.dumps({"story": "故事"}).encode(), {"story": "故事"}),
        ("jsonl", b"{broken", "malformed_json"),
        ("jsonl", b"[1, 2]", "not_an_object"),
        ("text", b"\xff\xfe", "utf16"),  # the UTF-16 byte-order mark (issue 28)
        ("text", b"ok \xff here", "not_utf8"),
    ],
)
def test_parse_record(kind, raw, expected):
    out = ar.parse_record(kind, raw)
    assert (out.reason if isinstance(out, Drop) else out) == expected


@pytest.mark.parametrize(
    "record,expected",
    [
        ({"example_id": "e", "split": "test", "story": "s", "plot": "p"}, ("e", "test")),
        ({"split": "test", "story": "s", "plot": "p"}, "missing_field"),
        ({"example_id": "e", "split": "dev", "story": "s", "plot": "p"}, "unknown_split"),
        ({"example_id": "e", "split": "val", "story": "s"}, "missing_field"),
        ({"example_id": "e", "split": "val", "story": "s", "plot": 3}, "bad_field_type"),
    ],
)
def test_check_example(record, expected):
    out = ar.check_example(record, ("story", "plot"))
    assert (out.reason if isinstance(out, Drop) else out) == expected


def test_a_missing_text_field_names_the_keys_the_record_has():
    """The detail was the field's name alone ("text"), when a user passed a story table whose
    text is under "story"."""
    out = ar.check_example({"id": "x", "title": "t", "story": "s"}, ("text",), default_split="test")
    assert out == Drop("missing_field", "no 'text' field; its keys: ['id', 'story', 'title']")


def test_check_example_fallback_id_and_list_fields():
    rec = {"story": "s", "outline": ["a", "b"]}
    assert ar.check_example(
        rec, ("story", "outline"), list_fields=("outline",), default_split="test", fallback_id="f.jsonl:3"
    ) == ("f.jsonl:3", "test")
    bad = ar.check_example(
        {**rec, "outline": ["a", 1]}, ("outline",), list_fields=("outline",), default_split="test", fallback_id="x"
    )
    assert bad.reason == "bad_field_type"


def test_file_kind_and_reference_fields():
    assert [ar.file_kind(p) for p in ("a.parquet", "b.jsonl.gz", "c.txt", "d")] == ["parquet", "jsonl", "text", "text"]
    assert ar.reference_fields_of({"text": "x", "n": 1}, ar.REFERENCE_FIELDS) == ["text"]
    assert ar.reference_fields_of({"n": 1}, ar.REFERENCE_FIELDS).reason == "no_text_fields"
    assert ar.check_split(("clozet/val", 0)).reason == "empty_split"
    assert ar.check_split(("clozet/val", 3)) == ["clozet/val"]


words = st.lists(st.sampled_from(["甲", "乙", "丙", "a", "b"]), max_size=30)


@settings(max_examples=60, deadline=None)
@given(fields=st.lists(words, min_size=1, max_size=3), reference=st.lists(words, max_size=3), n=st.integers(1, 4))
def test_ratio_in_unit_interval_and_o_at_most_n(fields, reference, n):
    cfg = ng.OverlapConfig(n=n, tokenizer="whitespace")
    ex = ng.ExampleGrams("t", "test", "e", ng.example_ngrams([" ".join(f) for f in fields], WS, cfg))
    ref_set = set(ng.matched_ngrams(reference, frozenset(ex.grams), n))
    row = ng.score_example(ex, ref_set)
    assert 0.0 <= row["ratio"] <= 1.0 and 0 <= row["o"] <= row["n"]
    assert ng.score_example(ex, set(ex.grams))["ratio"] == (1.0 if ex.grams else 0.0)
    s = summarize("t", "test", "r", [row])
    assert 0.0 <= s["ratio"] <= s["max_ratio"] <= 1.0


# ------------------------------------------------------------- the reference prefilter
WORDS = st.sampled_from(
    ["小明", "在", "河边", "走", "了", "很久", "。", "，", "a", "bc", "d e", "长长长长长长长长长长"]
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(WORDS, min_size=3, max_size=12), min_size=1, max_size=4),
    st.lists(st.lists(WORDS, max_size=30), max_size=6),
    st.sampled_from(["jieba", "whitespace", "regex"]),
    st.integers(2, 5),
)
def test_the_prefilter_never_skips_a_text_that_matches(tests, refs, name, n):
    """Every reference text whose tokens hold a test n-gram passes `may_hold`, whatever the
    tokenizer, n and spacing; the texts mix the test texts' words (places that look alike)."""
    tok = ng.make_tokenizer(name)
    config = ng.OverlapConfig(n=n, tokenizer=name)
    wanted = frozenset(g for words in tests for g in ng.example_ngrams([" ".join(words)], tok, config))
    strings = ng.TestStrings(wanted)
    texts = [sep.join(words) for words in refs + tests for sep in ("", " ")]
    for text in texts:
        if ng.matched_ngrams([tok(text)], wanted, n):
            assert strings.may_hold(text), text


def test_the_prefilter_skips_unrelated_text_and_keeps_long_test_strings():
    tok = ng.make_tokenizer("whitespace")
    long_words = [f"word{i:02d}x" * 2 for i in range(8)]  # 8 tokens of 14 characters: a 112-character string
    wanted = frozenset(ng.example_ngrams([" ".join(long_words)], tok, ng.OverlapConfig(n=8, tokenizer="whitespace")))
    strings = ng.TestStrings(wanted)
    assert strings.k == ng.PREFIX_CHARS
    assert strings.may_hold("before " + " ".join(long_words) + " after")
    assert not strings.may_hold(" ".join(long_words[:7]) + " other")  # the first 16 characters hit, the rest differs
    assert not strings.may_hold("nothing of the kind here at all, nothing")
    assert not ng.TestStrings(frozenset()).may_hold("anything")


def test_the_prefilter_agrees_with_tokenizing_everything_on_real_stories():
    from conftest import shared_path

    tok = ng.make_tokenizer("jieba")
    config = ng.OverlapConfig()
    lines = shared_path("lot", "outgen_val_sample.jsonl").read_text(encoding="utf-8").splitlines()
    stories = [json.loads(line)["story"] for line in lines]
    tests, others = stories[:20], stories[20:]
    wanted = frozenset(g for s in tests for g in ng.example_ngrams([s], tok, config))
    strings = ng.TestStrings(wanted)
    # the reference: the other stories, the test stories, and test sentences inside other stories
    refs = others + tests + [o[: len(o) // 2] + t.split("。")[1] + o[len(o) // 2 :] for o, t in zip(others, tests)]
    full = [bool(ng.matched_ngrams([tok(r)], wanted, config.n)) for r in refs]
    kept = [strings.may_hold(r) for r in refs]
    assert all(k for k, f in zip(kept, full) if f)
    assert sum(full) >= 20 and sum(kept) <= sum(full) + 5  # few texts are tokenized for nothing


def test_window_hashes_by_doubling_equal_the_polynomial_of_each_window():
    import numpy as np

    codes = np.array([ord(c) for c in "小明在河边走了很久，突然看见了一只受伤的小鸟。" * 3], dtype=np.uint64)
    for k in range(1, 33):
        windows = np.lib.stride_tricks.sliding_window_view(codes, k)
        direct = [sum(int(c) * int(ng._BASE) ** (k - 1 - j) for j, c in enumerate(w)) % 2**64 for w in windows]
        assert ng._window_hashes(codes, k).tolist() == direct
        assert ng._window_hashes(windows.copy(), k).tolist() == direct


def test_the_prefilter_is_built_once_for_a_test_set_and_its_copies():
    """A pool worker gets the side input again with every bundle: an equal copy reuses the
    prefilter, a different test set gets its own."""
    from annotators.audits import steps

    grams = frozenset({"小明\x1f在\x1f河边", "走\x1f了\x1f很久"})
    first = steps.test_strings("plotcom", grams)
    assert steps.test_strings("plotcom", frozenset(set(grams))) is first
    other = steps.test_strings("plotcom", frozenset({"别的\x1f东西\x1f了"}))
    assert other is not first and other.may_hold("别的东西了") and not other.may_hold("小明在河边")


def test_merged_matches_are_the_union_per_task_and_count_their_documents():
    from annotators.audits.steps import MatchedGrams, merge_matched

    docs = [
        MatchedGrams("outgen", (("a",), ("b",))),
        MatchedGrams("outgen", ()),
        MatchedGrams("outgen", (("b",), ("c",))),
    ]
    docs.append(MatchedGrams("clozet", (("z",),), 3))
    assert merge_matched(docs) == [
        MatchedGrams("clozet", (("z",),), 3),
        MatchedGrams("outgen", (("a",), ("b",), ("c",)), 3),
    ]
    assert merge_matched([]) == []
