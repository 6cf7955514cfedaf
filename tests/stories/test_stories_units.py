"""Unit tests of story cleaning, sources and near-duplicate clustering."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotators.core.near_dup import (
    NearDupConfig,
    Node,
    band_keys,
    bands_rows,
    clusters,
    component_pairs,
    id_components,
    jaccard,
    oph_signature,
    shingles,
    verified_pairs,
)
from annotators.core.outcome import Drop
from annotators.stories.clean import (
    CleanConfig,
    check_decoding,
    check_story,
    clean_text,
    is_boilerplate,
    jieba_word_count,
    remove_emails,
    remove_urls,
    single_line_title,
)
from annotators.stories.site_spec import parse_spec
from annotators.stories.sources import RawStory, json_line_to_raw, page_to_raw, text_file_to_raw, to_story
from annotators.text.tokenizers import get_tokenizer
from annotators.text.words import count_words
from tests.fixtures.site.make_site import STORIES

TEXT_01 = "\n".join(STORIES["01"][1])
TEXT_06 = "\n".join(STORIES["06"][1])


# ------------------------------------------------------------------ cleaning
@pytest.mark.parametrize(
    "raw,expected",
    [
        ("他把这件事写在博客 http://a.example.net/p?id=1 上。", "他把这件事写在博客上。"),
        ("请写信（chen.xy@mail-example.cn）告诉我们。", "请写信告诉我们。"),
        ("详见www.gushi-example.cn/list，谢谢大家。", "详见，谢谢大家。"),
        ('小 明 说 : "我 们 走 吧 !"  然后 走 了 ...', "小明说：“我们走吧！”然后走了……"),
        ("本文由童话故事网整理发布，转载请注明出处。\n故事开始了。", "故事开始了。"),
        ("上一篇：小马过河 下一篇：狐狸和乌鸦\n正文。", "正文。"),
        ("Harry Potter 来到了学校。", "Harry Potter来到了学校。"),
        ("联系我们：editor@gushi-example.com\n——\n结尾。", "结尾。"),
    ],
)
def test_clean_text_exact(raw, expected):
    assert clean_text(raw) == expected


@pytest.mark.parametrize(
    "raw,expected",
    [
        # full-width links and e-mails go whole (matched on a width-folded copy)
        ("他的博客是ｈｔｔｐ：／／example.cn。", "他的博客是。"),
        ("访问ｈｔｔｐｓ：／／ｅｘａｍｐｌｅ．ｃｎ／ａ，谢谢。", "访问，谢谢。"),
        ("网址：ｗｗｗ．ｇｕｓｈｉ．ｃｏｍ，欢迎。", "网址：欢迎。"),
        ("（ｈｔｔｐ：／／example.cn）结束了。", "结束了。"),
        ("写信给abc＠163.com。", "写信给。"),
        # obfuscated e-mails
        ("作者邮箱abc[at]163.com。", "作者邮箱。"),
        ("联系abc(at)163.com谢谢。", "联系谢谢。"),
        ("联系abc（ａｔ）163.com谢谢。", "联系谢谢。"),
        ("邮箱：zhang [AT] qq [dot] com，谢谢。", "邮箱：谢谢。"),
        ("邮箱abc【at】sina.com.cn，谢谢。", "邮箱，谢谢。"),
        ("邮箱abc#163.com，谢谢。", "邮箱，谢谢。"),
        # full-width letters and digits that are not links are kept (folded to ASCII by clean_chinese)
        ("Ａ组赢了，３比２。", "A组赢了，3比2。"),
    ],
)
def test_clean_text_removes_full_width_and_obfuscated_links_exact(raw, expected):
    assert clean_text(raw) == expected


def test_removal_on_the_folded_copy_keeps_the_original_text():
    assert remove_urls("见ｈｔｔｐ：／／ａ．ｃｎ／ｘ，好。") == "见，好。"  # trailing full-width comma is prose
    assert remove_urls("见http://a.cn/x,好。") == "见好。"  # ASCII behaviour unchanged
    assert remove_emails("邮箱abc[at]163.com与ｘｙ＠ｑｑ．ｃｏｍ。") == "邮箱与。"
    assert remove_emails("见http://a.com/p#b.com。") == "见http://a.com/p#b.com。"  # a URL fragment, not an e-mail
    assert remove_emails("第3#楼的a.com") == "第3#楼的a.com"


def test_long_paragraph_mentioning_a_boilerplate_word_is_kept():
    line = "小林把这个故事转载到了班级的墙报上，" + "同学们围在墙报前看了很久，" * 5 + "大家都说写得真好。"
    assert not is_boilerplate(line, CleanConfig()) and clean_text(line) == line
    assert is_boilerplate("转载请注明出处", CleanConfig())


def test_check_story_reasons():
    assert check_story("") == Drop("empty_after_cleaning", "nothing left after removing boilerplate and links")
    assert check_story("The fox fell into a well and the goat jumped in.") == Drop(
        "not_chinese", "han ratio 0.00 < 0.5"
    )
    assert check_story("小猫在窗台上晒太阳，晒着晒着就睡着了。") == Drop("too_short", "11 words < 50")
    assert check_story(TEXT_01) is None
    in_ext_b = "".join(chr(0x20000 + (ord(c) - 0x4E00) % 0xA6E0) if "\u4e00" <= c <= "\u9fff" else c for c in TEXT_01)
    assert clean_text(in_ext_b) == in_ext_b  # its lines are Chinese text, not lines without a word
    assert check_story(in_ext_b) is None  # Extension B ideographs are Han: not not_chinese
    assert check_story(TEXT_01, CleanConfig(max_words=60)).reason == "too_long"


def test_long_texts_are_kept_unless_the_paper_filter_is_asked_for():
    long = "\n".join([TEXT_01] * 12)
    assert jieba_word_count(long) > 500
    assert check_story(long) is None  # SenPos cuts windows from long texts (pipelines.lot)
    assert check_story(long, CleanConfig(paper_length_filter=True)) == Drop(
        "too_long", f"{jieba_word_count(long)} words > 500 (--paper-length-filter: LOT's 50-500-word stories)"
    )
    assert check_story(long, CleanConfig(max_words=600)).detail.endswith("> 600 (--max-words)")
    words = jieba_word_count(TEXT_01)
    assert words == count_words(get_tokenizer("jieba").tokens(TEXT_01))  # the one shared definition
    assert check_story(TEXT_01, CleanConfig(paper_length_filter=True, min_words=words + 1)) is None


def test_check_decoding_rejects_mojibake_only():
    mojibake = TEXT_01.encode("gbk").decode("cp1252")
    assert check_decoding(mojibake, "cp1252 (http)") == Drop(
        "mojibake", "100% of characters are U+0080-U+00FF as read with cp1252 (http) (> 50%): wrong charset"
    )
    assert check_decoding(TEXT_01) is None
    assert check_decoding("Un été à Paris, café crème et déjà fini.") is None
    raw = RawStory("p1", "", mojibake, "site", encoding="cp1252 (http)")
    assert to_story(raw).reason == "mojibake"  # not empty_after_cleaning
    assert clean_text(mojibake) == ""


def test_single_line_title():
    assert single_line_title(" 借 伞 （http://x.example.com） ") == "借伞"


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "小明",
                "走了",
                "。",
                "，",
                " ",
                "\n",
                "见http://a.example.com/x。",
                "写信给a@b.cn。",
                '"',
                "...",
                "Tom",
                "转载请注明出处",
                "3.5",
                "(",
                ")",
                "！",
                "见ｈｔｔｐ：／／ａ．ｃｎ／ｘ，",
                "写信给a[at]b.cn。",
                "ｃ＠ｄ．ｃｏｍ",
            ]
        ),
        max_size=30,
    )
)
def test_clean_text_is_idempotent_and_leaves_no_links(pieces):
    once = clean_text("".join(pieces))
    assert clean_text(once) == once
    assert "http" not in once and "@" not in once and "[at]" not in once and "  " not in once


# ------------------------------------------------------------------ sources
SPEC = parse_spec(
    json.dumps(
        {
            "name": "fables",
            "start_urls": ["http://h.org/index.html"],
            "allowed_hosts": ["h.org"],
            "follow": [r"/list/"],
            "story": r"/story/",
            "title": "h1",
            "body": "#text",
            "license": "CC0-1.0",
        }
    )
)
PAGE = {
    "url": "http://h.org/story/1.html",
    "final_url": "http://h.org/story/1.html",
    "kind": "story",
    "headers": json.dumps({"content-type": "text/html"}),
    "error": None,
    "detail": "",
    "fetched_at": "2024-05-01T12:00:00Z",
    "body": ("<meta charset=gbk><h1>冬 粮</h1><div id=text><p>" + TEXT_01 + "</p></div>").encode("gbk"),
}


def test_page_to_raw_and_reasons():
    raw = page_to_raw(PAGE, SPEC)
    assert (raw.title, raw.body, raw.encoding, raw.source, raw.license) == (
        "冬 粮",
        TEXT_01,
        "gb18030 (meta)",
        "fables",
        "CC0-1.0",
    )
    assert page_to_raw({**PAGE, "error": "http_404", "detail": "status 404"}, SPEC) == Drop("http_404", "status 404")
    assert page_to_raw({**PAGE, "final_url": "http://h.org/list/1.html"}, SPEC).reason == "not_story_page"
    assert page_to_raw({**PAGE, "body": b"<p>no body here</p>"}, SPEC).reason == "body_not_found"
    assert page_to_raw({**PAGE, "headers": "not json"}, SPEC).encoding == "gb18030 (meta)"


def test_a_utf8_page_with_a_stray_byte_keeps_its_story_with_u_fffd():
    """One windows-1252 apostrophe (0x92) in a UTF-8 page lost the whole story as `undecodable`:
    it is read as a browser shows it, U+FFFD in its place, and `encoding` says so. A GBK page
    said to be UTF-8 (an invalid sequence for about every character) is still undecodable."""
    page = "<meta charset=utf-8><h1>冬粮</h1><div id=text><p>" + TEXT_01 + "</p></div>"
    cut = page.index("小兔子")
    body = page[:cut].encode("utf-8") + b"\x92" + page[cut:].encode("utf-8")
    raw = page_to_raw({**PAGE, "body": body}, SPEC)
    assert raw.body == TEXT_01.replace("小兔子", "\ufffd小兔子", 1)
    assert (raw.encoding, raw.replaced) == ("utf-8 (meta, 1 invalid byte sequence as U+FFFD)", 1)
    assert to_story(raw).text.count("\ufffd") == 1  # cleaning keeps it: the story shows where a byte was lost
    wrong = page_to_raw({**PAGE, "body": page.encode("gbk") + b"\xff"}, SPEC)
    assert wrong.reason == "undecodable" and "invalid byte sequences in" in wrong.detail
    assert page_to_raw(PAGE, SPEC).replaced == 0


def test_dump_readers_and_reasons():
    kw = {"source": "dump", "license": "unknown"}
    raw = json_line_to_raw("a.jsonl:1", json.dumps({"text": "故事", "id": "x7"}).encode(), **kw)
    assert (raw.body, raw.given_id, raw.source) == ("故事", "x7", "dump")
    assert json_line_to_raw("a:2", b"   ", **kw).reason == "blank_line"
    assert json_line_to_raw("a:3", b"{oops", **kw).reason == "malformed_json"
    assert json_line_to_raw("a:4", b'"just a string"', **kw) == Drop("not_an_object", "str")
    assert json_line_to_raw("a:5", b'{"story": "  "}', **kw).reason == "missing_field"
    assert json_line_to_raw("a:6", b'{"text": 5}', **kw).reason == "bad_field_type"
    assert text_file_to_raw("b.txt", TEXT_01.encode("gb18030"), **kw).body == TEXT_01
    assert text_file_to_raw("c.txt", b" \n", **kw).reason == "empty_file"


def test_to_story_ids_are_stable_and_text_is_clean():
    raw = json_line_to_raw(
        "a.jsonl:9",
        json.dumps({"title": "冬 粮", "story": " ".join(TEXT_01)}).encode(),
        source="dump",
        license="CC0-1.0",
    )
    story = to_story(raw)
    assert (story.title, story.text, story.lang) == ("冬粮", TEXT_01, "zh")
    assert story.story_id == to_story(raw).story_id and story.story_id.startswith("story-")


# ------------------------------------------------------------------ near-duplicates
def node(name: str) -> Node:
    return Node(f"http://h.org/{name}", name, f"story-{name}", (name,))


def test_shingles_and_jaccard():
    assert shingles("一二 三四", 3) == {"一二三", "二三四"}
    assert shingles("短", 5) == {"短"} and shingles(" ", 5) == set()
    assert round(jaccard(shingles(TEXT_01, 5), shingles(TEXT_06, 5)), 3) == 0.939


def test_bands_rows_are_the_bands_datasketch_picks():
    """bands_rows computes datasketch's choice itself (exact quadrature, no scipy import):
    the same (b, r) as MinHashLSH's over thresholds and permutation counts."""
    from datasketch import MinHashLSH

    for threshold in (0.3, 0.5, 0.7, 0.8, 0.85, 0.9, 0.95):
        for num_perm in (16, 64, 128, 256):
            try:
                lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
            except ValueError:  # one band: refused by both
                with pytest.raises(ValueError, match="b < 2"):
                    bands_rows(threshold, num_perm)
                continue
            assert bands_rows(threshold, num_perm) == (lsh.b, lsh.r), (threshold, num_perm)
    for threshold, num_perm in ((1.5, 128), (-0.1, 128), (0.8, 1)):  # refused by both, before any work
        with pytest.raises(ValueError):
            MinHashLSH(threshold=threshold, num_perm=num_perm)
        with pytest.raises(ValueError, match="threshold must be in|Too few"):
            bands_rows(threshold, num_perm)


