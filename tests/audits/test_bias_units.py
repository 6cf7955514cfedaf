"""Unit tests of the bias-baseline annotators (LOT Table 13): exact values on tiny inputs."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.translate.bleu_score import sentence_bleu as nltk_bleu

from annotators.audits import bias as bb
from annotators.audits import classifier as cc
from annotators.audits.bias_report import accuracy_row, prediction_rows, table13_markdown
from annotators.audits.bleu import sentence_bleu
from annotators.audits.discourse_markers import MARKER_PAIRS, completes_pair
from annotators.core.ids import rng_for
from annotators.core.outcome import Drop

WORDS = bb.load_words()
FAKE_SENTIMENT = lambda text: len(text) / 100  # noqa: E731  (deterministic stand-in)


def test_bleu_exact_value_and_agreement_with_nltk():
    hyp, ref = list("abcd"), list("abcef")
    assert sentence_bleu(hyp, ref, 1) == pytest.approx(math.exp(1 - 5 / 4) * 3 / 4, abs=1e-15)
    assert sentence_bleu(hyp, ref, 2) == pytest.approx(math.exp(-0.25) * math.sqrt(0.75 * 2 / 3), abs=1e-15)
    for n, w in ((1, (1.0,)), (2, (0.5, 0.5))):
        assert sentence_bleu(hyp, ref, n) == pytest.approx(nltk_bleu([ref], hyp, weights=w), rel=1e-12)


def test_bleu_zero_without_matches_clipping_and_no_brevity_penalty_when_longer():
    assert sentence_bleu(list("xy"), list("abc"), 1) == 0.0
    assert sentence_bleu(list("axb"), list("ab"), 2) == 0.0  # no bigram match: exactly 0
    assert sentence_bleu([], list("ab"), 1) == 0.0
    assert sentence_bleu(list("aaa"), list("ab"), 1) == 1 / 3  # clipped; c > r, no penalty


def test_argbest_ties_go_to_the_lowest_index_and_none_is_worst():
    assert bb.argbest([2, 5, 5]) == 1
    assert bb.argbest([None, 0.1, None]) == 1
    assert bb.argbest([3.0, 1.0, 1.0], lower=True) == 1
    assert bb.argbest([None, None]) == 0


def test_marker_pairs_are_24_distinct_pairs():
    assert len(MARKER_PAIRS) == 24 and len(set(MARKER_PAIRS)) == 24


def test_completes_pair_both_directions_on_whole_tokens():
    assert completes_pair(WORDS("因为下雨了。"), WORDS("所以我们没有出门。"), [])
    assert completes_pair([], WORDS("虽然他很累，"), WORDS("但是他还在工作。"))
    assert not completes_pair(WORDS("因为下雨了。"), WORDS("我们没有出门。"), WORDS("所以呢。"))
    assert not completes_pair(WORDS("如果你来，"), WORDS("他的成就很大。"), [])  # 就 inside 成就


def test_discourse_choice_single_eligible_else_seeded():
    assert bb.discourse_choice([1], 2, 0, "x") == 1
    assert bb.discourse_choice([], 5, 7, "ex") == rng_for(7, "discourse_markers", "ex").randrange(5)
    assert bb.discourse_choice([2, 4], 6, 7, "ex") == rng_for(7, "discourse_markers", "ex").choice([2, 4])


def test_majority_label_ties_lowest():
    assert bb.majority_label([2, 1, 2, 1, 0]) == 1
    assert bb.majority_label([]) == 0


@pytest.mark.parametrize(
    "task,record,expected",
    [
        ("clozet", {"story": "甲。<mask>乙。", "label": "1"}, (1, 2)),
        ("clozet", {"story": "甲。乙。", "label": "1"}, "bad_placeholder"),
        ("clozet", {"story": "甲。<mask>乙。", "label": "2"}, "bad_label"),
        ("senpos", {"story": "甲。[MASK]乙。[MASK]丙。", "label": 2}, (1, 2)),
        ("senpos", {"story": "甲。[MASK]乙。", "label": 2}, "bad_label"),
        ("senpos", {"story": "甲。乙。", "label": 1}, "no_candidates"),
    ],
)
def test_parse(task, record, expected):
    out = bb.parse(task, record)
    assert (out.reason if isinstance(out, Drop) else out) == expected


def test_naive_bayes_exact_log_scores():
    model = cc.train([(1, ["a"]), (0, ["b"]), (1, ["a"])], cc.CandidateOnlyConfig(max_n=1))
    # vocab {a, b}; class 1: a=2, b=0 -> P(a|1) = 3/4; class 0: P(a|0) = 1/3; priors 2/3, 1/3
    assert cc.log_score(model, 1, ["a"], 1) == math.log(2 / 3) + math.log(3 / 4)
    assert cc.log_score(model, 0, ["a", "zzz"], 1) == math.log(1 / 3) + math.log(1 / 3)
    assert cc.log_score(model, 5, ["a"], 1) is None
    assert cc.features(["x", "y", "z"]) == ["x", "y", "z", "x\x1fy", "y\x1fz"]


CLOZET = {
    "story": "小明的作业写完了。因为外面下起了大雨，<mask>他只好在家里看书。",
    "plot0": "所以他没有去公园踢球。",
    "plot1": "他决定冒着大雨去公园里踢一场足球比赛。",
    "label": "0",
}


def test_clozet_context_baselines_exact():
    preds = dict(bb.clozet_preds(CLOZET, WORDS, FAKE_SENTIMENT, bb.BiasConfig(), "c1"))
    assert preds["length"] == 1  # plot1 has more words
    assert preds["sentiment"] == 1  # fake score = length of the text
    assert preds["discourse_markers"] == 0  # 因为 before the blank, 所以 in plot0 only
    context = WORDS("小明的作业写完了。因为外面下起了大雨，他只好在家里看书。")
    b = [sentence_bleu(WORDS(CLOZET[p]), context, 1) for p in ("plot0", "plot1")]
    assert preds["bleu1"] == (0 if b[0] >= b[1] else 1)


SENPOS = {
    "story": "天亮了。[MASK]公鸡在院子里大声地叫着。[MASK]奶奶给鸡喂了一把米。[MASK]",
    "sentence": "因为天气冷，",
    "label": 1,
}


def test_senpos_positions_use_adjacent_sentences():
    preds = dict(
        bb.senpos_preds({**SENPOS, "sentence": "所以鸡都醒来了。"}, WORDS, FAKE_SENTIMENT, bb.BiasConfig(), "s1")
    )
    # the last position has only a left neighbour; no marker pair anywhere -> seeded choice of 3
    assert preds["discourse_markers"] == rng_for(0, "discourse_markers", "s1").randrange(3)
    assert preds["length"] == 0  # "天亮了。" (3 words) + "公鸡..." mean is closest to 5 words
    marked = dict(
        bb.senpos_preds(
            {**SENPOS, "story": "因为天亮了。[MASK]公鸡叫了。[MASK]", "sentence": "所以鸡都醒来了。"},
            WORDS,
            FAKE_SENTIMENT,
            bb.BiasConfig(),
            "s2",
        )
    )
    assert marked["discourse_markers"] == 0


def test_prediction_rows_majority_beyond_candidates_is_wrong():
    item = bb.BiasItem("senpos", "test", "e", gold=1, n_candidates=2, seen=(("甲",),), preds=(("length", 1),))
    model = bb.train_candidate_only([item])
    rows = {r["baseline"]: r for r in prediction_rows(item, majority=4, model=model)}
    assert rows["random"]["credit"] == 0.5 and rows["random"]["prediction"] == -1
    assert rows["majority"]["credit"] == 0.0 and rows["length"]["credit"] == 1.0
    assert rows["candidate_only"]["prediction"] == 1  # only class 1 was seen in training


def test_accuracy_and_markdown():
    rows = [accuracy_row("clozet", "test", b, [1.0, 0.0, 1.0, 1.0]) for b in ("random", "bleu1", "bleu2")]
    assert rows[0] == {"task": "clozet", "split": "test", "baseline": "random", "n": 4, "accuracy": 0.75}
    md = table13_markdown(rows)
    assert "| BLEU-1/2 | 75.00/75.00 |" in md and "| Majority | - |" in md


@settings(max_examples=50, deadline=None)
@given(
    credits=st.lists(st.sampled_from([0.0, 1.0, 0.5, 1 / 3, 1 / 7]), max_size=40),
    scores=st.lists(st.one_of(st.none(), st.floats(-5, 5)), min_size=1, max_size=8),
)
def test_accuracy_in_unit_interval_and_argbest_is_best(credits, scores):
    acc = accuracy_row("t", "s", "b", credits)["accuracy"]
    assert 0.0 <= acc <= 1.0
    assert acc == accuracy_row("t", "s", "b", list(reversed(credits)))["accuracy"]
    i = bb.argbest(scores)
    real = [s for s in scores if s is not None]
    assert 0 <= i < len(scores) and (not real or scores[i] == max(real))
    assert not real or scores.index(max(real)) == i
