"""End-to-end runs of `pipelines.lot` on the embedded sample plus bad input, and on real LOT stories."""
from __future__ import annotations

import filecmp
import json
import pathlib

import pytest

from conftest import ROOT, shared_path
from lot_checks import check_accounting, check_jsonl_exports, check_lot_output, read_table
from pipelines import lot

SAMPLE = ROOT / "samples" / "lot"
BAD_STORIES = [
    b'{"id": "bad-json", "story": "\xe5\xb0\x8f\xe7\x8c\xab"',          # truncated JSON
    b'{"id": "bad-empty", "story": ""}',
    b'{"id": "bad-blank", "story": "   \\n  "}',
    b'{"id": "bad-english", "story": "The fox jumped over the fence. Then it ran away. It never came back."}',
    '{"id": "bad-one", "story": "小猫在河边钓了一整天的鱼，一条鱼也没有钓到。"}'.encode(),
    '{"id": "bad-two", "story": "小狗每天早上都去门口等主人下班回家。主人回来以后会带它去公园散步。"}'.encode(),
    b"[1, 2, 3]",
]
BAD_ANNOTATIONS = [
    '{"story_id": "no-such-story", "right_index": 2, "wrong": "月亮从西边升起来照亮了整个村子。"}',
    '{"story_id": "sample-001", "right_index": 0, "wrong": "这是一句写在最前面的错误句子啊。"}',
    "{not json",
]


