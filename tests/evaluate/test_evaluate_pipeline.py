"""End-to-end runs of `pipelines.evaluate`: on predictions written for the LOT sample build,
on bad prediction files, and `--compat original` on real LongLM OutGen generations against an
independent plain-Python re-implementation of the official script (PEERS.md 1.5; its coverage
through pltrdy rouge 1.0.0 itself)."""

from __future__ import annotations

import json
import math
import pathlib
import sys
from collections import Counter

import pyarrow.parquet as pq
import pytest
from conftest import ROOT, check_rejects, shared_path

from pipelines import evaluate, lot

pytestmark = pytest.mark.slow  # end-to-end job runs: `make test-fast` leaves them out


def read_table(folder: pathlib.Path) -> list[dict]:
    return [r for f in sorted(folder.glob("*.parquet")) for r in pq.read_table(f).to_pylist()]


def metrics_of(out: pathlib.Path, group: str = "all") -> dict[str, float]:
    return {r["metric"]: r["value"] for r in read_table(out / "metrics") if r["group"] == group}


def stats_of(out: pathlib.Path) -> dict:
    return json.loads((out / "stats.json").read_text(encoding="utf-8"))


def rejects_of(out: pathlib.Path) -> list[tuple[str, str, str]]:
    check_rejects(out)
    return sorted((r["stage"], r["input_id"], r["reason"]) for r in read_table(out / "rejects"))


def write_lines(path: pathlib.Path, records) -> pathlib.Path:
    lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in records]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def run_eval(tmp: pathlib.Path, name: str, *args: str) -> tuple[int, pathlib.Path]:
    out = tmp / name
    code = evaluate.run([*args, "--output", str(out)])
    assert stats_of(out)["balanced"]
    assert not (tmp / f"{name}.incomplete").exists()
    return code, out


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """The LOT sample build (the README's command)."""
    out = tmp_path_factory.mktemp("lot") / "lot"
    lot.run(
        [
            "--stories",
            str(ROOT / "samples/lot/stories.jsonl"),
            "--annotations",
            str(ROOT / "samples/lot/clozet_annotations.jsonl"),
            "--output",
            str(out),
            "--splits",
            "8,1,1",
        ]
    )
    return out


def gold_file(sample: pathlib.Path, task: str) -> pathlib.Path:
    """The task's test export: SenPos test examples nobody has reviewed are `test.unreviewed.jsonl`."""
    return sample / task / ("test.unreviewed.jsonl" if task == "senpos" else "test.jsonl")


def gold_lines(sample: pathlib.Path, task: str) -> list[dict]:
    return [json.loads(x) for x in gold_file(sample, task).read_text(encoding="utf-8").splitlines()]


# ----------------------------------------------------------------------------- accuracy tasks
@pytest.mark.parametrize("task", ["clozet", "senpos"])
def test_accuracy_on_the_sample_build_equals_a_direct_count(sample, tmp_path, task):
    gold = gold_lines(sample, task)
    assert gold
    flip = (lambda x: "1" if x == "0" else "0") if task == "clozet" else (lambda x: x + 1)
    preds = [{"label": g["label"] if i % 2 == 0 else flip(g["label"])} for i, g in enumerate(gold)]
    path = write_lines(tmp_path / "preds.jsonl", preds)
    direct = sum(str(p["label"]) == str(g["label"]) for p, g in zip(preds, gold)) / len(gold)
    # against the released-format jsonl, by line
    code, out = run_eval(
        tmp_path, "jsonl", "--task", task, "--predictions", str(path), "--gold", str(gold_file(sample, task))
    )
    assert code == 0 and rejects_of(out) == []
    assert metrics_of(out)["accuracy"] == direct
    # against the parquet table: same rows, same order (example_id), same number
    code, out2 = run_eval(
        tmp_path, "table", "--task", task, "--predictions", str(path), "--gold", str(sample / task), "--split", "test"
    )
    assert code == 0 and metrics_of(out2)["accuracy"] == direct
    card = (out2 / "CARD.md").read_text(encoding="utf-8")
    assert "compatibility mode: **original**" in card and "`missing_prediction`" in card


