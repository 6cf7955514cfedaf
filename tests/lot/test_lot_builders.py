"""Unit tests of the LOT builders: story parsing, SenPos, ClozeT, PlotCom, reviews."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotators.core.ids import stable_id
from annotators.core.outcome import Drop
from annotators.lot.clozet import ClozeTConfig, build_clozet, build_plotcom_train, parse_annotation, plotcom_from_clozet
from annotators.lot.senpos import SenPosConfig, apply_review, build_senpos, parse_review, review_task
from annotators.lot.splits import split_by_weights
from annotators.lot.story import StoryConfig, parse_story_record, prepare_story, whole_story_problem
from annotators.text.words import count_words

STORY = (
    "从前有一个小村庄，村口住着一位勤劳的老木匠。老木匠每天天不亮就起床，在院子里刨木头。"
    "村里的孩子们都喜欢围在他身边看他干活。有一年冬天，河上的木桥被大雪压断了。"
    "老木匠带着徒弟们在河边忙了整整三天。新桥修好的那天，全村的人都来桥上走了一遍。"
    "孩子们在桥头放起了鞭炮，老木匠站在一旁笑得合不拢嘴。"
)


def prepared(text=STORY, story_id="s1", **extra):
    rec = parse_story_record("t:1", json.dumps({"id": story_id, "story": text, **extra}, ensure_ascii=False).encode())
    return prepare_story(rec)


def squash(text):
    return re.sub(r"\s+", "", text)


@pytest.mark.parametrize(
    "raw, reason",
    [
        (b'{"story": "abc"', "malformed_json"),
        (b"", "blank_line"),
        (b'["a list"]', "not_an_object"),
        (b'{"title": "no story"}', "missing_field"),
        (b'{"story": 42}', "bad_field_type"),
        (b'{"story": "   "}', "missing_field"),
        (b"\x00\x01binary", "binary_file"),
    ],
)
def test_parse_rejects_bad_records(raw, reason):
    assert parse_story_record("f:1", raw).reason == reason


def test_parse_reads_gbk_and_text_field():
    rec = parse_story_record("f:1", json.dumps({"text": "小猫钓鱼的故事"}, ensure_ascii=False).encode("gbk"))
    assert rec["story"] == "小猫钓鱼的故事"
    assert rec["story_id"].startswith("story-")


def test_prepare_rejects_what_no_task_can_use():
    assert prepared("This story is written in English. It has sentences. Many of them.").reason == "not_chinese"


def in_extension_b(text: str) -> str:
    """`text` with each of its BMP ideographs moved to one of CJK Extension B (U+20000-2A6DF)."""
    return "".join(chr(0x20000 + (ord(c) - 0x4E00) % 0xA6E0) if "\u4e00" <= c <= "\u9fff" else c for c in text)


def test_a_story_in_extension_b_is_chinese():
    """Ideographs beyond the BMP are Han: the story is prepared, its sentences cut and merged
    (short ones by their Han count) as the BMP story's are (once it was not_chinese, "Han
    share 0.00")."""
    story = prepared(in_extension_b(STORY))
    assert not isinstance(story, Drop)
    assert list(story.sentences) == [in_extension_b(s) for s in prepared().sentences]


def test_whole_story_limits_are_per_task():
    two = prepared("小猫在河边钓了一整天的鱼。它一条鱼也没有钓到，只好饿着肚子回家了。")
    assert len(two.sentences) == 2  # prepared: OutGen may still outline it
    assert whole_story_problem(two, StoryConfig(), "ClozeT").reason == "too_few_sentences"
    assert whole_story_problem(two, StoryConfig(), "OutGen") is None
    long = prepared(STORY * 150)
    problem = whole_story_problem(long, StoryConfig(), "PlotCom")
    assert problem.reason == "story_too_long" and "--max-story-chars 20000" in problem.detail
    assert whole_story_problem(long, StoryConfig(max_story_chars=0), "PlotCom") is None
    assert long.pos_tokens == () and two.pos_tokens  # outline tokens only for texts OutGen takes


def test_prepare_splits_and_tokenises_once():
    story = prepared()
    assert len(story.sentences) == 7
    assert story.joined == STORY
    assert story.words[0][:3] == ("从前", "有", "一个")


