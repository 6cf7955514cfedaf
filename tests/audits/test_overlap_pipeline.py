"""End-to-end runs of `pipelines.overlap` (LOT Table 14) into tmp folders, checked against an
independent re-computation of every figure written plainly here from the issue's definition."""

from __future__ import annotations

import gzip
import json
import logging
import pathlib

import jieba
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import check_rejects, shared_path
from test_overlap_data import STORIES, TITLES, clozet_row, senpos_row, write_lot, write_task

from pipelines import overlap

pytestmark = pytest.mark.slow  # end-to-end job runs: `make test-fast` leaves them out

FIELDS = {
    "clozet": ["story", "plot0", "plot1"],
    "senpos": ["story", "sentence"],
    "plotcom": ["story", "plot"],
    "outgen": ["title", "story", "outline"],
}


def table(folder: pathlib.Path) -> list[dict]:
    return pq.read_table(folder).to_pylist()


def toks(text: str) -> list[str]:
    for mark in ("<mask>", "[MASK]", "<MASK>"):
        text = text.replace(mark, "")
    return [t for t in jieba.lcut(text, HMM=True) if t.strip()]


def grams_of(row: dict, fields) -> list[tuple]:
    out = []
    for f in fields:
        texts = row[f] if isinstance(row[f], list) else [row[f]]
        for text in texts:
            t = toks(text)
            out += [tuple(t[i : i + 8]) for i in range(len(t) - 7)]
    return out


def expected_summary(test_rows, reference_grams: set) -> dict:
    """Table 14 figures from the definition, independently of the job's code."""
    per = []
    for row in test_rows:
        g = row["grams"]
        o = len([x for x in g if x in reference_grams])
        per.append((len(g), o, o / len(g) if g else 0.0))
    total_n, total_o = sum(p[0] for p in per), sum(p[1] for p in per)
    return {
        "n_examples": len(per),
        "ratio": total_o / total_n if total_n else 0.0,
        "ngrams": total_o,
        "examples": len([p for p in per if p[1] > 0]),
        "examples_over_10pct": len([p for p in per if p[2] > 0.1]),
        "max_ratio": max([p[2] for p in per], default=0.0),
        "total_ngrams": total_n,
    }


def test_grouping_keys_need_no_fallback_coder(tmp_path, caplog):
    """The summary's grouping key is one Beam encodes deterministically as it is: the run logs
    no "fallback deterministic coder" warning (a NamedTuple key did, on every run)."""
    write_lot(tmp_path / "lot", {"train": [0, 1], "val": [2], "test": [3, 0]})
    with caplog.at_level(logging.WARNING):
        overlap.run(["--lot", str(tmp_path / "lot"), "--output", str(tmp_path / "out")])
    assert table(tmp_path / "out" / "summary")
    assert not [r.getMessage() for r in caplog.records if "fallback deterministic coder" in r.getMessage()]


@pytest.fixture(scope="module")
def lot_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("lot")
    rows = write_lot(root / "lot", {"train": [0, 1, 2, 3, 4, 5], "val": [6, 7], "test": [8, 9, 2]})
    # SenPos test from a train story with another sentence removed: partial overlap.
    extra = [
        senpos_row(3, "test", removed=2),
        clozet_row(4, "test", wrong="狐狸偷偷溜走了，谁也没有发现它。", right_index=0),
    ]
    write_task(root / "lot", "senpos", rows["senpos"] + extra[:1])
    write_task(root / "lot", "clozet", rows["clozet"] + extra[1:])
    write_task(root / "lot", "outgen", [r for r in rows["outgen"] if r["split"] != "val"])
    bad = pa.Table.from_pylist(
        [
            {
                "example_id": "clozet-bad",
                "story_id": "s",
                "split": "test",
                "story": "缺了一个候选。<mask>",
                "plot0": "只有一个。",
            },
            {
                "example_id": "clozet-dev",
                "story_id": "s",
                "split": "dev",
                "story": "故事",
                "plot0": "甲",
                "plot1": "乙",
            },
        ]
    )
    pq.write_table(bad, root / "lot" / "clozet" / "part-1.parquet")
    (root / "lot" / "plotcom" / "notes.parquet").write_bytes(b"this is not parquet at all")
    out = root / "out"
    overlap.run(["--lot", str(root / "lot"), "--output", str(out)])
    return root, out