def test_near_copies_share_a_band_and_unrelated_stories_do_not():
    b, r = bands_rows(0.8, 128)
    assert b * r <= 128
    a, c = band_keys(TEXT_01), band_keys(TEXT_06)
    assert len(a) == b and set(a) & set(c)
    assert not set(a) & set(band_keys("\n".join(STORIES["02"][1])))
    assert band_keys(TEXT_01) == a  # deterministic across calls (and processes: SHA-1 based MinHash)


def test_one_permutation_sketch_estimates_jaccard_and_finds_near_copies():
    oph = NearDupConfig(sketch="oph")
    a, c = band_keys(TEXT_01, oph), band_keys(TEXT_06, oph)
    assert len(a) == bands_rows(0.8, 128)[0] and set(a) & set(c)
    assert not set(a) & set(band_keys("\n".join(STORIES["02"][1]), oph))
    sig_a, sig_b = oph_signature(TEXT_01, 5, 128), oph_signature(TEXT_06, 5, 128)
    assert abs((sig_a == sig_b).mean() - 0.939) < 0.1  # bins agree about as often as shingles do
    assert (oph_signature(" ".join(TEXT_01), 5, 128) == sig_a).all()  # whitespace is ignored, as in shingles
    assert oph_signature("短", 5, 128).shape == (128,) and oph_signature("", 5, 128).shape == (128,)
    with pytest.raises(ValueError):
        oph_signature(TEXT_01, 5, 100)