def test_id_alignment_on_the_table(sample, tmp_path):
    rows = sorted((r for r in read_table(sample / "clozet") if r["split"] == "test"), key=lambda r: r["example_id"])
    preds = [{"example_id": r["example_id"], "label": r["label"]} for r in reversed(rows)]  # any order
    code, out = run_eval(
        tmp_path,
        "ids",
        "--task",
        "clozet",
        "--align",
        "id",
        "--predictions",
        str(write_lines(tmp_path / "p.jsonl", preds)),
        "--gold",
        str(sample / "clozet"),
    )
    assert code == 0 and metrics_of(out)["accuracy"] == 1.0
    assert sorted(r["example_id"] for r in read_table(out / "scores")) == [r["example_id"] for r in rows]


# ----------------------------------------------------------------------------- bad prediction files
def test_wrong_count_is_an_error_with_rejects_never_a_misalignment(sample, tmp_path, capsys):
    gold = gold_lines(sample, "clozet")
    preds = [{"label": g["label"]} for g in gold[:-1]]  # one short
    code, out = run_eval(
        tmp_path,
        "short",
        "--task",
        "clozet",
        "--predictions",
        str(write_lines(tmp_path / "p.jsonl", preds)),
        "--gold",
        str(sample / "clozet/test.jsonl"),
    )
    assert code == 2 and "do not match one to one" in capsys.readouterr().err
    assert rejects_of(out) == [("align", f"test.jsonl:{len(gold)}", "missing_prediction")]
    assert metrics_of(out)["accuracy"] == 1.0  # the matched ones are all right: nothing shifted
    code, out = run_eval(
        tmp_path,
        "long",
        "--task",
        "clozet",
        "--allow-partial",
        "--predictions",
        str(write_lines(tmp_path / "p2.jsonl", [{"label": g["label"]} for g in gold] + [{"label": "0"}])),
        "--gold",
        str(sample / "clozet/test.jsonl"),
    )
    assert code == 0 and rejects_of(out) == [("align", f"p2.jsonl:{len(gold) + 1}", "unexpected_prediction")]


def test_bad_lines_are_rejected_in_place(sample, tmp_path):
    gold = gold_lines(sample, "senpos")
    assert len(gold) >= 4
    preds = [{"label": g["label"]} for g in gold]
    preds[0] = ""  # empty line
    preds[1] = {"label": 1.5}  # wrong label type
    preds[2] = "{not json"
    preds[3] = {"sentence": "no label"}
    code, out = run_eval(
        tmp_path,
        "bad",
        "--task",
        "senpos",
        "--predictions",
        str(write_lines(tmp_path / "p.jsonl", preds)),
        "--gold",
        str(gold_file(sample, "senpos")),
    )
    assert code == 2
    assert rejects_of(out) == sorted(
        [
            ("parse_predictions", "p.jsonl:1", "blank_line"),
            ("parse_predictions", "p.jsonl:2", "bad_field_type"),
            ("parse_predictions", "p.jsonl:3", "malformed_json"),
            ("parse_predictions", "p.jsonl:4", "missing_field"),
        ]
        + [("align", f"test.unreviewed.jsonl:{i}", "missing_prediction") for i in range(1, 5)]
    )
    m = metrics_of(out)
    assert m["accuracy"] == 1.0 and {r["n"] for r in read_table(out / "metrics")} == {len(gold) - 4}


def test_missing_and_extra_ids(sample, tmp_path):
    rows = sorted((r for r in read_table(sample / "senpos") if r["split"] == "test"), key=lambda r: r["example_id"])
    preds = [{"id": r["example_id"], "label": r["label"]} for r in rows[1:]] + [{"id": "no-such", "label": 1}]
    code, out = run_eval(
        tmp_path,
        "ids",
        "--task",
        "senpos",
        "--align",
        "id",
        "--predictions",
        str(write_lines(tmp_path / "p.jsonl", preds)),
        "--gold",
        str(sample / "senpos"),
    )
    assert code == 2
    reasons = [r[2] for r in rejects_of(out)]
    assert sorted(reasons) == ["missing_prediction", "unexpected_prediction"]


