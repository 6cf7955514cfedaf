"""USER and ROUGE-L against an independent computation of the definitions (plain code here)."""

from __future__ import annotations

import difflib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.lang.en.stop_words import STOP_WORDS

from annotators.core.outcome import Drop
from annotators.storium.edits import Edit, parse_edit_line, score_edit, summarize
from annotators.storium.user_metric import UserConfig, lcs_length, rouge_l_scores, user_scores, user_tokens


def ref_tokens(text):
    out = []
    for ch in text.lower():
        out.append(ch if ("a" <= ch <= "z" or "0" <= ch <= "9") else " ")
    return "".join(out).split()


def ref_user(gen_text, pub_text, autojunk=False):
    gen, pub = ref_tokens(gen_text), ref_tokens(pub_text)
    sm = difflib.SequenceMatcher(None, gen, pub, autojunk=autojunk)
    matched = 0
    for tag, i1, i2, _, _ in sm.get_opcodes():
        if tag == "equal":
            block = gen[i1:i2]
            if [t for t in block if t not in STOP_WORDS]:
                matched += len(block)
    return ref_prf(matched, len(gen), len(pub))


def ref_prf(hit, n_gen, n_pub):
    p = hit / n_gen if n_gen else 0.0
    r = hit / n_pub if n_pub else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def ref_lcs(a, b):
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            table[i][j] = table[i - 1][j - 1] + 1 if a[i - 1] == b[j - 1] else max(table[i - 1][j], table[i][j - 1])
    return table[-1][-1]


def ref_rouge_l(gen_text, pub_text):
    gen, pub = ref_tokens(gen_text), ref_tokens(pub_text)
    return ref_prf(ref_lcs(gen, pub), len(gen), len(pub))


def test_tokens():
    assert user_tokens("Mara's rope -- TIED, at 3pm!") == ["mara", "s", "rope", "tied", "at", "3pm"]


def test_worked_example():
    gen = "Mara ties the rope. The wind screams."
    pub = "Mara ties the rope and it holds."
    # tokens: gen 7, pub 7; equal block "mara ties the rope" (4, has non-stop words)
    s = user_scores(gen, pub)
    assert (s.precision, s.recall) == (4 / 7, 4 / 7)


def test_stop_word_only_blocks_do_not_count():
    s = user_scores("of the and to", "of the and to")
    assert (s.precision, s.recall, s.f1) == (0.0, 0.0, 0.0)
    assert rouge_l_scores("of the and to", "of the and to").f1 == 1.0


def test_empty_texts_are_zero_not_errors():
    assert user_scores("", "").f1 == 0.0 and rouge_l_scores("", "anything").precision == 0.0


def test_compat_autojunk_changes_long_references():
    gen = " ".join(["the ship would sail at dawn and the crew cheered"] * 20)
    pub = " ".join(["the ship would sail at dawn"] * 40)
    exact, compat = user_scores(gen, pub), user_scores(gen, pub, UserConfig(autojunk=True))
    assert exact.precision == ref_user(gen, pub)[0] > 0
    assert compat.precision == ref_user(gen, pub, autojunk=True)[0]
    assert compat.precision != exact.precision


WORDS = st.sampled_from(
    [
        "the",
        "a",
        "of",
        "mara",
        "rope",
        "storm",
        "ship",
        "and",
        "dawn",
        "Lamp!",
        "it's",
        "3",
        "",
        "\n",
        "--",
        "Ã©",
        "tobin",
        "said",
    ]
)
TEXTS = st.lists(WORDS, max_size=40).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(TEXTS, TEXTS)
def test_user_and_rouge_equal_the_independent_definition(gen, pub):
    s, r = user_scores(gen, pub), rouge_l_scores(gen, pub)
    assert (s.precision, s.recall, s.f1) == pytest.approx(ref_user(gen, pub), abs=1e-12)
    assert (r.precision, r.recall, r.f1) == pytest.approx(ref_rouge_l(gen, pub), abs=1e-12)
    for value in (s.precision, s.recall, s.f1, r.precision, r.recall, r.f1):
        assert 0.0 <= value <= 1.0
    assert s.precision <= r.precision + 1e-12  # matched blocks form a common subsequence


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=60), st.text(max_size=60))
def test_any_unicode_text_scores_in_unit_interval(gen, pub):
    s = user_scores(gen, pub)
    assert 0.0 <= s.precision <= 1.0 and 0.0 <= s.recall <= 1.0 and 0.0 <= s.f1 <= 1.0
    assert lcs_length(user_tokens(gen), user_tokens(pub)) == ref_lcs(ref_tokens(gen), ref_tokens(pub))


@pytest.mark.parametrize(
    "line, reason",
    [
        (b'{"id": "a", "generated": "x"', "malformed_json"),
        (b'["a"]', "not_an_object"),
        (b'{"generated": "x", "published": "y"}', "missing_field"),
        (b'{"id": "a", "generated": null, "published": "y"}', "missing_field"),
        (b'{"id": "a", "generated": "x"}', "missing_field"),
        (b"\xff\xfe", "utf16"),  # the UTF-16 byte-order mark names the real cause (issue 28)
        ('{"id": "a", "generated": "他说了一个很长的故事", "published": "故事"}'.encode("gbk"), "encoding"),
        ('{"id": "a", "generated": "他說了一個很長的故事", "published": "故事"}'.encode("big5"), "encoding"),
        (b'{"id": "a", "generated": "x\xff", "published": "y"}', "not_utf8"),
        (b'{"id": 1.5, "generated": "x", "published": "y"}', "bad_field_type"),
        (b'{"id": "a", "generated": 42, "published": "y"}', "bad_field_type"),
    ],
)
def test_bad_edit_lines(line, reason):
    result = parse_edit_line(line)
    assert isinstance(result, Drop) and result.reason == reason


def test_edit_line_with_optional_fields():
    edit = parse_edit_line(
        b'{"id": 7, "generated": "g", "published": "p", "model": "top-k", '
        b'"story_id": "game-1", "characters": ["Mara Quill", 3]}'
    )
    assert edit == Edit("7", "g", "p", "top-k", "game-1", ("Mara Quill",))


def test_summary_means_per_model_and_overall():
    rows = [
        score_edit(Edit("b", "storm ship", "storm ship", "m1")),
        score_edit(Edit("a", "storm rope dawn", "storm", "m2")),
        score_edit(Edit("c", "", "x", "m1")),
    ]
    summary = {r["model"]: r for r in summarize(rows)}
    assert summary["*"]["n_edits"] == 3
    assert summary["*"]["user_precision"] == pytest.approx((1 + 1 / 3 + 0) / 3)
    assert summary["*"]["kept_token_share"] == pytest.approx(3 / 5)
    assert summary["m1"]["user_recall"] == pytest.approx(0.5)
    assert summarize(rows) == summarize(list(reversed(rows)))
