"""The cleaning steps skip a substitution when the text lacks a character its matches need
(annotators.stories.clean, annotators.text.zh_clean); these tests hold each step to the plain
substitutions it stands for, on texts built from the characters that matter."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from annotators.stories import clean
from annotators.text import zh_clean
from annotators.text.runs import delete_in_runs

PIECES = st.sampled_from(
    list("中文字我了的，。！？；：、“”（）《》…—～·-－.,!?;:()\"'@＠#＃ａｂＡ１２ abcxyz/．：／")
    + list("ſKıİ\t\u3000\u00a0\u200b\ufeff\n\r[]【】「」<>")
    + [
        "1@2.",
        "ſſ",
        "KK",
        "ıİ",
        "http://a.b.cn/x",
        "name@host.com",
        "x[at]y[dot]com",
        "ｗｗｗ．ａ．ｃｏｍ",
        "a#b.com",
        "ſ.com",
        "ｈｔｔｐ：／／ａ．ｃｎ",
    ]
    + ["，，", "，。", "、！", "……", "...", "。。。", "--", "——", "3.5", "  ", "（ ）", "说 :"]
)
TEXTS = st.lists(PIECES, max_size=30).map("".join)


def plain_normalize(text):
    text = zh_clean._ASCII_NEAR_HAN.sub(lambda m: zh_clean._ASCII_TO_WIDE[m.group(0)], text)
    text = zh_clean._ELLIPSIS.sub("……", text)
    text = zh_clean._DOT_AFTER_HAN.sub("。", text)
    return zh_clean._DASHES.sub("——", text)


def plain_clean_chinese(text, keep_paragraphs=True):
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
    text = re.sub("[\u200b-\u200d\ufeff]", "", text).translate(zh_clean._WIDTH_FOLD)
    sub = zh_clean._SPACE_NEAR_WIDE.sub
    lines = [sub("", plain_normalize(sub("", line))).strip() for line in text.split("\n")]
    lines = [re.sub(r"[ \t]{2,}", " ", line) for line in lines if line]
    return ("\n" if keep_paragraphs else "").join(lines)


def plain_tidy(line):
    line = clean._EMPTY_BRACKETS.sub("", line)
    line = clean._REPEATED.sub(r"\1", line)
    line = clean._ELLIPSIS.sub("……", clean._DANGLING.sub("", line))
    return clean._LEADING.sub(
        "", delete_in_runs(clean._SPACE_BEFORE, line, clean._SPACE_RUN, clean._WIDE_PUNCT)
    ).strip()


@settings(max_examples=1500, deadline=None)
@given(TEXTS)
def test_guarded_steps_equal_the_plain_substitutions(text):
    assert zh_clean.normalize_punctuation(text) == plain_normalize(text)
    assert zh_clean.clean_chinese(text) == plain_clean_chinese(text)
    assert zh_clean.clean_chinese(text, keep_paragraphs=False) == plain_clean_chinese(text, False)
    assert clean.tidy_removals(text) == plain_tidy(text)
    assert clean.remove_emails(text) == clean._remove_folded(clean.find_emails, text)
    assert clean.remove_urls(text) == clean._remove_folded(clean._URL.finditer, text)


def test_letters_that_case_fold_to_ascii_still_reach_the_link_patterns():
    """Under re.I "ſ" is "s" and "K" is "k": the Latin-letter guard lets them through (an
    address of digits with such a top-level domain has no ASCII letter at all)."""
    assert clean.remove_emails("写1@2.ſſ。") == clean.remove_emails("写1@2.KK。") == "写。"
    assert clean.remove_urls("见ſ.com。") == clean._remove_folded(clean._URL.finditer, "见ſ.com。") == "见。"
    assert clean.remove_urls("见ｗｗｗ．ａ．ｃｏｍ。") == "见。"
    assert clean.remove_emails("写信给name@host.com。") == "写信给。"
    assert clean.remove_urls("没有链接的句子。") == "没有链接的句子。"