def test_a_blank_line_by_id_is_no_gap_but_an_unreadable_one_is(sample, tmp_path):
    """Every reject now gives exit 2 (a gold example left out of the metrics), but a blank line
    between id-aligned predictions holds no record and leaves nothing out."""
    rows = sorted((r for r in read_table(sample / "senpos") if r["split"] == "test"), key=lambda r: r["example_id"])
    preds = [{"id": r["example_id"], "label": r["label"]} for r in rows] + [""]
    args = ["--task", "senpos", "--align", "id", "--gold", str(sample / "senpos")]
    code, out = run_eval(tmp_path, "blank", *args, "--predictions", str(write_lines(tmp_path / "p.jsonl", preds)))
    assert code == 0 and [r[2] for r in rejects_of(out)] == ["blank_line"]
    preds[-1] = "{not json"
    code, out = run_eval(tmp_path, "broken", *args, "--predictions", str(write_lines(tmp_path / "q.jsonl", preds)))
    assert code == 2 and [r[2] for r in rejects_of(out)] == ["malformed_json"]


# ----------------------------------------------------------------------------- generation
def test_plotcom_on_the_sample_build(sample, tmp_path):
    gold = gold_lines(sample, "plotcom")
    preds = [{"plot": g["plot"]} for g in gold]
    for compat in ("original", "clean"):
        code, out = run_eval(
            tmp_path,
            compat,
            "--task",
            "plotcom",
            "--compat",
            compat,
            "--predictions",
            str(write_lines(tmp_path / "p.jsonl", preds)),
            "--gold",
            str(sample / "plotcom/test.jsonl"),
        )
        m = metrics_of(out)
        assert code == 0 and set(m) == {f"{k}-{n}" for k in ("bleu", "distinct", "repetition") for n in (1, 2, 3, 4)}
        for n in (1, 2, 3, 4):  # the gold against itself
            assert m[f"bleu-{n}"] == pytest.approx(1.0)
            assert 0 < m[f"distinct-{n}"] <= 1
    empty = [{"plot": ""} for _ in gold]
    code, out = run_eval(
        tmp_path,
        "empty",
        "--task",
        "plotcom",
        "--predictions",
        str(write_lines(tmp_path / "e.jsonl", empty)),
        "--gold",
        str(sample / "plotcom/test.jsonl"),
    )
    m = metrics_of(out)
    assert code == 0 and m["bleu-1"] == 0.0 and m["distinct-1"] is None  # no crash, nothing to count


# ----------------------------------------------------------------------------- the official script, re-implemented
def _ref_words(text: str) -> str:
    import jieba

    return " ".join(jieba.cut("".join(text.strip().split())))


def _ref_bleu(hyp: list[str], ref: list[str], n: int) -> float:
    """NLTK 3.6 sentence_bleu, one reference, weights 1/n, method0 (written from PEERS.md 1.5)."""
    if not hyp:
        return 0.0
    precisions = []
    for k in range(1, n + 1):
        h = Counter(tuple(hyp[i : i + k]) for i in range(len(hyp) - k + 1))
        r = Counter(tuple(ref[i : i + k]) for i in range(len(ref) - k + 1))
        precisions.append((sum(min(v, r[g]) for g, v in h.items()), max(1, sum(h.values()))))
    if precisions[0][0] == 0:
        return 0.0
    total = 0.0
    for num, den in precisions:
        total += (1.0 / n) * math.log(num / den if num else sys.float_info.min)
    penalty = 1.0 if len(hyp) > len(ref) else math.exp(1 - len(ref) / len(hyp))
    return penalty * math.exp(total)


def _ref_rouge_l_recall(phrase: str, story: str):
    """The official script's coverage call, through pltrdy rouge 1.0.0 itself (its bare
    `except` skips a phrase the library raises on), on a fresh thread so that pytest's stack
    does not bring the library's recursion limit closer than the script's."""
    from concurrent.futures import ThreadPoolExecutor

    from rouge import Rouge

    def score():
        try:
            got = Rouge().get_scores(
                hyps=" ".join("".join(story.strip().split())), refs=" ".join("".join(phrase.strip().split()))
            )
            return got[0]["rouge-l"]["r"]
        except Exception:
            return None

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(score).result()


def _ref_order(outline: list[str], gold: str, cand: str) -> float:
    kws = "#".join(outline).strip().split("#")
    where = [gold.strip().find(k.strip()) for k in kws]
    rank = {}
    for r, idx in enumerate(sorted(range(len(kws)), key=lambda x: where[x])):
        rank[kws[idx]] = r
    names = list(rank)[::-1]
    hyp = "".join(cand.split())
    pos = []
    for name in names:
        x = "".join(name.split())
        best, end = 0, 0
        for i in range(len(x)):
            for j in range(len(hyp)):
                m = 0
                while i + m < len(x) and j + m < len(hyp) and x[i + m] == hyp[j + m]:
                    m += 1
                if m > best or (m == best and m and i + m < end):
                    best, end = m, i + m
        sub = x[end - best : end]
        pos.append(hyp.find(sub) if len(sub) > 1 else -1)
    seq = [rank[names[k]] for k in sorted(range(len(names)), key=lambda k: pos[k])]
    bad = sum(seq[i] > seq[j] for i in range(len(seq)) for j in range(i, len(seq)))
    return 1 - bad / (len(seq) * (len(seq) + 1) / 2)