def test_senpos_example_shape():
    story = prepared()
    [(ex, _, removed, _)] = build_senpos(story, "train", seed=3)
    assert ex.story.count("[MASK]") == ex.n_candidates == len(story.sentences) - 2
    assert 1 <= ex.label <= ex.n_candidates
    assert ex.sentence == story.sentences[removed]
    assert 0 < removed < len(story.sentences) - 1
    parts = ex.story.split("[MASK]")
    rebuilt = "".join(parts[: ex.label]) + ex.sentence + "".join(parts[ex.label :])
    assert rebuilt == STORY


def test_senpos_seed_changes_choice_and_is_stable():
    story = prepared()
    picks = {build_senpos(story, "train", seed=s)[0][2] for s in range(12)}
    assert len(picks) > 1
    assert build_senpos(story, "train", seed=5)[0][0] == build_senpos(story, "train", seed=5)[0][0]


def test_senpos_needs_a_removable_middle_sentence():
    short_middle = "小猴子一大早就跑到山下的果园里去摘桃子。它摘了桃。又看见西瓜地里的大西瓜长得又圆又大。"
    story = prepared(short_middle + "它扔下桃子去摘西瓜，最后什么也没有带回家。")
    assert isinstance(build_senpos(story, "train", seed=0, config=SenPosConfig(min_candidates=5)), Drop)


def test_review_drops_candidates_and_renumbers():
    [(ex, _, _, _)] = build_senpos(prepared(), "test", seed=1)
    others = [k for k in range(1, ex.n_candidates + 1) if k != ex.label]
    review = parse_review({"example_id": ex.example_id, "review": {"accept": True, "drop": others[:2]}})
    done = apply_review(ex, review)
    assert done.reviewed and done.n_candidates == ex.n_candidates - 2
    assert done.story.count("[MASK]") == done.n_candidates
    parts = done.story.split("[MASK]")
    assert "".join(parts[: done.label]) + done.sentence + "".join(parts[done.label :]) == STORY
    task = review_task(ex)
    assert [c["position"] for c in task["candidates"]] == list(range(1, ex.n_candidates + 1))


@pytest.mark.parametrize(
    "review, reason",
    [
        ({"accept": False}, "review_rejected"),
        ({"drop": ["x"]}, "bad_field_type"),
    ],
)
def test_review_rejections(review, reason):
    [(ex, _, _, _)] = build_senpos(prepared(), "val", seed=1)
    parsed = parse_review({"example_id": ex.example_id, "review": review})
    result = parsed if isinstance(parsed, Drop) else apply_review(ex, parsed)
    assert result.reason == reason


def test_review_may_not_drop_the_answer():
    [(ex, _, _, _)] = build_senpos(prepared(), "val", seed=1)
    assert (
        apply_review(ex, parse_review({"example_id": ex.example_id, "drop": [ex.label]})).reason
        == "review_dropped_true_position"
    )


def annotation(**fields):
    base = {"story_id": "s1", "right_index": 3, "wrong": "有一年夏天，河上的木桥被大雪压断了。"}
    return parse_annotation("a:1", json.dumps({**base, **fields}, ensure_ascii=False).encode())


def test_clozet_builds_with_seeded_order():
    story = prepared()
    ex = build_clozet(story, annotation(), "train", seed=0)
    right = story.sentences[3]
    assert {ex.plot0, ex.plot1} == {right, "有一年夏天，河上的木桥被大雪压断了。"}
    assert (ex.plot0 if ex.label == "0" else ex.plot1) == right
    assert ex.story.replace("<mask>", right) == STORY
    labels = {build_clozet(story, annotation(), "train", seed=s).label for s in range(10)}
    assert labels == {"0", "1"}


@pytest.mark.parametrize(
    "fields, reason",
    [
        ({"right_index": 0}, "first_sentence"),
        ({"right_index": 40}, "index_out_of_range"),
        ({"wrong": "有一年冬天，河上的木桥被大雪压断了。"}, "wrong_equals_right"),
        ({"right": "这不是那一句话。"}, "right_sentence_mismatch"),
        ({"wrong": "桥断了。"}, "wrong_length_ratio"),
    ],
)
def test_clozet_rejects_bad_annotations(fields, reason):
    assert build_clozet(prepared(), annotation(**fields), "train", seed=0, config=ClozeTConfig()).reason == reason


