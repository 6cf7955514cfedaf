"""End-to-end runs of `pipelines.lot` on the embedded sample plus bad input, and on real LOT stories."""

from __future__ import annotations

import filecmp
import json
import os
import pathlib

import pytest
from conftest import ROOT, jieba_in_job, shared_path
from lot_checks import check_accounting, check_jsonl_exports, check_lot_output, read_table

from pipelines import lot
from pipelines.engine.ranges import RANGE_BYTES_ENV

pytestmark = pytest.mark.slow  # end-to-end job runs: `make test-fast` leaves them out

SAMPLE = ROOT / "samples" / "lot"
BAD_STORIES = [
    b'{"id": "bad-json", "story": "\xe5\xb0\x8f\xe7\x8c\xab"',  # truncated JSON
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
    variant = json.loads(stories[0])  # sample-001 (annotated) with one character changed
    variant["id"], variant["story"] = "variant-of-001", variant["story"].replace("小刺猬", "小剌猬", 1)
    assert variant["story"] != dup["story"]
    lines = (
        stories
        + BAD_STORIES
        + [json.dumps(dup, ensure_ascii=False).encode(), json.dumps(variant, ensure_ascii=False).encode()]
    )
    (tmp / "stories.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    anns = (SAMPLE / "clozet_annotations.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(anns[0])
    story = next(s for s in _sample_stories() if s["id"] == first["story_id"])
    from annotators.text.zh_sentences import split_sentences

    right = split_sentences(story["story"])[first["right_index"]]
    same = json.dumps(
        {"story_id": first["story_id"], "right_index": first["right_index"], "wrong": right}, ensure_ascii=False
    )
    (tmp / "ann.jsonl").write_text("\n".join(anns + BAD_ANNOTATIONS + [same]) + "\n", encoding="utf-8")
    base = ["--stories", str(tmp / "stories.jsonl"), "--annotations", str(tmp / "ann.jsonl")]
    lot.run(base + ["--output", str(tmp / "a"), "--seed", "0"])
    lot.run(
        base
        + [
            "--output",
            str(tmp / "b"),
            "--seed",
            "0",
            "--direct_running_mode=multi_processing",
            "--direct_num_workers=2",
        ]
    )
    lot.run(base + ["--output", str(tmp / "c"), "--seed", "1"])
    os.environ[RANGE_BYTES_ENV] = "2048"  # the stories file in about 40 line ranges, over 2 workers
    try:
        lot.run(base + ["--output", str(tmp / "r"), "--seed", "0", "--direct_num_workers=2"])
    finally:
        del os.environ[RANGE_BYTES_ENV]
    return tmp


def test_an_annotation_of_a_removed_exact_duplicate_applies_to_the_kept_copy(tmp_path):
    """copy-004 and copy-005 are exact duplicates of sample-004 and sample-005, removed by the
    dedup. copy-004's annotation was an unknown_story reject (a human annotation lost); it now
    applies to sample-004, which has none of its own: the build is the one where it names
    sample-004, table for table. sample-005 has its own annotation, so copy-005's is an
    annotation_of_duplicate reject naming sample-005 and that annotation's line."""
    stories = {s["id"]: s for s in _sample_stories()}
    copies = [{**stories["sample-004"], "id": "copy-004"}, {**stories["sample-005"], "id": "copy-005"}]
    lines = (SAMPLE / "stories.jsonl").read_text(encoding="utf-8")
    (tmp_path / "stories.jsonl").write_text(
        lines + "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in copies), encoding="utf-8"
    )
    anns = (SAMPLE / "clozet_annotations.jsonl").read_text(encoding="utf-8").splitlines()
    own5 = next(i for i, a in enumerate(anns) if json.loads(a)["story_id"] == "sample-005")
    ann4 = {
        "right_index": 7,
        "right": "傍晚时，她在田角发现了三株依然绿着的稻苗。",
        "wrong": "傍晚时，她在田角发现了三株正在唱歌的稻苗。",
        "annotator": "second-batch",
    }
    ann5 = {**json.loads(anns[own5]), "story_id": "copy-005", "wrong": "张大伯没有骂他们，反而当场把瓜摔碎了。"}

    def build(name, extra):
        (tmp_path / f"{name}.jsonl").write_text(
            "\n".join(anns + [json.dumps(a, ensure_ascii=False) for a in extra]) + "\n", encoding="utf-8"
        )
        argv = ["--stories", str(tmp_path / "stories.jsonl"), "--annotations", str(tmp_path / f"{name}.jsonl")]
        lot.run(argv + ["--output", str(tmp_path / name), "--seed", "0", "--splits", "8,1,1"])
        return tmp_path / name

    moved = build("moved", [{**ann4, "story_id": "copy-004"}, ann5])
    direct = build("direct", [{**ann4, "story_id": "sample-004"}])
    clozet = read_table(moved / "clozet")
    assert list(clozet[clozet.annotator == "second-batch"].story_id) == ["sample-004"]
    rejects = read_table(moved / "rejects")
    clozet_rejects = [(r.input_id, r.reason, r.detail) for r in rejects[rejects.stage == "clozet"].itertuples()]
    assert [r[:2] for r in clozet_rejects] == [(f"moved.jsonl:{len(anns) + 2}", "annotation_of_duplicate")]
    detail = json.loads(clozet_rejects[0][2])["message"]
    assert "copy-005 is an exact duplicate of story sample-005" in detail and f"moved.jsonl:{own5 + 1}" in detail
    for task in ("clozet", "plotcom", "senpos", "outgen"):
        names = sorted(p.name for p in (moved / task).iterdir())
        assert names == sorted(p.name for p in (direct / task).iterdir())
        assert all(filecmp.cmp(moved / task / n, direct / task / n, shallow=False) for n in names), task
    check_accounting(moved)


def _all_sources():
    """story_id -> text of the sample stories and of the bad lines that still hold a story."""
    sources = {s["id"]: s["story"] for s in _sample_stories()}
    sources["variant-of-001"] = sources["sample-001"].replace("小刺猬", "小剌猬", 1)
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
    assert set(tables["clozet"].story_id) == {
        json.loads(x)["story_id"] for x in (SAMPLE / "clozet_annotations.jsonl").read_text().splitlines()
    }


def test_bad_input_becomes_rejects_with_reasons(built):
    stats = check_accounting(built / "a")
    rejects = read_table(built / "a" / "rejects")
    by_input = {(r.stage, r.input_id.rsplit(":", 1)[-1]): r.reason for r in rejects.itertuples()}
    n = len(_sample_stories())
    expected = {
        ("parse", str(n + 1)): "malformed_json",
        ("parse", str(n + 2)): "missing_field",
        ("parse", str(n + 3)): "missing_field",
        ("prepare", str(n + 4)): "not_chinese",
        ("plotcom", str(n + 5)): "too_few_sentences",
        ("plotcom", str(n + 6)): "too_few_sentences",
        ("senpos", str(n + 5)): "no_removable_sentence",
        ("senpos", str(n + 6)): "no_removable_sentence",
        ("parse", str(n + 7)): "not_an_object",
        ("dedup_text", str(n + 8)): "exact_duplicate",
    }
    for key, reason in expected.items():
        assert by_input[key] == reason, key
    assert stats["stages"]["parse"]["read"] == n + 9
    ann_reasons = sorted(rejects[rejects.stage.isin(["clozet", "annotations"])].reason)
    assert ann_reasons == ["first_sentence", "malformed_json", "unknown_story", "wrong_equals_right"]
    assert not (rejects.reason == "internal_error").any()
    outgen = read_table(built / "a" / "outgen")
    assert {"bad-one", "bad-two"} <= set(outgen.story_id)  # OutGen takes any story it can outline


def test_near_duplicates_share_one_split_in_every_task_and_no_leak_is_reported(built):
    tables = {t: read_table(built / "a" / t) for t in ("clozet", "senpos", "plotcom", "outgen")}
    clozet_split = set(tables["clozet"].query("story_id == 'sample-001'").split)
    assert len(clozet_split) == 1
    variant = {(t, sp) for t, df in tables.items() for sp in df.query("story_id == 'variant-of-001'").split}
    assert variant and {sp for _, sp in variant} == clozet_split  # the variant follows its ClozeT original
    assert ("plotcom", "train") not in variant
    rejects = read_table(built / "a" / "rejects")
    [detail] = rejects[(rejects.stage == "plotcom") & rejects.input_id.str.endswith(":57")].detail
    assert json.loads(detail) == {"message": "held out: a near-duplicate of ClozeT story sample-001"}
    leaks = json.loads((built / "a" / "stats.json").read_text())["leaks"]
    assert (
        leaks["stories_in_two_splits"],
        leaks["near_duplicate_groups_in_two_splits"],
        leaks["plotcom_train_clozet_stories"],
        leaks["groups"],
    ) == (0, 0, 0, 1)
    assert "No leak: every story, window and near-duplicate" in (built / "a" / "CARD.md").read_text()


def test_plotcom_eval_paper_samples_from_every_clozet_split_and_the_card_says_so(built, tmp_path):
    lot.run(
        [
            "--stories",
            str(built / "stories.jsonl"),
            "--annotations",
            str(built / "ann.jsonl"),
            "--output",
            str(tmp_path / "paper"),
            "--plotcom-eval",
            "paper",
            "--title-from",
            "first-sentence",
        ]
    )
    clozet, plotcom = read_table(tmp_path / "paper" / "clozet"), read_table(tmp_path / "paper" / "plotcom")
    evals = plotcom[plotcom.split != "train"]
    assert set(evals.origin) == {"clozet"} and set(evals.story_id) <= set(clozet.story_id)
    crossed = set(evals.story_id) & set(clozet.query("split == 'train'").story_id)
    assert crossed  # ClozeT train stories became PlotCom val/test, as in the paper
    stats = json.loads((tmp_path / "paper" / "stats.json").read_text())
    assert stats["leaks"]["stories_in_two_splits"] >= len(crossed) > 0
    assert "because `--plotcom-eval paper` samples PlotCom val/test" in (tmp_path / "paper" / "CARD.md").read_text()
    outgen = read_table(tmp_path / "paper" / "outgen")
    untitled = outgen[outgen.title_source == "first_sentence"]
    assert len(untitled) == stats["outgen_titles"]["first_sentence"] > 0 and (untitled.title != "").all()


def test_same_seed_is_byte_identical_across_worker_counts(built):
    for task in ("clozet", "senpos", "plotcom", "outgen"):
        names = sorted(p.name for p in (built / "a" / task).iterdir() if not p.name.endswith(".parquet"))
        assert names == sorted(p.name for p in (built / "b" / task).iterdir() if not p.name.endswith(".parquet"))
        for name in names:  # every .jsonl, .source and .target export
            assert filecmp.cmp(built / "a" / task / name, built / "b" / task / name, shallow=False), name
        a, b = read_table(built / "a" / task), read_table(built / "b" / task)
        assert a.equals(b)
    assert (built / "a" / "stats.json").read_bytes() == (built / "b" / "stats.json").read_bytes()


def test_many_line_ranges_over_two_workers_give_the_same_bytes(built):
    """Input ids keep their line numbers however a file is cut into ranges."""
    files = sorted(p.relative_to(built / "a") for p in (built / "a").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(built / "r") for p in (built / "r").rglob("*") if p.is_file())
    for name in files:
        assert filecmp.cmp(built / "a" / name, built / "r" / name, shallow=False), name


def test_another_seed_changes_sampled_choices(built):
    a, c = read_table(built / "a" / "senpos"), read_table(built / "c" / "senpos")
    assert set(a.example_id) != set(c.example_id)
    oa, oc = read_table(built / "a" / "outgen"), read_table(built / "c" / "outgen")
    assert [list(x) for x in oa.outline] != [list(x) for x in oc.outline]


def test_card_and_stats_report_table3(built):
    stats = json.loads((built / "a" / "stats.json").read_text())
    assert stats["table3"]["outgen"]["train"]["# Examples"] == stats["exports"]["outgen/train.jsonl"]
    card = (built / "a" / "CARD.md").read_text()
    assert "Avg. # Candidate Positions" in card and "seed: 0" in card


def test_review_tasks_round_trip(built, tmp_path):
    tasks = [json.loads(x) for x in (built / "a" / "review" / "senpos_test.jsonl").read_text().splitlines()]
    tasks += [json.loads(x) for x in (built / "a" / "review" / "senpos_val.jsonl").read_text().splitlines()]
    assert tasks, "the sample should have SenPos val/test examples"
    reviews = []
    for t in tasks:
        drop = [c["position"] for c in t["candidates"] if c["position"] != t["label"]][:1]
        reviews.append({"example_id": t["example_id"], "review": {"accept": True, "drop": drop}})
    (tmp_path / "rev.jsonl").write_text("\n".join(json.dumps(r) for r in reviews) + "\n")
    lot.run(
        [
            "--stories",
            str(built / "stories.jsonl"),
            "--annotations",
            str(built / "ann.jsonl"),
            "--output",
            str(tmp_path / "o"),
            "--senpos-reviews",
            str(tmp_path / "rev.jsonl"),
            "--senpos-reviewed-only",
        ]
    )
    senpos = read_table(tmp_path / "o" / "senpos")
    evals = senpos[senpos.split != "train"]
    assert len(evals) == len(tasks) and evals.reviewed.all()
    check_accounting(tmp_path / "o")
    check_jsonl_exports(
        tmp_path / "o", {t: read_table(tmp_path / "o" / t) for t in ("clozet", "senpos", "plotcom", "outgen")}
    )
    reviewed = sum(len((tmp_path / "o" / "senpos" / f"{s}.jsonl").read_text().splitlines()) for s in ("val", "test"))
    assert reviewed == len(tasks)  # reviewed examples leave the .unreviewed files
    assert all(
        (tmp_path / "o" / "senpos" / f"{s}.unreviewed.{x}").read_text() == ""
        for s in ("val", "test")
        for x in ("jsonl", "source", "target")
    )
    before = sum(
        len((built / "a" / "senpos" / f"{s}.unreviewed.jsonl").read_text().splitlines()) for s in ("val", "test")
    )
    assert before == len(tasks) and (built / "a" / "senpos" / "val.jsonl").read_text() == ""


def test_every_line_export_has_one_line_per_row_when_read_with_splitlines(tmp_path):
    """Stories holding \\x0b, \\x0c, \\x1c-\\x1e, NEL, U+2028 and U+2029 inside a sentence: each
    `.source`/`.target` (a space in their place) and `.jsonl` export (escaped, the same JSON
    value) read with str.splitlines() has one line per written row, as Hugging Face `datasets`'
    "text" loader reads it; the parquet tables keep the text unchanged."""
    breaks = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
    stories = _sample_stories()
    for i, story in enumerate(stories[:16]):
        text, ch = story["story"], breaks[i % len(breaks)]
        story["story"] = text[: len(text) // 2] + ch + text[len(text) // 2 :]
        story["title"] = story.get("title", "")[:1] + ch + story.get("title", "")[1:]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in stories), "utf-8")
    lot.run(["--stories", str(tmp_path / "s.jsonl"), "--output", str(tmp_path / "o")])
    out = tmp_path / "o"
    exports = json.loads((out / "stats.json").read_text(encoding="utf-8"))["exports"]
    assert sum(name.endswith((".source", ".target")) for name in exports) >= 20
    for name, rows in exports.items():
        assert len((out / name).read_text(encoding="utf-8").splitlines()) == rows, name
    for task in ("clozet", "senpos", "plotcom", "outgen"):
        table = read_table(out / task)
        lines = [line for path in sorted((out / task).glob("*.jsonl")) for line in path.read_text("utf-8").splitlines()]
        assert sorted(json.loads(line)["story"] for line in lines) == sorted(table.story), task  # a row a line
        assert task == "clozet" or set(breaks) <= set("".join(table.story)), task  # the table keeps the text


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


def _real_stories() -> list[str]:
    path = shared_path("lot", "outgen_val_sample.jsonl")
    return [json.loads(line)["story"] for line in pathlib.Path(path).read_text(encoding="utf-8").splitlines()]


def _qualifying(story_text: str) -> bool:
    """A paragraph the paper could use alone: under 500 words, with a removable sentence."""
    from annotators.lot.senpos import windows
    from annotators.lot.story import parse_story_record, prepare_story
    from annotators.text.words import count_words

    story = prepare_story(parse_story_record("p:1", json.dumps({"story": story_text}, ensure_ascii=False).encode()))
    return sum(count_words(w) for w in story.words) < 500 and bool(windows(story))


def test_senpos_from_pages_and_a_book_made_of_real_stories(tmp_path):
    stories = _real_stories()
    pages = ["\n".join(stories[i : i + 5]) for i in range(0, 60, 5)]
    book = "\n".join(stories)  # one text of every real story, one per paragraph: a short "novel"
    lines = [json.dumps({"id": f"page-{i}", "story": p}, ensure_ascii=False) for i, p in enumerate(pages)]
    lines.append(json.dumps({"id": "book", "story": book}, ensure_ascii=False))
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    lot.run(["--stories", str(tmp_path / "in.jsonl"), "--output", str(tmp_path / "out")])
    senpos = read_table(tmp_path / "out" / "senpos")
    qualifying_pages = sum(_qualifying(s) for s in stories[:60])
    qualifying_book = sum(_qualifying(s) for s in stories)
    assert (senpos.story_id != "book").sum() >= 0.9 * qualifying_pages
    assert (senpos.story_id == "book").sum() >= 0.9 * qualifying_book
    check_lot_output(tmp_path / "out", {**{f"page-{i}": p for i, p in enumerate(pages)}, "book": book})
    rejects = read_table(tmp_path / "out" / "rejects")
    book_rejects = rejects[rejects.input_id.str.endswith(f":{len(lines)}")]
    assert set(book_rejects.stage) == {"plotcom", "outgen"} and set(book_rejects.reason) == {"story_too_long"}


def test_output_folder_is_a_hugging_face_dataset_card(built):
    """README.md's YAML configs load with datasets.load_dataset, splits and row counts as written."""
    from conftest import check_dataset_card

    assert check_dataset_card(built / "a")


@pytest.mark.parametrize("workers, where", [("2", "not loaded"), ("1", "loaded")])
def test_the_job_prepares_and_builds_stories_on_the_pool(tmp_path, workers, where):
    """With a pool, every story is cleaned, cut, outlined and built into its examples by the
    workers (one pooled stage; the task stages only account for the outcomes), so the job's own
    process never loads jieba's dictionary; with one worker it does all of that itself."""
    args = ["--stories", str(SAMPLE / "stories.jsonl"), "--output", str(tmp_path / "o")]
    assert jieba_in_job("lot", args, workers) == where
    stats = json.loads((tmp_path / "o" / "stats.json").read_text(encoding="utf-8"))
    assert stats["stages"]["outgen"]["written"] > 0