def reference_outgen(golds: list[dict], preds: list[dict]) -> dict[str, float]:
    cands = [_ref_words(p["story"]) for p in preds]
    refs = [_ref_words(g["story"]) for g in golds]
    out = {
        f"bleu-{n}": sum(_ref_bleu(c.split(), r.split(), n) for c, r in zip(cands, refs)) / len(cands)
        for n in (1, 2, 3, 4)
    }
    for n in (1, 2, 3, 4):
        grams = [c[i : i + n] for c in cands for i in range(len(c) - n + 1)]
        out[f"distinct-{n}"] = len(set(grams)) / len(grams)
    cover = [
        v
        for g, p in zip(golds, preds)
        for k in "#".join(g["outline"]).split("#")
        for v in [_ref_rouge_l_recall(k, p["story"])]
        if v is not None
    ]
    out["coverage"] = sum(cover) / len(cover)
    out["order"] = sum(_ref_order(g["outline"], g["story"], p["story"]) for g, p in zip(golds, preds)) / len(golds)
    return out


# Printed by the official OutGen eval.py (run with pltrdy rouge 1.0.0, nltk, jieba 0.42.1) on
# the shared LongLM-large generations of outgen_val_sample.
OFFICIAL = {
    "bleu-1": 0.3115707520865158,
    "bleu-2": 0.1843017308419127,
    "bleu-3": 0.11199841523090169,
    "bleu-4": 0.0644385619959481,
    "distinct-1": 0.025998545535914075,
    "distinct-2": 0.09663176485429545,
    "distinct-3": 0.2837796072040684,
    "distinct-4": 0.46080736683516144,
    "coverage": 0.9041657818502075,
    "order": 0.6514394163462487,
}


def test_outgen_original_reproduces_the_official_script_on_real_generations(tmp_path):
    pytest.importorskip("jieba")
    pytest.importorskip("rouge")
    gold_path = shared_path("lot", "outgen_val_sample.jsonl")
    pred_path = shared_path("lot", "outgen_val_sample.longlm_large_generations.jsonl")
    golds = [json.loads(x) for x in gold_path.read_text(encoding="utf-8").splitlines()]
    preds = [json.loads(x) for x in pred_path.read_text(encoding="utf-8").splitlines()]
    code, out = run_eval(
        tmp_path, "orig", "--task", "outgen", "--predictions", str(pred_path), "--gold", str(gold_path)
    )
    got = metrics_of(out)
    want = reference_outgen(golds, preds)
    assert code == 0 and stats_of(out)["stages"]["score"]["written"] == len(golds)
    for name, value in want.items():
        assert round(got[name], 4) == round(value, 4), name
        assert round(got[name], 4) == round(OFFICIAL[name], 4), name
    # coverage: rouge 1.0.0's exclusive ROUGE-L (distinct characters), 0.904166 officially
    assert abs(got["coverage"] - want["coverage"]) <= 1e-9
    assert abs(got["coverage"] - OFFICIAL["coverage"]) <= 1e-9
    # hand-checkable properties
    assert 0 < got["bleu-4"] < got["bleu-3"] < got["bleu-2"] < got["bleu-1"] < 1
    assert got["distinct-1"] < got["distinct-2"] < got["distinct-3"] < got["distinct-4"] <= 1
    n_phrases = sum(len(g["outline"]) for g in golds)
    assert {r["metric"]: r["n"] for r in read_table(out / "metrics")}["coverage"] == n_phrases
    k = len(golds[0]["outline"])
    assert got["order"] >= 1 - (k * (k - 1) / 2) / (k * (k + 1) / 2)
    # clean: word distinct (fewer, larger units) and the order without the diagonal
    code, clean = run_eval(
        tmp_path,
        "clean",
        "--task",
        "outgen",
        "--compat",
        "clean",
        "--predictions",
        str(pred_path),
        "--gold",
        str(gold_path),
    )
    c = metrics_of(clean)
    assert c["order"] < got["order"] and c["bleu-4"] > got["bleu-4"]
    assert c["distinct-1"] != got["distinct-1"]
    assert "compatibility mode: **clean**" in (clean / "CARD.md").read_text(encoding="utf-8")


