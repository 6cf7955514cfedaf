"""End-to-end runs of `pipelines.bias` (LOT Table 13), every figure recomputed plainly here
from the issue's definitions (jieba, snownlp, BLEU, naive Bayes written out again)."""

from __future__ import annotations

import json
import logging
import math
import pathlib
from collections import Counter

import jieba
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import snownlp
from conftest import check_rejects, shared_path
from test_overlap_data import STORIES, clozet_row, senpos_row, write_task

from annotators.audits.discourse_markers import MARKER_PAIRS
from annotators.core.ids import rng_for
from annotators.text.zh_sentences import split_sentences
from pipelines import bias

pytestmark = pytest.mark.slow  # end-to-end job runs: `make test-fast` leaves them out

WRONG = [
    "所以他们再也没有见过面。",
    "但是大家都笑着跑开了。",
    "他把所有的东西都扔进了河里。",
    "因为天太黑，它什么都看不见。",
    "小猫跳上了屋顶，一直睡到了第二天中午。",
]


def W(text):  # noqa: N802
    for mark in ("<mask>", "[MASK]", "<MASK>"):
        text = text.replace(mark, "")
    return [t for t in jieba.lcut(text, HMM=True) if t.strip()]


def senti(text):
    return snownlp.SnowNLP(text).sentiments if text.strip() else 0.5


def bleu(hyp, ref, n):
    if not hyp:
        return 0.0
    logs = 0.0
    for k in range(1, n + 1):
        h = Counter(tuple(hyp[i : i + k]) for i in range(len(hyp) - k + 1))
        r = Counter(tuple(ref[i : i + k]) for i in range(len(ref) - k + 1))
        match = sum(min(c, r[g]) for g, c in h.items())
        if match == 0:
            return 0.0
        logs += math.log(match / sum(h.values())) / n
    return (1.0 if len(hyp) > len(ref) else math.exp(1 - len(ref) / len(hyp))) * math.exp(logs)


def first_best(values, lower=False):
    idx = [i for i, v in enumerate(values) if v is not None]
    if not idx:
        return 0
    best = (min if lower else max)(values[i] for i in idx)
    return min(i for i in idx if values[i] == best)


def pairs_ok(before, middle, after):
    return any((a in before and b in middle) or (a in middle and b in after) for a, b in MARKER_PAIRS)


def markers(ex_id, eligible, n, seed=0):
    if len(eligible) == 1:
        return eligible[0]
    rng = rng_for(seed, "discourse_markers", ex_id)
    return rng.choice(eligible) if eligible else rng.randrange(n)


def nb_fit(docs):
    feats = lambda t: t + ["\x1f".join(t[i : i + 2]) for i in range(len(t) - 1)]  # noqa: E731
    classes = Counter(c for c, _ in docs)
    counts = {c: Counter() for c in classes}
    for c, t in docs:
        counts[c].update(feats(t))
    vocab = set().union(*counts.values())

    def score(c, t):
        if c not in classes:
            return None
        denom = sum(counts[c].values()) + len(vocab)
        return math.log(classes[c] / len(docs)) + sum(
            math.log((counts[c][f] + 1) / denom) for f in feats(t) if f in vocab
        )

    return score


