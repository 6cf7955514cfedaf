"""GLGE metrics of the evaluate job (PEERS.md 3.5): unit cases and end-to-end runs."""

from __future__ import annotations

import json
import pathlib

import pyarrow.parquet as pq
import pytest
from conftest import ROOT, check_rejects

from annotators.evaluate import glge_metrics as gm
from pipelines import evaluate

TGT = ROOT / "tests" / "fixtures" / "glge" / "tiny_data" / "org_data" / "test.tgt"


def test_coqa_f1_hand_computed():
    assert gm.coqa_f1("The cat!", "a cat") == 1.0  # articles and punctuation go
    assert gm.coqa_f1("red cat", "cat") == pytest.approx(2 * 0.5 * 1 / 1.5)
    assert gm.coqa_f1("", "") == 1.0 and gm.coqa_f1("", "cat") == 0.0
    assert gm.coqa_f1("dog", "cat") == 0.0


def test_rouge_hand_computed():
    r = gm.rouge_scores("the cat sat", "the cat sat on the mat")
    assert r["rouge-1"] == pytest.approx(100 * 2 * 1 * 0.5 / 1.5)
    assert r["rouge-2"] == pytest.approx(100 * 2 * 1 * 0.4 / 1.4)
    assert r["rouge-l"] == pytest.approx(100 * 2 * 1 * 0.5 / 1.5)
    assert gm.rouge_scores("a <S_SEP> b", "a b")["rouge-2"] == 100.0  # separators are not tokens
    assert gm.rouge_scores("", "a")["rouge-l"] == 0.0
    # rouge-score's tokens: punctuation and non-ASCII letters are breaks, not tokens
    assert gm.rouge_tokens("The cat, [X_SEP] sat. <s_sep> Caf\u00e9 3.5") == ["the", "cat", "sat", "caf", "3", "5"]
    assert gm.rouge_scores("The cat, sat.", "the cat sat") == {"rouge-1": 100.0, "rouge-2": 100.0, "rouge-l": 100.0}


def test_corpus_bleu4_and_inter_distinct():
    assert gm.corpus_bleu4([("a b c d e", "a b c d e")]) == pytest.approx(100.0)
    assert gm.corpus_bleu4([("a b", "a b")]) == 0.0  # no 4-gram at all
    assert gm.corpus_bleu4([]) is None
    # sacrebleu's exponential smoothing: no 4-gram match counts as 1 / (2 x 2 four-grams)
    assert gm.corpus_bleu4([("a b c x e", "a b c d e")]) == pytest.approx(100 * (4 / 5 * 2 / 4 * 1 / 3 * 1 / 4) ** 0.25)
    grams = [gm.personachat_scores("a a b", "x", "clean")[1], gm.personachat_scores("a", "x", "clean")[1]]
    assert gm.inter_distinct(grams, "clean") == {"distinct-1": 2 / 4, "distinct-2": 2 / 2}
    orig = gm.inter_distinct(grams, "original")
    assert orig["distinct-1"] == pytest.approx((2 + 1e-12) / (4 + 1e-5))


def test_personachat_original_is_nltk_method7_and_tokens_split_on_single_spaces():
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    want = sentence_bleu(
        [["i", "like", "dogs"]],
        ["i", "like", "cats"],
        smoothing_function=SmoothingFunction().method7,
        weights=[0.5, 0.5, 0, 0],
    )
    values, _ = gm.personachat_scores("i like cats", "i like dogs", "original")
    assert values["bleu-2"] == pytest.approx(100 * want)
    assert gm.personachat_tokens("a  b", "original") == ["a", "", "b"]
    assert gm.personachat_tokens("a  b", "clean") == ["a", "b"]
    values, _ = gm.personachat_scores("i like cats", "i like dogs", "clean")
    assert values["bleu-1"] == pytest.approx(100 * 2 / 3)


def _metrics(out: pathlib.Path) -> dict:
    rows = [r for f in sorted((out / "metrics").glob("*.parquet")) for r in pq.read_table(f).to_pylist()]
    return {r["metric"]: r["value"] for r in rows}


@pytest.mark.slow
def test_glge_end_to_end_on_the_fixture(tmp_path):
    gold = TGT.read_text(encoding="utf-8").splitlines()
    preds = tmp_path / "personachat.hard.test"
    preds.write_text("\n".join([gold[0], "", gold[2]]) + "\n", encoding="utf-8")  # line 2: an empty answer
    out = tmp_path / "pc"
    assert (
        evaluate.run(["--task", "personachat", "--predictions", str(preds), "--gold", str(TGT), "--output", str(out)])
        == 0
    )
    m = _metrics(out)
    assert set(m) == {"bleu-1", "bleu-2", "distinct-1", "distinct-2"}
    direct = [
        100 * gm.nltk_method7_bleu(p.strip().split(" "), g.strip().split(" "), (1, 0, 0, 0))
        for p, g in zip([gold[0], "", gold[2]], gold)
    ]
    assert m["bleu-1"] == pytest.approx(sum(direct) / 3)
    stats = json.loads((out / "stats.json").read_text())
    assert stats["config"]["nltk"] and stats["stages"]["score"]["written"] == 3
    out = tmp_path / "coqa"
    assert evaluate.run(["--task", "coqa", "--predictions", str(preds), "--gold", str(TGT), "--output", str(out)]) == 0
    assert _metrics(out)["f1"] == pytest.approx(100 * 2 / 3)
    out = tmp_path / "xsum"
    assert (
        evaluate.run(
            [
                "--task",
                "xsum",
                "--compat",
                "clean",
                "--predictions",
                str(preds),
                "--gold",
                str(TGT),
                "--output",
                str(out),
            ]
        )
        == 0
    )
    assert _metrics(out)["rouge-1"] == pytest.approx(100 * 2 / 3)
    out = tmp_path / "msqg"
    assert (
        evaluate.run(
            ["--task", "msqg", "--compat", "clean", "--predictions", str(TGT), "--gold", str(TGT), "--output", str(out)]
        )
        == 0
    )
    m = _metrics(out)
    assert m["rouge-l"] == pytest.approx(100.0) and m["bleu-4"] == pytest.approx(100.0)


@pytest.mark.slow
def test_glge_wrong_count(tmp_path):
    preds = tmp_path / "p.test"
    preds.write_text("a\nb\n", encoding="utf-8")
    out = tmp_path / "o"
    assert evaluate.run(["--task", "coqa", "--predictions", str(preds), "--gold", str(TGT), "--output", str(out)]) == 2
    check_rejects(out)
    rows = [r for f in (out / "rejects").glob("*.parquet") for r in pq.read_table(f).to_pylist()]
    assert [(r["input_id"], r["reason"]) for r in rows] == [("test.tgt:3", "missing_prediction")]