def test_outgen_perfect_and_empty_predictions(tmp_path):
    gold = [{"title": "t", "outline": ["小猫钓鱼", "河边", "一条鱼"], "story": "小猫在河边钓鱼。它钓到了一条鱼。"}]
    gpath = write_lines(tmp_path / "g.jsonl", gold)
    code, out = run_eval(tmp_path, "same", "--task", "outgen", "--predictions", str(gpath), "--gold", str(gpath))
    m = metrics_of(out)
    assert m["order"] == 1.0 and m["bleu-1"] == pytest.approx(1.0)
    assert m["coverage"] == 1.0  # every phrase is a subsequence of its own story
    empty = write_lines(tmp_path / "e.jsonl", [{"story": " "}])
    code, out = run_eval(tmp_path, "empty", "--task", "outgen", "--predictions", str(empty), "--gold", str(gpath))
    m = metrics_of(out)
    assert code == 0 and m["bleu-1"] == 0.0
    assert m["coverage"] is None  # the official script skips every phrase of an empty story
    assert m["order"] == 0.5  # nothing found: reverse gold order, 3 inversions of 6 pairs
    code, out = run_eval(
        tmp_path,
        "empty_clean",
        "--task",
        "outgen",
        "--compat",
        "clean",
        "--predictions",
        str(empty),
        "--gold",
        str(gpath),
    )
    m = metrics_of(out)
    assert m["coverage"] == 0.0 and m["order"] == 0.0


# ----------------------------------------------------------------------------- ChapterBreak
def test_chapterbreak_accuracy_per_source_and_length_equals_a_direct_count(tmp_path):
    import random

    from pipelines import chapterbreak

    fix = ROOT / "tests" / "fixtures" / "chapterbreak"
    built = tmp_path / "cb"
    chapterbreak.run(
        [
            "--gutenberg",
            str(fix / "books" / "*.txt"),
            "--ao3",
            str(fix / "ao3"),
            "--output",
            str(built),
            "--prefix_lengths",
            "256,1024",
            "--seed",
            "7",
        ]
    )
    rows = read_table(built / "examples")
    assert {r["source"] for r in rows} == {"pg19", "ao3"} and {r["prefix_length"] for r in rows} == {256, 1024}
    rng = random.Random(11)
    preds, direct = [], {}
    for r in sorted(rows, key=lambda r: r["example_id"]):
        scores = [rng.randint(0, 4) for _ in range(1 + len(r["negatives"]))]
        preds.append({"example_id": r["example_id"], "scores": scores})
        ok = all(s <= scores[0] for s in scores[1:])
        for g in (
            "all",
            f"source={r['source']}",
            f"prefix_length={r['prefix_length']}",
            f"source={r['source']},prefix_length={r['prefix_length']}",
            f"boundary={r['boundary']}",
        ):
            direct.setdefault(g, []).append(ok)
    bad = [
        {"example_id": rows[0]["example_id"], "scores": [1, 2]},  # a duplicate id, and too few scores
        {"example_id": "x", "scores": [1, "high", 0, 0, 0, 0]},
    ]
    path = write_lines(tmp_path / "scores.jsonl", preds + bad)
    code, out = run_eval(
        tmp_path, "eval", "--task", "chapterbreak", "--predictions", str(path), "--gold", str(built / "examples")
    )
    assert code == 2  # the duplicate id is reported
    got = {(r["group"], r["metric"]): r for r in read_table(out / "metrics")}
    for g, oks in direct.items():
        assert got[(g, "accuracy")]["value"] == sum(oks) / len(oks), g
        assert got[(g, "accuracy")]["n"] == len(oks)
    assert sorted(x[2] for x in rejects_of(out)) == ["bad_field_type", "duplicate_id"]


def test_output_folder_is_a_hugging_face_dataset_card(sample):
    """README.md's YAML configs load with datasets.load_dataset, splits and row counts as written."""
    from conftest import check_dataset_card

    assert check_dataset_card(sample)