def test_lot_summary_matches_independent_recomputation(lot_run):
    root, out = lot_run
    summary = {(r["task"], r["split"]): r for r in table(out / "summary")}
    assert sorted(summary) == sorted((t, s) for t in FIELDS for s in ("val", "test") if (t, s) != ("outgen", "val"))
    for task, fields in FIELDS.items():
        rows = [r for r in table(root / "lot" / task / "part-0.parquet")]
        reference = {g for r in rows if r["split"] == "train" for g in grams_of(r, fields)}
        for split in ("val", "test"):
            tests = [{"grams": grams_of(r, fields)} for r in rows if r["split"] == split]
            if not tests:
                continue
            got = summary[(task, split)]
            assert got["reference"] == f"{task}/train"
            assert {k: got[k] for k in expected_summary(tests, reference)} == expected_summary(tests, reference)


def test_lot_overlap_is_real_where_stories_are_shared(lot_run):
    _, out = lot_run
    examples = {(r["task"], r["example_id"], r["split"]): r for r in table(out / "examples")}
    assert examples[("senpos", "senpos-02", "test")]["ratio"] == 1.0  # same example as in train
    assert 0.1 < examples[("senpos", "senpos-03", "test")]["ratio"] < 1.0
    assert examples[("plotcom", "plotcom-08", "test")]["o"] == 0
    over = {(r["task"], r["example_id"]) for r in table(out / "over_10pct")}
    assert ("senpos", "senpos-03") in over and ("plotcom", "plotcom-08") not in over
    tsv = (out / "over_10pct.tsv").read_text().splitlines()
    assert len(tsv) == len(over) and "senpos\ttest\tsenpos-03" in tsv


def test_lot_rejects_and_accounting(lot_run):
    _, out = lot_run
    check_rejects(out)
    rejects = {(r["stage"], r["input_id"], r["reason"]) for r in table(out / "rejects")}
    assert ("lot_rows", "clozet/part-1.parquet:1", "missing_field") in rejects
    assert ("lot_rows", "clozet/part-1.parquet:2", "unknown_split") in rejects
    assert ("lot_files", "plotcom/notes.parquet", "unreadable_file") in rejects
    assert ("splits", "outgen/val", "empty_split") in rejects
    assert len(rejects) == 4
    stats = json.loads((out / "stats.json").read_text())
    assert stats["balanced"] and stats["stages"]["lot_rows"]["rejected"] == 2
    assert all(s["read"] == s["written"] + s["rejected"] for s in stats["stages"].values())
    md = (out / "summary.md").read_text()
    assert "| Tasks | ClozeT | SenPos | PlotCom | OutGen |" in md and "Max Percent" in md
    assert "8-gram overlap definition" in (out / "CARD.md").read_text()


