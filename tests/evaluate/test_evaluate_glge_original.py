"""GLGE's official summarisation and QG scoring (`--compat original`): ROUGE-1.5.5's stemmer,
its per-document scores and its bootstrap average, the scripts' preparation, the coco scorers
and METEOR."""

from __future__ import annotations

import json
import pathlib
import random

import pyarrow.parquet as pq
import pytest
from conftest import check_rejects

from annotators.evaluate import glge_original as go
from annotators.evaluate import meteor, rouge155
from pipelines import evaluate

# ROUGE-1.5.5's own `stem` (perl) on these words; "accidental" -> "accid" and
# "agreement" -> "agreem" are its step-4 change, which no NLTK Porter mode reproduces.
PERL_STEMS = dict(
    pair.split(" ")
    for pair in (
        "accidental accid|agreement agreem|arguments argum|basement basem|rational ration|"
        "conditional condit|valenci valenc|hesitanci hesit|digitizer digit|conformabli conform|"
        "radicalli radic|differentli differ|vileli vile|analogousli analog|vietnamization vietnam|"
        "predication predic|operator oper|feudalism feudal|decisiveness decis|hopefulness hope|"
        "callousness callous|formaliti formal|sensitiviti sensit|sensibiliti sensibl|triplicate triplic|"
        "formative form|formalize formal|electriciti electr|electrical electr|hopeful hope|goodness good|"
        "revival reviv|allowance allow|inference infer|airliner airlin|gyroscopic gyroscop|"
        "adjustable adjust|defensible defens|irritant irrit|replacement replac|adjustment adjust|"
        "dependent depend|adoption adopt|homologou homolog|communism commun|activate activ|"
        "angulariti angular|homologous homolog|effective effect|bowdlerize bowdler|probate probat|"
        "rate rate|cease ceas|controll control|roll roll|yelling yell|yesterday yesterdai|yeses yese|"
        "caresses caress|ponies poni|cats cat|feed feed|agreed agre|plastered plaster|motoring motor|"
        "sing sing|conflated conflat|troubled troubl|sized size|hopping hop|tanned tan|falling fall|"
        "hissing hiss|fizzed fizz|failing fail|filing file|happy happi|sky sky|relational relat|"
        "generalizations gener|1990s 1990|running run|studies studi|dying dy|lying ly|skies ski|"
        "news new|wasn wasn"
    ).split("|")
)


def test_porter_stem_is_rouges_perl_stemmer():
    got = {w: rouge155.porter_stem(w) for w in PERL_STEMS}
    assert got == PERL_STEMS


def test_perl_rand_is_drand48():
    # perl -e 'srand($s); print int(rand(11490)) for 1..5' (perl 5.36)
    want = {
        0: [1962, 8616, 1107, 10001, 6633],
        1: [478, 5222, 9592, 3860, 6497],
        7: [3061, 7836, 3050, 1483, 5683],
        999: [1175, 7305, 9232, 10636, 8904],
    }
    for seed, first in want.items():
        assert rouge155.perl_resample_indices(seed, 11490)[:5] == first


@pytest.mark.parametrize("n", [1, 2, 5, 37, 400])
def test_vectorised_bootstrap_equals_the_step_by_step_one(n):
    rng = random.Random(n)
    cols = [[float(f"{rng.random():.5f}") for _ in range(n)] for _ in range(3)]
    assert rouge155.bootstrap_averages(cols) == [rouge155.bootstrap_average(c) for c in cols]
    assert rouge155.bootstrap_averages([[0.25] * n]) == [0.25]  # a constant column stays itself


def test_tokens_as_rouge_reads_them():
    assert rouge155.see_sentences("The U.S.-led <b>x</b>\n\n<skip\nOK") == ["the u.s.-led ", "ok"]
    assert rouge155.tokens("the u.s.-led well-known $5 -- caf\u00e9s", stem=True) == [
        "the",
        "u",
        "s",
        "led",
        "well",
        "known",
        "5",
        "caf",
        "s",
    ]
    assert rouge155.tokens("running dogs", stem=False) == ["running", "dogs"]
    assert rouge155.tokens("running dogs") == ["run", "dog"]