def test_verified_pairs_apply_the_threshold():
    members = [(node("b"), TEXT_06), (node("a"), TEXT_01), (node("c"), "\n".join(STORIES["02"][1]))]
    assert verified_pairs(members) == [(node("a"), node("b"), 0.93865)]
    assert verified_pairs(members, NearDupConfig(threshold=0.95)) == []


def test_band_groups_sharing_a_story_are_one_component_verified_pair_by_pair_once():
    import random

    rng = random.Random(4)
    base = [s for s in (TEXT_01, TEXT_06, "\n".join(STORIES["02"][1]))]
    texts = {}
    for i in range(12):  # copies of three stories, a sentence dropped here and there
        lines = base[i % 3].split("\n")
        texts[node(f"s{i:02d}")] = "\n".join(x for x in lines if rng.random() > 0.15) or lines[0]
    nodes = sorted(texts)
    sets = [tuple(sorted(rng.sample(nodes[k : k + 5], 3))) for k in range(0, 8)] + [(nodes[10], nodes[11])]
    component_of = id_components(tuple(n.input_id for n in group) for group in sets)
    assert sorted(component_of) == sorted({n.input_id for group in sets for n in group})  # each in one component
    comps: dict = {}
    for group in sets:
        assert len({component_of[n.input_id] for n in group}) == 1  # a set never spans two components
        comps.setdefault(component_of[group[0].input_id], (set(), []))[1].append(group)
        comps[component_of[group[0].input_id]][0].update(n.input_id for n in group)
    members = [(n, texts[n]) for n in nodes]
    for threshold in (0.5, 0.8, 0.9):
        config = NearDupConfig(threshold=threshold)
        expected = sorted({p for group in sets for p in verified_pairs([(n, texts[n]) for n in group], config)})
        got = sorted(p for _, member_sets in comps.values() for p in component_pairs(members, member_sets, config))
        assert got == expected
    assert id_components(tuple(n.input_id for n in group) for group in reversed(sets)) == component_of