@pytest.mark.parametrize(
    "line, reason",
    [
        (b"{oops", "malformed_json"),
        (b'{"story_id": "s1", "right_index": "3", "wrong": "x"}', "bad_field_type"),
        (b'{"story_id": "s1", "wrong": "x"}', "missing_field"),
        (b'{"story_id": "s1", "right_index": 3, "wrong": " "}', "missing_field"),
    ],
)
def test_parse_annotation_rejects(line, reason):
    assert parse_annotation("a:1", line).reason == reason


def test_plotcom_train_and_from_clozet():
    story = prepared()
    ex = build_plotcom_train(story, seed=0)
    assert ex.removed_index >= 1 and ex.story.replace("<MASK>", ex.plot) == STORY
    cz = build_clozet(story, annotation(), "test", seed=0)
    pc = plotcom_from_clozet(story, cz)
    assert (pc.split, pc.plot, pc.origin) == ("test", story.sentences[3], "clozet")


def test_split_by_weights_is_stable_and_follows_weights():
    splits = [split_by_weights(0, f"s{i}", (8, 1, 1)) for i in range(2000)]
    assert splits == [split_by_weights(0, f"s{i}", (8, 1, 1)) for i in range(2000)]
    assert 0.75 < splits.count("train") / 2000 < 0.85
    assert split_by_weights(0, "x", (0, 0, 1)) == "test"


SENTENCE = st.text(alphabet=list("春夏秋冬山水花草鸟鱼人心天地日月风雨云雪"), min_size=10, max_size=30)


@settings(max_examples=60, deadline=None)
@given(st.lists(SENTENCE, min_size=4, max_size=12), st.integers(0, 2**31))
def test_senpos_answer_at_label_rebuilds_story(body, seed):
    text = "".join(s + "。" for s in body)
    story = prepared(text, story_id=f"h{seed}")
    [(ex, _, removed, _)] = build_senpos(story, "train", seed=seed)
    parts = ex.story.split("[MASK]")
    assert squash("".join(parts[: ex.label]) + ex.sentence + "".join(parts[ex.label :])) == squash(text)
    assert 0 < removed < len(story.sentences) - 1


def test_senpos_cuts_a_long_paragraph_into_windows_under_500_words():
    long_story = prepared(STORY * 12)  # one paragraph of 84 sentences
    words = [count_words(w) for w in long_story.words]
    assert sum(words) >= 500
    built = build_senpos(long_story, "train", seed=0)
    assert len(built) >= 2
    starts = [b.window[0] for b in built]
    assert starts[0] == 0 and all(
        a[1] <= b[0] for a, b in zip([b.window for b in built], [b.window for b in built][1:])
    )
    for ex, _, removed, (a, b) in built:
        assert sum(words[a:b]) < 500
        assert a < removed < b - 1 and ex.label == removed - a and ex.n_candidates == b - a - 2
        parts = ex.story.split("[MASK]")
        assert "".join(parts[: ex.label]) + ex.sentence + "".join(parts[ex.label :]) == "".join(
            long_story.sentences[a:b]
        )
    assert len({ex.example_id for ex, *_ in built}) == len(built)


def test_senpos_windows_follow_the_texts_paragraphs():
    paragraphs = [STORY, "他说：“好。”", STORY.replace("老木匠", "老铁匠")]
    story = prepared("\n".join(paragraphs))
    assert story.breaks  # the line breaks survive preparation
    built = build_senpos(story, "train", seed=0)
    # the first paragraph is one window; the one-sentence paragraph cannot stand alone and
    # joins the next one (its short sentence stays its own: a merge never crosses a break)
    assert story.breaks == (7, 8)
    assert [b.window for b in built] == [(0, 7), (7, 15)]
    assert "".join(story.sentences[0:7]) == STORY and story.sentences[7] == "他说：“好。”"


def test_a_story_that_is_one_window_keeps_its_example():
    story = prepared()
    [(ex, _, removed, window)] = build_senpos(story, "train", seed=3)
    assert window == (0, len(story.sentences))
    assert ex.example_id == stable_id("senpos", "s1", removed)


def test_senpos_from_a_page_of_stories_gives_one_example_per_qualifying_paragraph():
    page = "\n".join([STORY, STORY.replace("老木匠", "老石匠"), STORY.replace("老木匠", "老画匠"), "（完）"])
    built = build_senpos(prepared(page), "train", seed=0)
    assert len(built) == 3


