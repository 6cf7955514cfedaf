"""Unit tests of the Chinese text annotators: cleaning, sentence splitting, jieba words."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotators.text.zh_clean import clean_chinese, han_count, han_ratio, normalize_punctuation
from annotators.text.zh_sentences import merge_short, split_paragraph_sentences, split_sentences
from annotators.text.zh_tokens import words


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("小 明 今天 去 学校 。", "小明今天去学校。"),
        ("他买了一部 iPhone 手机", "他买了一部iPhone手机"),
        ("Harry Potter 是一本书", "Harry Potter是一本书"),
        ("他说:我饿了!你呢?", "他说：我饿了！你呢？"),
        ("天黑了...他还没回来", "天黑了……他还没回来"),
        ("价格是３．５元，ＡＢＣ", "价格是3．5元，ABC"),
        ("第一段。\r\n\r\n  第二段。", "第一段。\n第二段。"),
        ("他走了\u200b。", "他走了。"),
        ("他说 : 好 , 我去", "他说：好，我去"),
    ],
)
def test_clean_chinese(raw, expected):
    assert clean_chinese(raw) == expected


def test_clean_keeps_decimals_and_removes_paragraphs_on_request():
    assert normalize_punctuation("温度是3.5度.") == "温度是3.5度。"
    assert clean_chinese("一。\n二。", keep_paragraphs=False) == "一。二。"


def test_han_count_and_ratio():
    assert han_count("小明has 3个苹果。") == 5
    assert han_ratio("abc") == 0.0
    assert han_ratio("") == 0.0
    assert han_ratio("中文") == 1.0
    # Cantonese with two Extension B characters (U+20BB6, U+282E2): 8 Han characters, not 6
    assert han_count("佢哋𠮶日去咗𨋢度。") == 8
    assert han_ratio("𠮶𨋢𪜶") == 1.0  # B, B, C
    assert clean_chinese("𠮶 𨋢 , 佢") == "𠮶𨋢，佢"  # spaces and ASCII commas beside them, as beside 中


def test_split_after_terminators_and_closing_quotes():
    text = (
        "小明早上起床以后先去河边跑步。他跑得满头大汗！妈妈问他：“你今天为什么起得这么早？”小明说自己要参加下午的比赛……"
    )
    assert split_sentences(text, min_han=0) == [
        "小明早上起床以后先去河边跑步。",
        "他跑得满头大汗！",
        "妈妈问他：“你今天为什么起得这么早？”",
        "小明说自己要参加下午的比赛……",
    ]


def test_short_sentences_merge_into_previous_neighbour():
    text = "小狗在院子里追着一只蝴蝶跑来跑去。它摔倒了！可是它一点也不觉得疼，又爬起来继续追。"
    assert split_sentences(text) == [
        "小狗在院子里追着一只蝴蝶跑来跑去。它摔倒了！",
        "可是它一点也不觉得疼，又爬起来继续追。",
    ]


def test_short_first_sentence_merges_into_next():
    assert merge_short(["天亮了。", "村子里的公鸡一只接一只地叫了起来。"], 10) == [
        "天亮了。村子里的公鸡一只接一只地叫了起来。"
    ]


def test_one_short_sentence_stays():
    assert split_sentences("好。") == ["好。"]


def test_newlines_end_sentences():
    text = "第一段里小猫在屋顶上晒太阳睡着了\n第二段里小狗在院子门口等主人回家。主人很晚才骑着自行车回来。"
    assert split_sentences(text) == [
        "第一段里小猫在屋顶上晒太阳睡着了",
        "第二段里小狗在院子门口等主人回家。",
        "主人很晚才骑着自行车回来。",
    ]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(list("小明去学校看书写字跑步猫狗。！？；…”，a1 ")), max_size=120))
def test_sentences_concatenate_back_to_the_text(chars):
    text = "".join(chars)
    sentences = split_sentences(text)
    assert "".join(sentences).split() == "".join(text.split("\n")).split() or re.sub(
        r"\s", "", "".join(sentences)
    ) == re.sub(r"\s", "", text)
    assert all(s.strip() for s in sentences)


def test_jieba_words_precise_mode_without_whitespace():
    assert words("我爱 北京天安门。") == ["我", "爱", "北京", "天安门", "。"]
    assert words("") == []


def test_short_sentences_never_merge_across_a_paragraph_break():
    first = "小狗在院子里追着一只蝴蝶跑来跑去。"
    # a short sentence opening a paragraph merges into its next one, never into the line before
    assert split_paragraph_sentences(first + "\n它摔倒了！可是它一点也不觉得疼，又爬起来继续追。") == (
        [first, "它摔倒了！可是它一点也不觉得疼，又爬起来继续追。"],
        (1,),
    )
    # a paragraph that is one short sentence stays a sentence of its own, as does a short first line
    assert split_paragraph_sentences("好。\n" + first + "\n\n“走吧。”\n" + first) == (
        ["好。", first, "“走吧。”", first],
        (1, 2, 3),
    )
    # inside a paragraph the rule is unchanged
    assert split_paragraph_sentences(first + "它摔倒了！") == ([first + "它摔倒了！"], ())


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(alphabet=list("小明去学校看书写字跑步猫狗。！？”a "), max_size=40), min_size=1, max_size=8))
def test_every_paragraph_begins_a_sentence(lines):
    sentences, breaks = split_paragraph_sentences("\n".join(lines))
    per_line = [split_sentences(line) for line in lines]
    assert sentences == [s for line in per_line for s in line]
    starts = [sum(map(len, per_line[:k])) for k, line in enumerate(per_line) if line]
    assert list(breaks) == starts[1:]