def test_clusters_pick_the_smallest_url_and_merge_chains():
    result = clusters([(node("c"), node("b"), 0.9), (node("b"), node("a"), 0.85), (node("x"), node("y"), 1.0)])
    assert {k: v.representative.input_id for k, v in result.items()} == {
        "story-a": "a",
        "story-b": "a",
        "story-c": "a",
        "story-x": "x",
        "story-y": "x",
    }
    assert result["story-c"].members == ("a", "b", "c") and result["story-b"].best_score == 0.9
    assert result["story-a"].cluster_id == result["story-c"].cluster_id != result["story-x"].cluster_id


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), max_size=15), st.randoms())
def test_clusters_do_not_depend_on_edge_order(pairs, rnd):
    edges = [(node(f"n{a}"), node(f"n{b}"), 0.9) for a, b in pairs if a != b]
    shuffled = list(edges)
    rnd.shuffle(shuffled)
    result = clusters(edges)
    assert clusters(shuffled) == result
    for assignment in result.values():
        assert assignment.representative.input_id == min(assignment.members)


# ------------------------------------------------------------------ flags
def test_stories_flags_keep_their_spellings_and_paper_defaults():
    from pipelines import stories
    from pipelines.engine import config_from_args, parse_job_args

    args, _ = parse_job_args(stories.build_parser(), ["--input", "d/*", "--output", "out"])
    assert config_from_args(args, CleanConfig) == CleanConfig()
    assert config_from_args(args, NearDupConfig, threshold=args.near_dup_threshold) == NearDupConfig()
    assert (args.source, args.license, args.seed) == ("dump", "unknown", 1)
    args, _ = parse_job_args(
        stories.build_parser(),
        [
            "--input",
            "d/*",
            "--output",
            "out",
            "--min_words",
            "10",
            "--max-words",
            "20",
            "--min_han_ratio",
            "0.7",
            "--near_dup_threshold",
            "0.95",
            "--num_perm",
            "64",
            "--shingle",
            "3",
            "--seed",
            "9",
        ],
    )
    assert config_from_args(args, CleanConfig) == CleanConfig(min_words=10, max_words=20, min_han_ratio=0.7)
    assert config_from_args(args, NearDupConfig, threshold=args.near_dup_threshold) == NearDupConfig(0.95, 64, 3, 9)