def test_document_scores_hand_computed():
    # peer 5 tokens, model 6 ("mats" is stemmed to "mat")
    doc = rouge155.document_scores(["the cat sat on mats"], ["a cat sat on the mat ."])
    r, p, f = doc["rouge-1"]
    assert (r, p) == (round(5 / 6, 5), 1.0) and f == round(r * p / (0.5 * p + 0.5 * r), 5)
    assert doc["rouge-2"][:2] == (round(2 / 5, 5), round(2 / 4, 5))  # "cat sat", "sat on"
    # ROUGE-L: LCS "cat sat on mat" (4) over model 6, peer 5
    assert doc["rouge-l"][:2] == (round(4 / 6, 5), round(4 / 5, 5))
    # summary-level LCS: the union of the model positions each peer sentence's LCS marks.
    # Against "b a" the script's back-tracking (ties go up) marks "a", not "b"; "a c" marks
    # "a" and "c": 2 of the model's 3 tokens, over the peer's 4
    doc = rouge155.document_scores(["b a", "a c"], ["a b c"])
    assert doc["rouge-l"][:2] == (round(2 / 3, 5), 0.5)
    assert rouge155.document_scores([], ["a"])["rouge-1"] == (0.0, 0.0, 0.0)


def test_fix_tokenization_cases():
    ft = go.fix_tokenization
    assert ft('he said " don \' t go " to 3 , 000 people') == "he said `` do n't go '' to 3,000 people"
    assert ft("it ' s 3 . 5 km ( far ) . . .") == "it 's 3.5 km -lrb- far -rrb- ..."
    assert ft("( x )", upper=True) == "-LRB- x -RRB-"
    assert ft("the U . S . army") == "the U.S. . army"  # the scripts' own result
    assert ft("a well - known [UNK] & co") == "a well-known UNK &amp; co"
    assert ft("- a - - b -") == "- a -- b -"


def test_cnndm_candidate_drops_short_and_repeated_sentences():
    pred = (
        "the storm hit the coast on monday [X_SEP] too short here [X_SEP] "
        "the storm hit the coast again on monday [X_SEP] officials counted ( 12 ) damaged homes"
    )
    assert go.cnndm_candidate(pred) == [
        "the storm hit the coast on monday",
        "officials counted -LRB- 12 -RRB- damaged homes",
    ]
    assert go.cnndm_candidate("one two three four") == []


def test_summary_documents_per_script():
    peer, model = go.summary_documents("xsum", "A cat . It sat .", "the cat sat .")
    assert peer == ["the cat sat ."] and model == ["a cat .", " it sat ."]  # files2rouge: prediction is the model
    peer, model = go.summary_documents("gigaword", "police ( 1 ) arrest", "Police arrest <unk> man")
    assert peer == ["police ( # ) arrest"] and model == ["police arrest "]
    assert isinstance(go.summary_documents("cnndm", "x y z w v u", "  "), str)
    assert isinstance(go.summary_documents("msnews", "", "gold"), str)


def test_qg_groups_keep_the_last_prediction_and_every_reference():
    rows = [("s1", "h1", "r1"), ("s2", "h2", "r2"), ("s1", "h3", "r3")]
    assert go.qg_groups(rows) == [("h3", ["r1", "r3"]), ("h2", ["r2"])]
    key, hyp, ref = go.qg_texts("squadqg", " The Source ", "what ' s it ?", "What Is It ?")
    assert (key, hyp, ref) == ("the source", "what 's it ?", "what is it ?")
    assert go.qg_texts("msqg", "S ", "H", "R") == ("S ", "H", "R")


def _random_groups(seed: int, n: int = 150):
    rng = random.Random(seed)
    vocab = "the a of what who is was in to city capital france book wrote author when did year , ? .".split()
    groups = []
    for _ in range(n):
        refs = [" ".join(rng.choices(vocab, k=rng.randint(1, 12))) for _ in range(rng.randint(1, 3))]
        groups.append((" ".join(rng.choices(vocab, k=rng.randint(0, 12))), refs))
    return groups