def test_outgen_keeps_only_verbatim_short_input_phrases():
    from annotators.lot.outgen import build_outgen

    story = prepared(outline=["老木匠", "不在故事里的短语", "老木匠", "新桥修好的那天全村的人都来桥上走了一遍"])
    ex = build_outgen(story, "train", seed=0, outline_from="input")
    assert ex.outline == ("老木匠",) and ex.outline_source == "input"
    rake = build_outgen(story, "train", seed=0)
    assert 1 <= len(rake.outline) <= 8 and all(p in STORY for p in rake.outline)


def test_parse_reads_big5_lines():
    rec = parse_story_record(
        "f:1", json.dumps({"story": "從前有一隻小貓在河邊釣魚"}, ensure_ascii=False).encode("big5")
    )
    assert rec["story"] == "從前有一隻小貓在河邊釣魚"


def test_stories_holding_a_placeholder_are_rejected():
    assert prepared(STORY.replace("老木匠带着", "<MASK>老木匠带着")).reason == "contains_placeholder"
    # LongLM's sentinels, which the exports write: a story holding one gave lines with two pointers
    dropped = prepared(STORY.replace("老木匠带着", "老木匠<extra_id_1>带着"))
    assert dropped.reason == "contains_placeholder" and "<extra_id_1>" in dropped.detail
    assert not isinstance(prepared(STORY.replace("老木匠带着", "老木匠<extra带着")), Drop)


@pytest.mark.parametrize(
    "obj",
    [
        {"example_id": "x", "review": None},
        {"example_id": "x", "review": []},
        {"example_id": "x", "review": {"accept": "false"}},
    ],
)
def test_malformed_reviews(obj):
    assert parse_review(obj).reason == "bad_field_type"


def test_input_order_is_numeric_by_line():
    from annotators.lot.steps import input_order

    assert sorted(["r.jsonl:10", "r.jsonl:9", "a.jsonl:11"], key=input_order) == [
        "a.jsonl:11",
        "r.jsonl:9",
        "r.jsonl:10",
    ]


def test_annotations_of_removed_exact_duplicates_move_to_the_kept_copy():
    """Which annotated ids of removed exact duplicates move, and where (the text dedup keeps
    the earliest copy in file and line order, line 10 after line 9)."""
    from annotators.lot.clozet import annotation_of_duplicate, moved_targets, retarget_annotation
    from annotators.lot.steps import StoryKey, duplicate_links, held_ids

    keys = [
        StoryKey("s.jsonl:10", "b", "T"),  # a copy of a's text T: b's annotations move to a
        StoryKey("s.jsonl:9", "a", "T"),
        StoryKey("s.jsonl:11", "c", "U"),  # c copies d's text U, but a kept story also has id c
        StoryKey("s.jsonl:3", "d", "U"),
        StoryKey("s.jsonl:12", "c", "V"),
        StoryKey("s.jsonl:13", "e", "W"),  # e copies f, which lost its id to an earlier story
        StoryKey("s.jsonl:4", "f", "W"),
        StoryKey("s.jsonl:14", "x", "T"),  # nobody annotated x
    ]
    named = frozenset("abcex")
    links = duplicate_links((0, keys), named - {"x"})
    assert sorted(i for i, _ in links) == ["b", "c", "e"]
    held = held_ids(
        (0, [k for k in keys if k.input_id in ("s.jsonl:9", "s.jsonl:3", "s.jsonl:12", "s.jsonl:4")]), named
    )
    assert held == ["a", "c"]
    moved = moved_targets(links, held, {"s.jsonl:4"})
    assert moved == {"b": "a"}
    ann = {"input_id": "n.jsonl:2", "story_id": "b", "right_index": 1, "wrong": "w", "right": None, "annotator": ""}
    assert retarget_annotation(ann, moved) == {**ann, "story_id": "a", "named_story_id": "b"}
    assert retarget_annotation({**ann, "story_id": "c"}, moved)["story_id"] == "c"
    own = {**ann, "input_id": "n.jsonl:7", "story_id": "a"}
    drop = annotation_of_duplicate(retarget_annotation(ann, moved), [retarget_annotation(ann, moved), own])
    assert drop.reason == "annotation_of_duplicate" and "(n.jsonl:7)" in drop.detail
    assert annotation_of_duplicate(retarget_annotation(ann, moved), [retarget_annotation(ann, moved)]) is None