def test_members_are_scored_against_their_representative_not_their_best_edge():
    """A chain a ~ b ~ c (c not near a) is one cluster; c's score is its Jaccard with a."""
    from annotators.core.near_dup import (
        BandMember,
        Node,
        component_clusters,
        scored_against_representative,
        shingle_jaccard,
        shingle_set,
    )

    text = "".join(chr(0x4E00 + i) for i in range(240))
    a, b, c = text[0:200], text[20:220], text[40:240]  # J(a, b) = J(b, c) = 0.815, J(a, c) = 0.661
    nodes = [Node("", x, x, (x,)) for x in ("a", "b", "c")]
    members = [BandMember(n, t) for n, t in zip(nodes, (a, b, c))]
    config = NearDupConfig(threshold=0.8)
    found = component_clusters(("k", {"member": members, "sets": [[tuple(nodes)]]}), config, connected_only=True)
    scored = dict(scored_against_representative(found, members, config))
    assert {s: x.representative.story_id for s, x in scored.items()} == {"a": "a", "b": "a", "c": "a"}
    assert scored["a"].best_score == 1.0
    assert scored["c"].best_score == round(shingle_jaccard(shingle_set(c, 5), shingle_set(a, 5)), 6) < 0.8
    assert scored["b"].best_score >= 0.8


@pytest.mark.parametrize("story", ["01", "06"])
def test_length_filter_decides_as_the_exact_count_does(story):
    """check_story cuts only when the word range straddles a limit; its decisions are those
    of the exact count at every limit around it."""
    text = "\n".join(STORIES[story][1])
    words = jieba_word_count(text)
    for low in (words - 1, words, words + 1, 1, 50):
        for high in (0, words - 1, words, words + 1):
            got = check_story(text, CleanConfig(min_words=low, max_words=high))
            want = "too_short" if words < low else "too_long" if high and words > high else None
            assert (got.reason if got else None) == want, (low, high)