def test_coco_bleu_and_rouge_equal_pycocoevalcap():
    pytest.importorskip("pycocoevalcap", reason="the meteor extra (make setup installs it)")
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.rouge.rouge import Rouge

    for seed in (1, 2):
        groups = _random_groups(seed)
        gts = {i: refs for i, (_, refs) in enumerate(groups)}
        res = {i: [hyp] for i, (hyp, _) in enumerate(groups)}
        assert go.coco_bleu(groups) == Bleu(4).compute_score(gts, res, verbose=0)[0]
        assert go.coco_rouge_l_mean(groups) == pytest.approx(Rouge().compute_score(gts, res)[0], abs=1e-12)


@pytest.mark.slow
def test_meteor_equals_pycocoevalcaps_meteor():
    if meteor.problem():
        pytest.skip(meteor.problem())
    from pycocoevalcap.meteor.meteor import Meteor

    groups = _random_groups(3, 80)
    gts = {i: refs for i, (_, refs) in enumerate(groups)}
    res = {i: [hyp] for i, (hyp, _) in enumerate(groups)}
    want, want_each = Meteor().compute_score(gts, res)
    got, got_each = meteor.meteor_scores(groups)
    assert got == want and got_each == want_each
    assert meteor.meteor_scores([("the cat sat", ["the cat sat"])])[0] > 0.9


def _metrics(out: pathlib.Path) -> dict:
    rows = [r for f in sorted((out / "metrics").glob("*.parquet")) for r in pq.read_table(f).to_pylist()]
    return {r["metric"]: (r["value"], r["n"]) for r in rows}