def expected_table(rows_by_task, seed=0):
    """{(task, split, baseline): accuracy} from the definitions."""
    out = {}
    for task, rows in rows_by_task.items():
        train = [r for r in rows if r["split"] == "train"]
        gold = (lambda r: int(r["label"])) if task == "clozet" else (lambda r: r["label"] - 1)
        counts = Counter(gold(r) for r in train)
        majority = min(counts, key=lambda g: (-counts[g], g))
        if task == "clozet":
            score = nb_fit([(int(i == gold(r)), W(r[p])) for r in train for i, p in enumerate(("plot0", "plot1"))])
        else:
            score = nb_fit([(gold(r), W(r["sentence"])) for r in train])
        for split in ("val", "test"):
            credit = {}
            for r in (r for r in rows if r["split"] == split):
                g = gold(r)
                if task == "clozet":
                    pre, suf = r["story"].split("<mask>")
                    cands = [r["plot0"], r["plot1"]]
                    ctx, n = W(pre + suf), 2
                    s_pre, s_suf = split_sentences(pre), split_sentences(suf)
                    before, after = W(s_pre[-1] if s_pre else ""), W(s_suf[0] if s_suf else "")
                    picks = {
                        "length": first_best([len(W(c)) for c in cands]),
                        "bleu1": first_best([bleu(W(c), ctx, 1) for c in cands]),
                        "bleu2": first_best([bleu(W(c), ctx, 2) for c in cands]),
                        "sentiment": first_best([senti(c) for c in cands]),
                        "discourse_markers": markers(
                            r["example_id"], [i for i, c in enumerate(cands) if pairs_ok(before, W(c), after)], 2, seed
                        ),
                        "candidate_only": first_best([score(1, W(c)) - score(0, W(c)) for c in cands]),
                    }
                else:
                    segs = r["story"].split("[MASK]")
                    n = len(segs) - 1
                    left = [(split_sentences(segs[i]) or [""])[-1] for i in range(n)]
                    right = [(split_sentences(segs[i + 1]) or [""])[0] for i in range(n)]
                    adj = [[s for s in (left[i], right[i]) if s.strip()] for i in range(n)]
                    s = r["sentence"]
                    mean = lambda xs: sum(xs) / len(xs) if xs else None  # noqa: E731
                    gap = lambda m, x: None if m is None else abs(m - x)  # noqa: E731
                    picks = {
                        "length": first_best(
                            [gap(mean([len(W(a)) for a in adj[i]]), len(W(s))) for i in range(n)], lower=True
                        ),
                        "bleu1": first_best([mean([bleu(W(s), W(a), 1) for a in adj[i]]) for i in range(n)]),
                        "bleu2": first_best([mean([bleu(W(s), W(a), 2) for a in adj[i]]) for i in range(n)]),
                        "sentiment": first_best(
                            [gap(mean([senti(a) for a in adj[i]]), senti(s)) for i in range(n)], lower=True
                        ),
                        "discourse_markers": markers(
                            r["example_id"], [i for i in range(n) if pairs_ok(W(left[i]), W(s), W(right[i]))], n, seed
                        ),
                        "candidate_only": first_best([score(j, W(s)) for j in range(n)]),
                    }
                picks["majority"] = majority
                credit.setdefault("random", []).append(1 / n)
                for name, p in picks.items():
                    credit.setdefault(name, []).append(1.0 if p == g else 0.0)
            for name, cs in credit.items():
                out[(task, split, name)] = (math.fsum(cs) / len(cs), len(cs))
    return out