@pytest.mark.parametrize("junk", ["<p>", "<br/>", '<a href="x.html">', "&nbsp;", "&#12288;"])
def test_stories_with_html_junk_are_rejected(junk):
    assert prepared(STORY.replace("老木匠带着", junk + "老木匠带着")).reason == "html_markup"


def test_book_title_marks_are_not_html():
    story = prepared(STORY.replace("新桥修好的那天", "新桥修好的那天，大家读着《桥》这本书"))
    assert not isinstance(story, Drop)


@pytest.mark.slow
@pytest.mark.parametrize(
    "text",
    [
        "从前有一个小村庄，村口住着一位勤劳的老木匠。老木匠每天天不亮就起床，在院子里刨木头。\n"
        "村里的孩子们都喜欢围在他身边看他干活\n有一年冬天，河上的木桥被大雪压断了。Tom和Jerry也来帮忙修桥了。",
        "海边住着一个叫阿海的老渔夫ABC\n123号码头的小船每天天不亮就出海。他的网里捞上来一条浑身发着蓝光的小鱼。"
        "小鱼在网里轻轻摆着尾巴，好像在求他放了自己。",
    ],
)
def test_prepared_tokens_are_jieba_cuts_of_the_sentences_and_of_the_whole_story(text):
    import jieba

    tok = jieba.Tokenizer()
    tok.initialize()
    from jieba import posseg

    record = parse_story_record("s:1", {"id": "x", "title": "老木匠 的 桥", "story": text})
    story = prepare_story(record)  # the default outline method reads posseg pairs
    assert story.words == tuple(tuple(w for w in tok.lcut(s) if w.strip()) for s in story.sentences)
    assert story.pos_tokens == tuple((p.word, p.flag) for p in posseg.lcut(story.joined))
    assert story.outline_tokens == ()
    rake = prepare_story(record, outline_method="rake")  # the rake method reads HMM-off tokens
    assert rake.words == story.words and rake.pos_tokens == ()
    assert rake.outline_tokens == tuple(tok.lcut(story.joined, HMM=False))
    assert story.title_words == tuple(w for w in tok.lcut("老木匠 的 桥") if w.strip())


def test_exact_duplicate_key_ignores_every_kind_of_whitespace_as_the_normalised_text_did():
    import re

    from annotators.lot.story import StoryConfig, exact_duplicate_key, normalize_text
    from schemas.ids import stable_hash

    cfg = StoryConfig()
    texts = ["小狐狸 \u3000找到了\u00a0果子。\r\n兔子 吃了。", " 你 好 \t世界 \n\n", "x\u2003y\u200bz", "a\r\rb"]
    for text in texts:
        normalised = stable_hash("text", re.sub(r"\s+", "", normalize_text(text, cfg.normalize)))
        assert exact_duplicate_key({"story": text}, cfg) == normalised
    assert exact_duplicate_key({"story": texts[0]}, cfg) == exact_duplicate_key(
        {"story": "小狐狸找到了果子。兔子吃了。"}, cfg
    )


def _official(name):
    from conftest import shared_path

    return shared_path("lot", "official_examples", name).read_text(encoding="utf-8").split("\n")


def test_clozet_source_target_are_the_official_format():
    """Each official ClozeT line, read back into a ClozeT row, is written again byte for byte."""
    from annotators.core.longlm import clozet_source_target

    for source, target in zip(_official("clozet_test.source"), _official("clozet_test.target")):
        plot0, rest = source.split("<extra_id_1>", 1)
        plot1, story = rest.split("<extra_id_2>", 1)
        assert story.endswith("<mask>") and story.count("<sep>") == 1
        label = str(int(target[len(source) :].removeprefix("<extra_id_").removesuffix(">")) - 1)
        row = {
            "story": story[: -len("<mask>")].replace("<sep>", "<mask>"),
            "plot0": plot0,
            "plot1": plot1,
            "label": label,
        }
        assert clozet_source_target(row) == (source, target)


def test_outgen_source_target_are_the_official_format():
    from annotators.core.longlm import outgen_source_target

    for source, target in zip(_official("outgen_test.source"), _official("outgen_test.target")):
        title, *outline = source.removesuffix("<extra_id_1>").split("#")
        row = {"title": title, "outline": outline, "story": target.removeprefix("<extra_id_1>")}
        assert len(outline) == 8 and outgen_source_target(row) == (source, target)