def _mystories(folder: pathlib.Path, stories: list[str]) -> list[dict]:
    rows = [
        {
            "example_id": f"s{i:02d}",
            "story_id": f"s{i:02d}",
            "split": "test",
            "title": TITLES[i % 10],
            "outline": [st[:5], st[10:16]],
            "story": st,
            "outline_source": "rake",
            "title_source": "input",
        }
        for i, st in enumerate(stories)
    ]
    folder.mkdir(parents=True)
    write = pa.Table.from_pylist(rows)
    pq.write_table(write, folder / "part-0.parquet")
    return rows


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory):
    """--test TABLE --reference GLOB with text, JSON-lines, parquet and bad files."""
    root = tmp_path_factory.mktemp("corpus")
    stories = ["".join(s) for s in STORIES]
    rows = _mystories(root / "outgen", stories)
    # A LOT task folder also holds <split>.jsonl exports of the same rows: read only the parquet.
    (root / "outgen" / "test.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    ref = root / "ref"
    ref.mkdir()
    unrelated = "今天的天气很好，我们一起去公园散步，看见湖面上有几只白色的天鹅在游泳。"
    (ref / "novels.txt").write_text("\n".join([unrelated, stories[1], ""]) + "\n")
    (ref / "more_novels.txt.gz").write_bytes(gzip.compress((stories[4] + "\n").encode("utf-8")))
    (ref / "more.jsonl").write_text(
        json.dumps({"text": stories[7]}, ensure_ascii=False) + "\n{oops\n" + json.dumps({"n": 1}) + "\n"
    )
    pq.write_table(pa.table({"text": [unrelated * 2]}), ref / "shelf.parquet")
    (ref / "cover.jpg").write_bytes(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01" * 20)
    (ref / "broken.parquet").write_bytes(b"PAR1 nope")
    out = root / "out"
    overlap.run(["--test", str(root / "outgen"), "--reference", str(ref / "*"), "--output", str(out)])
    return root, out


def test_reference_with_three_stories_flags_exactly_those(corpus_run):
    _, out = corpus_run
    over = {r["example_id"] for r in table(out / "over_10pct")}
    assert over == {"s01", "s04", "s07"}
    (summary,) = table(out / "summary")
    assert (summary["task"], summary["split"], summary["n_examples"], summary["examples_over_10pct"]) == (
        "outgen",
        "test",
        10,
        3,
    )


def test_corpus_rejects_each_bad_input_with_a_reason(corpus_run):
    _, out = corpus_run
    check_rejects(out)
    rejects = {(r["stage"], r["input_id"], r["reason"]) for r in table(out / "rejects")}
    assert rejects == {
        ("reference_files", "cover.jpg", "binary_file"),
        ("reference_files", "broken.parquet", "unreadable_file"),
        ("reference_rows", "more.jsonl:2", "malformed_json"),
        ("reference_rows", "more.jsonl:3", "no_text_fields"),
    }
    stats = json.loads((out / "stats.json").read_text())
    assert stats["balanced"] and stats["stages"]["reference_rows"]["read"] == 8


def test_empty_reference_gives_zero(tmp_path):
    _mystories(tmp_path / "outgen", ["".join(s) for s in STORIES[:4]])
    (tmp_path / "empty.txt").write_text("")
    out = tmp_path / "out"
    overlap.run(["--test", str(tmp_path / "outgen"), "--reference", str(tmp_path / "empty.txt"), "--output", str(out)])
    (summary,) = table(out / "summary")
    assert (summary["ratio"], summary["ngrams"], summary["examples"], summary["max_ratio"]) == (0.0, 0, 0, 0.0)
    assert summary["total_ngrams"] > 0
    assert {(r["input_id"], r["reason"]) for r in table(out / "rejects")} == {("reference", "empty_split")}
    check_rejects(out)


def test_english_with_regex_tokenizer(tmp_path):
    test = tmp_path / "tales" / "t.jsonl"
    test.parent.mkdir()
    test.write_text(
        json.dumps({"id": "a", "text": "The old man walked slowly to the sea, and the boy followed him."})
        + "\n"
        + json.dumps({"id": "b", "text": "Nothing here repeats anything from the other book at all."})
        + "\n"
    )
    (tmp_path / "ref.txt").write_text("Yesterday the old man walked slowly to the sea, and nobody saw.\n")
    out = tmp_path / "out"
    overlap.run(
        ["--test", str(test), "--reference", str(tmp_path / "ref.txt"), "--output", str(out), "--tokenizer", "regex"]
    )
    got = {r["example_id"]: (r["n"], r["o"]) for r in table(out / "examples")}
    # a: 15 tokens -> 8 8-grams; only "old man ... sea ," and "man ... , and" are in the
    # reference (case-sensitive: "The old man" is not "the old man").
    assert got == {"a": (8, 2), "b": (4, 0)}


def test_repeated_test_id_keeps_the_first_row_in_input_order(tmp_path):
    """Two rows of a --test table with one id: the examples table holds one row for the id,
    line 2's (line 11 would come first as a string), and line 11 is a duplicate_id reject
    naming line 2; once both rows were scored under one id."""
    lines = [{"id": f"e{i}", "text": f"Filler sentence number {i} tells nothing about the old sea."} for i in range(11)]
    lines[1] = {"id": "dup", "text": "The old man walked slowly to the sea, and the boy followed him."}
    lines[10] = {
        "id": "dup",
        "text": "Another tale reuses that id, and the old man walked slowly to the sea, and then.",
    }
    test = tmp_path / "tales" / "t.jsonl"
    test.parent.mkdir()
    test.write_text("".join(json.dumps(r) + "\n" for r in lines))
    (tmp_path / "ref.txt").write_text("Yesterday the old man walked slowly to the sea, and nobody saw.\n")
    out = tmp_path / "out"
    overlap.run(
        ["--test", str(test), "--reference", str(tmp_path / "ref.txt"), "--output", str(out), "--tokenizer", "regex"]
    )
    examples = table(out / "examples")
    assert [(r["n"], r["o"]) for r in examples if r["example_id"] == "dup"] == [(8, 2)]  # line 2's figures
    assert len(examples) == 10
    (reject,) = table(out / "rejects")
    assert (reject["stage"], reject["input_id"], reject["reason"]) == ("dedup_id", "t.jsonl:11", "duplicate_id")
    assert "t.jsonl:2" in reject["detail"]
    (summary,) = table(out / "summary")
    assert summary["n_examples"] == 10
    check_rejects(out)
    stats = json.loads((out / "stats.json").read_text())
    assert stats["stages"]["dedup_id"] == {**stats["stages"]["dedup_id"], "read": 11, "written": 10, "rejected": 1}


def test_repeated_lot_example_id_is_one_example(tmp_path):
    """--lot: a val row and a test row of one task with one example_id are one example (the
    first in file order); train rows, the reference, are not examples and keep their ids."""
    rows = write_lot(tmp_path / "lot", {"train": [0, 1], "val": [2], "test": [3]})
    write_task(tmp_path / "lot", "plotcom", rows["plotcom"] + [{**rows["plotcom"][-1], "example_id": "plotcom-02"}])
    out = tmp_path / "out"
    overlap.run(["--lot", str(tmp_path / "lot"), "--output", str(out)])
    ids = [(r["task"], r["split"], r["example_id"]) for r in table(out / "examples") if r["task"] == "plotcom"]
    assert sorted(ids) == [("plotcom", "test", "plotcom-03"), ("plotcom", "val", "plotcom-02")]
    assert [(r["stage"], r["reason"]) for r in table(out / "rejects")] == [("dedup_id", "duplicate_id")]
    check_rejects(out)


def test_real_stories_three_verbatim(tmp_path):
    sample = shared_path("lot", "outgen_val_sample.jsonl")
    records = [json.loads(line) for line in sample.read_text(encoding="utf-8").splitlines()]
    test = tmp_path / "outgen" / "val.jsonl"
    test.parent.mkdir()
    test.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records[:30]), encoding="utf-8")
    chosen = [3, 11, 27]
    ref_lines = [records[i]["story"] for i in chosen] + [r["story"] for r in records[60:]]
    (tmp_path / "ref.txt").write_text("\n".join(ref_lines) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    overlap.run(
        [
            "--test",
            str(test),
            "--reference",
            str(tmp_path / "ref.txt"),
            "--output",
            str(out),
            "--test-fields",
            "story,outline",
        ]
    )  # the sample has no titles
    assert {r["example_id"] for r in table(out / "over_10pct")} == {f"val.jsonl:{i + 1}" for i in chosen}
    reference = set()
    for line in ref_lines:
        t = toks(line)
        reference |= {tuple(t[i : i + 8]) for i in range(len(t) - 7)}
    tests = [{"grams": grams_of(r, ["story", "outline"])} for r in records[:30]]
    (summary,) = table(out / "summary")
    want = expected_summary(tests, reference)
    assert {k: summary[k] for k in want} == want


def test_multiprocess_run_is_byte_identical(lot_run, tmp_path):
    root, out = lot_run
    again = tmp_path / "again"
    overlap.run(
        [
            "--lot",
            str(root / "lot"),
            "--output",
            str(again),
            "--direct_running_mode=multi_processing",
            "--direct_num_workers=2",
        ]
    )
    names = sorted(str(p.relative_to(out)) for p in out.rglob("*.parquet"))
    assert "examples/test-00000-of-00001.parquet" in names  # one file set per split
    assert "rejects/part-00000-of-00001.parquet" in names
    names += ["summary.md", "over_10pct.tsv", "stats.json", "CARD.md"]
    assert names == sorted(str(p.relative_to(again)) for p in again.rglob("*.parquet")) + names[-4:]
    for name in names:
        assert (out / name).read_bytes() == (again / name).read_bytes(), name


def test_output_folder_is_a_hugging_face_dataset_card(lot_run):
    """README.md's YAML configs load with datasets.load_dataset, splits and row counts as written."""
    from conftest import check_dataset_card

    assert check_dataset_card(lot_run[1])