def test_qg_original_needs_a_source_file(tmp_path, capsys):
    gold = tmp_path / "test.tgt"
    gold.write_text("what is it ?\n", encoding="utf-8")
    with pytest.raises(SystemExit):
        evaluate.run(
            ["--task", "squadqg", "--predictions", str(gold), "--gold", str(gold), "--output", str(tmp_path / "o")]
        )
    assert "needs --source" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        evaluate.run(
            [
                "--task",
                "cnndm",
                "--source",
                str(gold),
                "--predictions",
                str(gold),
                "--gold",
                str(gold),
                "--output",
                str(tmp_path / "o"),
            ]
        )
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_squadqg_original_end_to_end_groups_by_source(tmp_path):
    if meteor.problem():
        pytest.skip(meteor.problem())
    src = [
        "The Nile is the longest river .",
        "Paris is the capital of France .",
        "the nile is the longest river .",
        "Shakespeare wrote Hamlet .",
    ]
    tgt = [
        "What is the longest river ?",
        "What is the capital of France ?",
        "Which river is the longest ?",
        "Who wrote Hamlet ?",
    ]
    pred = [
        "what river is longest ?",
        "what is the capital of france ?",
        "what is the longest river ?",
        'who wrote " hamlet " ?',
    ]
    files = {}
    for name, lines in (("test.src", src), ("test.tgt", tgt), ("pred.txt", pred)):
        files[name] = tmp_path / name
        files[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "o"
    assert (
        evaluate.run(
            [
                "--task",
                "squadqg",
                "--predictions",
                str(files["pred.txt"]),
                "--gold",
                str(files["test.tgt"]),
                "--source",
                str(files["test.src"]),
                "--output",
                str(out),
            ]
        )
        == 0
    )
    m = _metrics(out)
    # lines 1 and 3 share a source once lower-cased: one group, line 3's prediction, two references
    groups = [
        ("what is the longest river ?", ["what is the longest river ?", "which river is the longest ?"]),
        ("what is the capital of france ?", ["what is the capital of france ?"]),
        ("who wrote `` hamlet '' ?", ["who wrote hamlet ?"]),
    ]
    assert {k: v[1] for k, v in m.items()} == {
        "bleu-1": 3,
        "bleu-2": 3,
        "bleu-3": 3,
        "bleu-4": 3,
        "meteor": 3,
        "rouge-l": 3,
    }
    assert m["bleu-4"][0] == pytest.approx(100 * go.coco_bleu(groups)[3], abs=1e-9)
    assert m["rouge-l"][0] == pytest.approx(100 * go.coco_rouge_l_mean(groups), abs=1e-9)
    assert m["meteor"][0] == pytest.approx(100 * meteor.meteor_scores(groups)[0], abs=1e-9)
    stats = json.loads((out / "stats.json").read_text())
    assert stats["config"]["meteor"]["jar"].endswith("meteor-1.5.jar")
    assert stats["stages"]["parse_source"]["read"] == 4
    check_rejects(out)


ORIGINAL = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "glge" / "original"
# The official scripts' output on these fixtures (files2rouge 2.1 / bs_pyrouge + ROUGE-1.5.5
# with files2rouge's shipped WordNet db; the QG scripts with pycocoevalcap's scorers and
# meteor-1.5.jar), x 100. ROUGE prints 5 decimals, the QG values are the unrounded floats.
OFFICIAL = {
    ("xsum", "sum"): {"rouge-1": 61.765, "rouge-2": 30.439, "rouge-l": 54.111},
    ("msnews", "sum"): {"rouge-1": 61.765, "rouge-2": 30.439, "rouge-l": 54.111},
    ("cnndm", "cnndm"): {"rouge-1": 57.826, "rouge-2": 39.722, "rouge-l": 56.757},
    ("gigaword", "gigaword"): {"rouge-1": 78.779, "rouge-2": 52.592, "rouge-l": 75.422},
    ("squadqg", "qg"): {
        "bleu-1": 78.3783783741417,
        "bleu-4": 43.89101153798082,
        "meteor": 41.86290560240181,
        "rouge-l": 69.77404933352432,
    },
    ("msqg", "qg"): {
        "bleu-1": 71.79487179119002,
        "bleu-4": 35.77665696287864,
        "meteor": 41.55395426954276,
        "rouge-l": 60.053474311062494,
    },
    # Python 2 semantics: "OÙ EST L’ÉCOLE" lower-cases to "oÙ est l’École"
    ("squadqg", "qg_nonascii"): {
        "bleu-1": 59.999999976000026,
        "bleu-4": 1.2574334290280229e-06,
        "meteor": 100.0,
        "rouge-l": 60.0,
    },
}


@pytest.mark.slow
@pytest.mark.parametrize("task,name", sorted(OFFICIAL))
def test_original_equals_the_official_scripts_on_the_fixtures(tmp_path, task, name):
    qg = task in ("squadqg", "msqg")
    if qg and meteor.problem():
        pytest.skip(meteor.problem())
    out = tmp_path / "o"
    args = [
        "--task",
        task,
        "--predictions",
        str(ORIGINAL / f"{name}.pred"),
        "--gold",
        str(ORIGINAL / f"{name}.gold"),
        "--output",
        str(out),
    ]
    if qg:
        args += ["--source", str(ORIGINAL / f"{name}.src")]
    assert evaluate.run(args) == 0
    got = {k: v[0] for k, v in _metrics(out).items() if k in OFFICIAL[(task, name)]}
    assert got == pytest.approx(OFFICIAL[(task, name)], abs=1e-9)
    check_rejects(out)
    if task == "cnndm":  # its third target is empty: postprocess_cnn_dm.py leaves it out
        rejects = pq.read_table(out / "rejects").to_pylist()
        assert [r["reason"] for r in rejects] == ["skipped_by_official_scorer"]


@pytest.mark.slow
def test_files2rouge_empty_lines_are_rejects_not_a_crash(tmp_path):
    pred, gold = tmp_path / "p.txt", tmp_path / "g.txt"
    pred.write_text("a cat sat on the mat .\n\nthe dog ran .\n", encoding="utf-8")
    gold.write_text("the cat sat .\nsomething .\n\n", encoding="utf-8")
    out = tmp_path / "o"
    assert evaluate.run(["--task", "xsum", "--predictions", str(pred), "--gold", str(gold), "--output", str(out)]) == 0
    m = _metrics(out)
    assert m["rouge-1"][1] == 1  # only line 1 is scored, as `files2rouge -ir -is`
    doc = rouge155.document_scores(["the cat sat ."], ["a cat sat on the mat ."])
    assert m["rouge-1"][0] == pytest.approx(100 * doc["rouge-1"][2])
    rejects = pq.read_table(out / "rejects").to_pylist()
    assert sorted(r["reason"] for r in rejects) == ["skipped_by_official_scorer"] * 2
    check_rejects(out)