def test_senpos_source_target_mark_each_candidate_with_its_sentinel():
    from annotators.core.longlm import senpos_source_target

    [(ex, *_)] = build_senpos(prepared(), "train", seed=3)
    source, target = senpos_source_target(ex.to_row())
    assert source.startswith(ex.sentence + "<sep>") and source.endswith("<mask>") and "[MASK]" not in source
    assert [f"<extra_id_{k}>" in source for k in range(1, ex.n_candidates + 2)] == [True] * ex.n_candidates + [False]
    assert target == source + f"<extra_id_{ex.label}>"
    before = source[len(ex.sentence + "<sep>") :].split(f"<extra_id_{ex.label}>")[0]
    assert STORY.startswith(re.sub(r"<extra_id_\d+>", "", before) + ex.sentence)


def test_outgen_fields_never_add_a_hash_field():
    from annotators.core.longlm import outgen_source_target

    source, target = outgen_source_target({"title": "第1#章", "outline": ["甲#乙", "丙"], "story": "故事\n第二段"})
    assert source == "第1＃章#甲＃乙#丙<extra_id_1>" and target == "<extra_id_1>故事 第二段"


BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # line breaks to str.splitlines(), besides \n and \r


def test_source_target_lines_hold_nothing_splitlines_splits_at():
    """A \\x0b or U+2028 inside a story stayed in its `.source`/`.target` line, so a reader that
    splits with str.splitlines() (Hugging Face `datasets`' "text" loader) saw more lines in one
    file than in the other. Each becomes a space, as \\n and \\r always did."""
    from annotators.core.longlm import one_line, outgen_source_target

    for ch in BREAKS + "\n\r":
        source, target = outgen_source_target(
            {"title": f"灯{ch}塔", "outline": [f"甲{ch}乙"], "story": f"故事{ch}第二段"}
        )
        assert (source, target) == ("灯 塔#甲 乙<extra_id_1>", "<extra_id_1>故事 第二段"), repr(ch)
    assert one_line("一\r\n二\u2028三\x0b") == "一 二 三" and one_line("没有换行。") == "没有换行。"


def test_senpos_windows_have_at_most_99_candidates():
    text = "".join(f"第{i}天山山水水花花草草。" for i in range(150))  # short sentences, few words
    built = build_senpos(prepared(text), "train", seed=0)
    assert built and all(ex.n_candidates <= 99 for ex, *_ in built)
    assert sum(b - a for _, _, _, (a, b) in built) == 150


def test_input_lines_decode_as_the_charset_detection_does():
    """decode_line takes a UTF-8 line without a BOM at once; every line still decodes as
    annotators.text.charset.decode_bytes would (BOMs, GB18030, Big5, undecodable bytes)."""
    import codecs
    import random

    from annotators.lot.story import decode_line
    from annotators.text.charset import decode_bytes

    rng = random.Random(1)
    lines = [
        b"",
        b"abc",
        codecs.BOM_UTF8 + "故事".encode(),
        codecs.BOM_UTF16_LE + "故事".encode("utf-16-le"),
        b"\xff\xfe",
        b"\xc3\x28",
        "é".encode("cp1252"),
    ]
    lines += ["从前有一个小村庄，村口住着一位老木匠。".encode(e) for e in ("utf-8", "gb18030", "big5hkscs")]
    lines += [bytes(rng.randrange(1, 256) for _ in range(rng.randint(0, 8))) for _ in range(5000)]
    for raw in lines:
        want = decode_bytes(raw, html=False)
        got = decode_line(raw)
        assert (got.reason == "undecodable") if want is None else got == want.text, raw


def test_a_review_task_fed_back_unedited_is_not_a_review():
    """Review tasks shipped with accept: true, so feeding them back unedited (the README's cat)
    marked every SenPos val/test example reviewed and accepted without any human review."""
    from annotators.lot.senpos import parse_review

    task = {"example_id": "e1", "review": {"accept": None, "drop": []}}
    dropped = parse_review(task)
    assert isinstance(dropped, Drop) and dropped.reason == "review_pending"
    assert parse_review({"example_id": "e1", "review": {"accept": True, "drop": [2]}})["drop"] == [2]
    assert parse_review({"example_id": "e1", "drop": [3]})["accept"] is True  # the short form