def _sample_stories():
    return [json.loads(line) for line in (SAMPLE / "stories.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lot")
    stories = (SAMPLE / "stories.jsonl").read_bytes().rstrip(b"\n").split(b"\n")
    dup = json.loads(stories[0])
    dup["id"] = "dup-of-001"
    lines = stories + BAD_STORIES + [json.dumps(dup, ensure_ascii=False).encode()]
    (tmp / "stories.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    anns = (SAMPLE / "clozet_annotations.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(anns[0])
    story = next(s for s in _sample_stories() if s["id"] == first["story_id"])
    from annotators.text.zh_sentences import split_sentences
    right = split_sentences(story["story"])[first["right_index"]]
    same = json.dumps({"story_id": first["story_id"], "right_index": first["right_index"], "wrong": right},
                      ensure_ascii=False)
    (tmp / "ann.jsonl").write_text("\n".join(anns + BAD_ANNOTATIONS + [same]) + "\n", encoding="utf-8")
    base = ["--stories", str(tmp / "stories.jsonl"), "--annotations", str(tmp / "ann.jsonl")]
    lot.run(base + ["--output", str(tmp / "a"), "--seed", "0"])
    lot.run(base + ["--output", str(tmp / "b"), "--seed", "0",
                    "--direct_running_mode=multi_processing", "--direct_num_workers=2"])
    lot.run(base + ["--output", str(tmp / "c"), "--seed", "1"])
    return tmp


def _all_sources():
    """story_id -> text of the sample stories and of the bad lines that still hold a story."""
    sources = {s["id"]: s["story"] for s in _sample_stories()}
    for raw in BAD_STORIES:
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("story", "").strip():
            sources[obj["id"]] = obj["story"]
    return sources


def test_all_four_tasks_hold_their_invariants(built):
    sources = _all_sources()
    tables = check_lot_output(built / "a", sources)
    assert all(len(df) for df in tables.values())
    check_jsonl_exports(built / "a", tables)
    assert set(tables["clozet"].story_id) == {json.loads(l)["story_id"] for l in
                                              (SAMPLE / "clozet_annotations.jsonl").read_text().splitlines()}


def test_bad_input_becomes_rejects_with_reasons(built):
    stats = check_accounting(built / "a")
    rejects = read_table(built / "a" / "rejects")
    by_input = {(r.stage, r.input_id.rsplit(":", 1)[-1]): r.reason for r in rejects.itertuples()}
    n = len(_sample_stories())
    expected = {("parse", str(n + 1)): "malformed_json", ("parse", str(n + 2)): "missing_field",
                ("parse", str(n + 3)): "missing_field", ("prepare", str(n + 4)): "not_chinese",
                ("plotcom", str(n + 5)): "too_few_sentences", ("plotcom", str(n + 6)): "too_few_sentences",
                ("senpos", str(n + 5)): "no_removable_sentence", ("senpos", str(n + 6)): "no_removable_sentence",
                ("parse", str(n + 7)): "not_an_object", ("dedup_text", str(n + 8)): "exact_duplicate"}
    for key, reason in expected.items():
        assert by_input[key] == reason, key
    assert stats["stages"]["parse"]["read"] == n + 8
    ann_reasons = sorted(rejects[rejects.stage.isin(["clozet", "annotations"])].reason)
    assert ann_reasons == ["first_sentence", "malformed_json", "unknown_story", "wrong_equals_right"]
    assert not (rejects.reason == "internal_error").any()
    outgen = read_table(built / "a" / "outgen")
    assert {"bad-one", "bad-two"} <= set(outgen.story_id)  # OutGen takes any story it can outline


def test_same_seed_is_byte_identical_across_worker_counts(built):
    for task in ("clozet", "senpos", "plotcom", "outgen"):
        for split in ("train", "val", "test"):
            assert filecmp.cmp(built / "a" / task / f"{split}.jsonl", built / "b" / task / f"{split}.jsonl",
                               shallow=False)
        a, b = read_table(built / "a" / task), read_table(built / "b" / task)
        assert a.equals(b)
    assert (built / "a" / "stats.json").read_bytes() == (built / "b" / "stats.json").read_bytes()


def test_another_seed_changes_sampled_choices(built):
    a, c = read_table(built / "a" / "senpos"), read_table(built / "c" / "senpos")
    assert set(a.example_id) != set(c.example_id)
    oa, oc = read_table(built / "a" / "outgen"), read_table(built / "c" / "outgen")
    assert [list(x) for x in oa.outline] != [list(x) for x in oc.outline]


def test_card_and_stats_report_table3(built):
    stats = json.loads((built / "a" / "stats.json").read_text())
    assert stats["table3"]["outgen"]["train"]["# Examples"] == stats["exports"]["outgen/train"]
    card = (built / "a" / "CARD.md").read_text()
    assert "Avg. # Candidate Positions" in card and "seed: 0" in card


def test_review_tasks_round_trip(built, tmp_path):
    tasks = [json.loads(l) for l in (built / "a" / "review" / "senpos_test.jsonl").read_text().splitlines()]
    tasks += [json.loads(l) for l in (built / "a" / "review" / "senpos_val.jsonl").read_text().splitlines()]
    assert tasks, "the sample should have SenPos val/test examples"
    reviews = []
    for t in tasks:
        drop = [c["position"] for c in t["candidates"] if c["position"] != t["label"]][:1]
        reviews.append({"example_id": t["example_id"], "review": {"accept": True, "drop": drop}})
    (tmp_path / "rev.jsonl").write_text("\n".join(json.dumps(r) for r in reviews) + "\n")
    lot.run(["--stories", str(built / "stories.jsonl"), "--annotations", str(built / "ann.jsonl"),
             "--output", str(tmp_path / "o"), "--senpos-reviews", str(tmp_path / "rev.jsonl"),
             "--senpos-reviewed-only"])
    senpos = read_table(tmp_path / "o" / "senpos")
    evals = senpos[senpos.split != "train"]
    assert len(evals) == len(tasks) and evals.reviewed.all()
    check_accounting(tmp_path / "o")


def test_real_lot_stories(tmp_path):
    path = shared_path("lot", "outgen_val_sample.jsonl")
    lot.run(["--stories", str(path), "--output", str(tmp_path / "real")])
    sources = {}
    from annotators.core.ids import stable_id
    for line in pathlib.Path(path).read_text(encoding="utf-8").splitlines():
        story = json.loads(line)["story"]
        sources[stable_id("story", story)] = story
    tables = check_lot_output(tmp_path / "real", sources)
    stats = check_accounting(tmp_path / "real")
    assert len(tables["senpos"]) > 100 and len(tables["outgen"]) > 140
    assert stats["outline_agreement"]["stories_with_input_outline"] > 140