def make_rows(stories, splits):
    """ClozeT and SenPos rows with varied labels, wrong candidates and removed sentences."""
    clozet, senpos = [], []
    for split, idx in splits.items():
        for i in idx:
            row = clozet_row(i, split, wrong=WRONG[i % len(WRONG)], right_index=(i * 7 // 3) % 2)
            clozet.append(row)
            for removed in range(1, len(stories[i]) - 1):
                r = senpos_row(i, split, removed=removed)
                senpos.append({**r, "example_id": f"{r['example_id']}-{removed}"})
    return {"clozet": clozet, "senpos": senpos}


@pytest.fixture(scope="module")
def bias_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("bias")
    rows = make_rows(STORIES, {"train": [0, 1, 2, 3, 4, 5], "val": [6, 7], "test": [8, 9]})
    for task, task_rows in rows.items():
        write_task(root / "lot", task, task_rows)
    bad = [
        {**rows["clozet"][-1], "example_id": "bad-label", "label": "7"},
        {**rows["clozet"][-1], "example_id": "no-mask", "story": "没有空位的故事。"},
    ]
    write_task(root / "lot", "clozet", bad, name="part-1.parquet")
    pq.write_table(
        pa.Table.from_pylist([{"example_id": "s-miss", "split": "test", "story": "甲。[MASK]乙。", "label": 1}]),
        root / "lot" / "senpos" / "part-1.parquet",
    )
    out = root / "out"
    bias.run(["--lot", str(root / "lot"), "--output", str(out)])
    return rows, out


def test_grouping_keys_need_no_fallback_coder(tmp_path, caplog):
    """The summary's grouping key is one Beam encodes deterministically as it is: the run logs
    no "fallback deterministic coder" warning (a NamedTuple key did, on every run)."""
    rows = make_rows(STORIES[:4], {"train": [0, 1], "val": [2], "test": [3]})
    for task, task_rows in rows.items():
        write_task(tmp_path / "lot", task, task_rows)
    with caplog.at_level(logging.WARNING):
        bias.run(["--lot", str(tmp_path / "lot"), "--output", str(tmp_path / "out")])
    assert read(tmp_path / "out" / "summary")
    assert not [r.getMessage() for r in caplog.records if "fallback deterministic coder" in r.getMessage()]


def read(folder: pathlib.Path):
    return pq.read_table(folder).to_pylist()


def test_every_table13_figure_matches_independent_recomputation(bias_run):
    rows, out = bias_run
    got = {(r["task"], r["split"], r["baseline"]): (r["accuracy"], r["n"]) for r in read(out / "summary")}
    want = expected_table(rows)
    assert got == want
    assert len(got) == 2 * 2 * 8


def test_bias_rejects_and_accounting(bias_run):
    _, out = bias_run
    check_rejects(out)
    rejects = {(r["stage"], r["input_id"], r["reason"]) for r in read(out / "rejects")}
    assert rejects == {
        ("lot_rows", "clozet/part-1.parquet:1", "bad_label"),
        ("lot_rows", "clozet/part-1.parquet:2", "bad_placeholder"),
        ("lot_rows", "senpos/part-1.parquet:1", "missing_field"),
    }
    stats = json.loads((out / "stats.json").read_text())
    assert stats["balanced"] and stats["stages"]["lot_rows"]["rejected"] == 3
    md = (out / "summary.md").read_text()
    assert "| Baselines | ClozeT | SenPos |" in md and "| BLEU-1/2 |" in md
    preds = read(out / "predictions")
    assert {p["baseline"] for p in preds} == {
        "random",
        "majority",
        "length",
        "bleu1",
        "bleu2",
        "sentiment",
        "discourse_markers",
        "candidate_only",
    }


def test_empty_split_is_rejected(tmp_path):
    rows = make_rows(STORIES, {"train": [0, 1, 2], "test": [3]})
    for task, task_rows in rows.items():
        write_task(tmp_path / "lot", task, task_rows)
    bias.run(["--lot", str(tmp_path / "lot"), "--output", str(tmp_path / "out")])
    check_rejects(tmp_path / "out")
    rejects = {(r["input_id"], r["reason"]) for r in read(tmp_path / "out" / "rejects")}
    assert rejects == {("clozet/val", "empty_split"), ("senpos/val", "empty_split")}
    assert {r["split"] for r in read(tmp_path / "out" / "summary")} == {"test"}


def test_real_stories_bias_table(tmp_path):
    sample = shared_path("lot", "outgen_val_sample.jsonl")
    records = [json.loads(line) for line in sample.read_text(encoding="utf-8").splitlines()[:45]]
    stories = [s for s in (split_sentences(r["story"]) for r in records) if len(s) >= 5][:40]
    clozet, senpos = [], []
    for i, s in enumerate(stories):
        split = "train" if i < 26 else ("val" if i < 33 else "test")
        right = (i * 5 // 2) % 2
        wrong = stories[(i + 7) % len(stories)][2]
        plots = [s[-2], wrong] if right == 0 else [wrong, s[-2]]
        clozet.append(
            {
                "example_id": f"c{i:02d}",
                "story_id": f"r{i}",
                "split": split,
                "story": "".join(s[:-2]) + "<mask>" + s[-1],
                "plot0": plots[0],
                "plot1": plots[1],
                "label": str(right),
                "right_index": right,
                "annotator": "t",
            }
        )
        k = 1 + i % (len(s) - 2)
        rest = s[:k] + s[k + 1 :]
        senpos.append(
            {
                "example_id": f"p{i:02d}",
                "story_id": f"r{i}",
                "split": split,
                "story": rest[0] + "".join("[MASK]" + t for t in rest[1:]),
                "sentence": s[k],
                "label": k,
                "n_candidates": len(rest) - 1,
                "removed_index": k,
                "reviewed": False,
            }
        )
    write_task(tmp_path / "lot", "clozet", clozet)
    write_task(tmp_path / "lot", "senpos", senpos)
    bias.run(["--lot", str(tmp_path / "lot"), "--output", str(tmp_path / "out"), "--seed", "3"])
    got = {(r["task"], r["split"], r["baseline"]): (r["accuracy"], r["n"]) for r in read(tmp_path / "out" / "summary")}
    assert got == expected_table({"clozet": clozet, "senpos": senpos}, seed=3)


def test_output_folder_is_a_hugging_face_dataset_card(bias_run):
    """README.md's YAML configs load with datasets.load_dataset, splits and row counts as written."""
    from conftest import check_dataset_card

    assert check_dataset_card(bias_run[1])
