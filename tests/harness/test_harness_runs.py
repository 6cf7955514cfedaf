"""lm-evaluation-harness runs the built benchmarks as they are (issue 32), for real and offline:
`lm_eval run --model dummy` over every exported task of a LOT build (`make build-lot`'s
command) and a ChapterBreak build, from another working directory after the output folder
moved; and `--model local-completions` against a character n-gram model on loopback, whose
harness accuracies must equal the same model scored directly."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from harness_helpers import build_chapterbreak, build_glge, build_lot, lm_eval_command, run_lm_eval
from ngram_server import EOS, CharNgram, Server

from annotators.core import longlm
from annotators.evaluate.steps import chapterbreak_correct

pytestmark = pytest.mark.slow
OUTGEN = [
    "bleu-1",
    "bleu-2",
    "bleu-3",
    "bleu-4",
    "distinct-1",
    "distinct-2",
    "distinct-3",
    "distinct-4",
    "coverage",
    "order",
]


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    lm_eval_command()  # skip early without lm_eval
    return build_lot(tmp_path_factory.mktemp("lot")), build_chapterbreak(tmp_path_factory.mktemp("cb"))


def _table(folder, split: str | None = None) -> pd.DataFrame:
    pattern = f"{split}-*.parquet" if split else "*.parquet"
    return pd.concat([pd.read_parquet(f) for f in sorted(folder.glob(pattern))], ignore_index=True)


def _cb_rows(cb, task: str) -> pd.DataFrame:
    """The examples a ChapterBreak task reads, from its name (source, boundary, length)."""
    examples = _table(cb / "examples")
    parts = task[len("storybench_chapterbreak_") :].split("_")
    source, length = parts[0], int(parts[-1])
    boundary = parts[1] if len(parts) == 4 else "chapter"
    return examples[(examples.source == source) & (examples.boundary == boundary) & (examples.prefix_length == length)]


def _value(results: dict, task: str, metric: str):
    return results["results"][task][f"{metric},none"]


def test_dummy_model_runs_every_lot_task(builds, tmp_path):
    lot, _ = builds
    stats = json.loads((lot / "stats.json").read_text())
    tasks = stats["lm_eval"]["groups"]["storybench_lot"]
    assert tasks == [
        "storybench_lot_clozet",
        "storybench_lot_senpos",
        "storybench_lot_plotcom",
        "storybench_lot_outgen",
    ]
    results, samples = run_lm_eval(lot / "lm_eval", ["storybench_lot"], tmp_path / "elsewhere")
    for task, name in zip(tasks, ("clozet", "senpos", "plotcom", "outgen")):
        assert results["n-samples"][task]["effective"] == len(_table(lot / name, "test"))
    for task in ("storybench_lot_clozet", "storybench_lot_senpos"):
        assert 0.0 <= _value(results, task, "acc") <= 1.0
    assert set(results["results"]["storybench_lot_outgen"]) >= {f"{m},none" for m in OUTGEN}
    assert set(results["results"]["storybench_lot_plotcom"]) >= {f"{m},none" for m in OUTGEN[:8]}
    # the harness's OutGen numbers are `pipelines.evaluate --compat original`'s on the same generations
    outgen = sorted(samples["storybench_lot_outgen"], key=lambda s: s["doc"]["example_id"])
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"example_id": s["doc"]["example_id"], "story": s["filtered_resps"][0]}, ensure_ascii=False)
            + "\n"
            for s in outgen
        ),
        encoding="utf-8",
    )
    from pipelines.evaluate import run as evaluate

    evaluate(
        [
            "--task",
            "outgen",
            "--predictions",
            str(predictions),
            "--gold",
            str(lot / "outgen"),
            "--split",
            "test",
            "--align",
            "id",
            "--output",
            str(tmp_path / "scored"),
        ]
    )
    metrics = pd.read_parquet(tmp_path / "scored" / "metrics")
    expected = {r.metric: r.value for r in metrics[metrics.group == "all"].itertuples()}
    for metric in OUTGEN:
        got = _value(results, "storybench_lot_outgen", metric)
        want = expected[metric]
        assert (math.isnan(got) and (want is None or math.isnan(want))) or got == pytest.approx(want, rel=1e-12), metric


def test_dummy_model_runs_every_chapterbreak_task(builds, tmp_path):
    _, cb = builds
    groups = json.loads((cb / "stats.json").read_text())["lm_eval"]["groups"]
    assert set(groups) == {
        "storybench_chapterbreak",
        "storybench_chapterbreak_cause",
        "storybench_chapterbreak_dialogue",
    }
    every = [t for tasks in groups.values() for t in tasks]
    assert "storybench_chapterbreak_pg19_ctx_256" in every and "storybench_chapterbreak_ao3_ctx_1024" in every
    results, _ = run_lm_eval(cb / "lm_eval", list(groups), tmp_path / "elsewhere")
    for task in every:
        rows = _cb_rows(cb, task)
        assert len(rows) > 0
        assert results["n-samples"][task]["effective"] == len(rows), task
        assert 0.0 <= _value(results, task, "acc") <= 1.0


def _lot_texts(lot) -> list[str]:
    texts = []
    for task, fields in (
        ("clozet", ("story", "plot0", "plot1")),
        ("senpos", ("story", "sentence")),
        ("plotcom", ("story", "plot")),
        ("outgen", ("title", "story")),
    ):
        train = _table(lot / task, "train")
        for field in fields:
            texts += [t.replace("<mask>", "").replace("[MASK]", "").replace("<MASK>", "") for t in train[field]]
    return texts


def _argmax(values: list[float]) -> int:
    return max(range(len(values)), key=lambda i: (values[i], -i))


def _direct_choice(model: CharNgram, context: str, choices: list[str]) -> list[float]:
    """Each choice's log-likelihood after the context, as the harness asks it: the context's
    trailing whitespace moves to the continuation."""
    stripped = context.rstrip()
    return [model.continuation_logprob(stripped, context[len(stripped) :] + c) for c in choices]


def test_loopback_model_accuracies_equal_direct_scoring(builds, tmp_path):
    lot, cb = builds
    chapters = _table(cb / "chapters")
    model = CharNgram(_lot_texts(lot) + list(chapters.text))
    cb_tasks = ["storybench_chapterbreak_pg19_ctx_256", "storybench_chapterbreak_ao3_ctx_256"]
    lot_tasks = ["storybench_lot_clozet", "storybench_lot_senpos", "storybench_lot_outgen"]
    with Server(model) as url:
        args = f"model=ngram,base_url={url},tokenizer_backend=remote,max_length=100000,max_retries=1"
        include = lot / "lm_eval"
        lot_results, lot_samples = run_lm_eval(include, lot_tasks, tmp_path / "lot", "local-completions", args)
        cb_results, cb_samples = run_lm_eval(cb / "lm_eval", cb_tasks, tmp_path / "cb", "local-completions", args)

    for name in ("clozet", "senpos"):
        rows = _table(lot / name, "test")
        correct = []
        by_id = {s["doc"]["example_id"]: s for s in lot_samples[f"storybench_lot_{name}"]}
        for row in rows.to_dict("records"):
            source, target = longlm.source_target(name, row)
            n = 2 if name == "clozet" else row["story"].count("[MASK]")
            lls = _direct_choice(model, source, [longlm.sentinel(k) for k in range(1, n + 1)])
            assert [float(r[0]) for r in by_id[row["example_id"]]["filtered_resps"]] == pytest.approx(lls, rel=1e-12)
            correct.append(target.endswith(longlm.sentinel(_argmax(lls) + 1)))
        assert _value(lot_results, f"storybench_lot_{name}", "acc") == pytest.approx(
            sum(correct) / len(correct), abs=1e-12
        )

    for task in cb_tasks:
        correct = []
        by_id = {s["doc"]["example_id"]: s for s in cb_samples[task]}
        for row in _cb_rows(cb, task).to_dict("records"):
            prefix = row["prefix"] + ("" if row["prefix"][-1:].isspace() else "\n\n")
            lls = _direct_choice(model, prefix, [row["gold"], *row["negatives"]])
            assert [float(r[0]) for r in by_id[row["example_id"]]["filtered_resps"]] == pytest.approx(lls, rel=1e-12)
            correct.append(chapterbreak_correct(lls))
        assert _value(cb_results, task, "acc") == pytest.approx(sum(correct) / len(correct), abs=1e-12), task

    for sample in lot_samples["storybench_lot_outgen"]:  # generation goes through the model too
        row = sample["doc"]
        source = longlm.source_target("outgen", row)[0]
        assert sample["filtered_resps"][0] == model.generate(source, 512, ["<extra_id_2>", "\n", EOS])


def _evaluated(tmp_path, task: str, predictions: list[str], gold) -> dict:
    from pipelines.evaluate import run as evaluate

    path = tmp_path / f"{task}.pred"
    path.write_text("".join(f"{p}\n" for p in predictions), encoding="utf-8")
    evaluate(
        ["--task", task, "--predictions", str(path), "--gold", str(gold), "--output", str(tmp_path / f"{task}_scored")]
    )
    metrics = pd.read_parquet(tmp_path / f"{task}_scored" / "metrics")
    return {r.metric: r.value for r in metrics[metrics.group == "all"].itertuples()}


def test_glge_levels_score_as_pipelines_evaluate(tmp_path):
    glge = build_glge(tmp_path / "glge")
    groups = json.loads((glge / "stats.json").read_text())["lm_eval"]["groups"]
    assert list(groups) == [
        "storybench_glge_easy",
        "storybench_glge_medium",
        "storybench_glge_medium_plus",
        "storybench_glge_hard",
    ]
    model = CharNgram(
        [
            line
            for task in ("coqa", "xsum", "personachat")
            for end in ("src", "tgt")
            for line in (glge / "easy" / f"{task}_data" / "org_data" / f"train.{end}").read_text().splitlines()
        ]
    )
    with Server(model) as url:
        args = f"model=ngram,base_url={url},tokenizer_backend=remote,max_retries=1"
        results, samples = run_lm_eval(glge / "lm_eval", list(groups), tmp_path / "run", "local-completions", args)
    metrics = {
        "coqa": ["f1"],
        "xsum": ["rouge-1", "rouge-2", "rouge-l"],
        "personachat": ["bleu-1", "bleu-2", "distinct-1", "distinct-2"],
    }
    for tasks in groups.values():
        assert len(tasks) == 3
        for task in tasks:
            assert results["n-samples"][task]["effective"] == 6
            assert set(results["results"][task]) >= {f"{m},none" for m in metrics[task.rsplit("_", 1)[1]]}
    for task in ("xsum", "personachat"):
        ordered = sorted(samples[f"storybench_glge_easy_{task}"], key=lambda s: s["doc"]["line"])
        predictions = [s["filtered_resps"][0] for s in ordered]
        assert any(p.strip() for p in predictions)  # the model wrote words
        expected = _evaluated(tmp_path, task, predictions, glge / "easy" / f"{task}_data" / "org_data" / "test.tgt")
        for metric in metrics[task]:
            assert _value(results, f"storybench_glge_easy_{task}", metric) == pytest.approx(
                expected[metric], rel=1e-12
            ), metric
        assert any(expected[m] > 0 for m in metrics[task])
