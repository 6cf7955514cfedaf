"""The evaluate job's metrics table: every example's scores -> the corpus metrics
(METRICS_SCHEMA rows), per task and compatibility mode; the official GLGE summarisation and
question-generation corpus numbers are assembled from each example's parts here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from annotators.evaluate import glge_metrics as gm
from annotators.evaluate import glge_original as go
from annotators.evaluate import lot_metrics as lm
from annotators.evaluate.config import ACCURACY_TASKS, EvalConfig
from schemas.evaluate import ExampleScore


def _mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def metric_rows(scores: Iterable[ExampleScore], config: EvalConfig) -> list[dict]:
    """Every example's scores -> the corpus metrics (METRICS_SCHEMA rows)."""
    scores = sorted(scores, key=lambda s: s.key)
    task, compat = config.task, config.compat
    rows: list[dict] = []

    def add(group: str, metric: str, value, n: int) -> None:
        rows.append({"task": task, "compat": compat, "group": group, "metric": metric, "value": value, "n": n})

    if task in ACCURACY_TASKS or task == "chapterbreak":
        groups: dict[str, list[float]] = {"all": []}
        for s in scores:
            for g in s.groups:
                groups.setdefault(g, []).append(s.values["accuracy"])
        for g in sorted(groups):
            add(g, "accuracy", _mean(groups[g]), len(groups[g]))
            add(g, "correct", float(sum(groups[g])), len(groups[g]))
        return rows
    n = len(scores)
    if task in gm.GLGE_TASKS and compat == "original" and task in gm.SUMMARY_TASKS + gm.QG_TASKS:
        _glge_original_rows(scores, task, add)
        return rows
    if task in gm.GLGE_TASKS:
        names = sorted({m for s in scores for m in s.values})
        for metric in names:
            add("all", metric, _mean([s.values[metric] for s in scores]), n)
        if task == "personachat":
            for metric, value in gm.inter_distinct([s.grams for s in scores], compat).items():
                add("all", metric, value, n)
        if task in gm.QG_TASKS:
            add("all", "bleu-4", gm.corpus_bleu4([(s.grams["hyp"], s.grams["ref"]) for s in scores]), n)
        return rows
    for k in lm.ORDERS:
        add("all", f"bleu-{k}", _mean([s.values[f"bleu-{k}"] for s in scores]), n)
    for metric, value in lm.corpus_distinct(s.grams for s in scores).items():
        add("all", metric, value, n)
    if task == "outgen":
        pooled = [v for s in scores for v in s.coverage]
        add("all", "coverage", _mean(pooled), len(pooled))
        orders = [s.values["order"] for s in scores if s.values["order"] is not None]
        add("all", "order", _mean(orders), len(orders))
    return rows


def _glge_original_rows(scores: Sequence[ExampleScore], task: str, add) -> None:
    """The official summarisation / QG corpus numbers (x 100) from every example's parts."""
    scores = sorted(scores, key=lambda s: s.grams["line"])
    if task in gm.SUMMARY_TASKS:
        metrics = ("rouge-1", "rouge-2", "rouge-l")
        averages = go.summary_averages(
            task, [s.grams["line"] for s in scores], {m: [s.grams["f"][m] for s in scores] for m in metrics}
        )
        for metric in metrics:
            add("all", metric, 100 * averages[metric] if scores else None, len(scores))
        return
    from annotators.evaluate import meteor

    groups = go.qg_groups([(s.grams["group"], s.grams["hyp"], s.grams["ref"]) for s in scores])
    n = len(groups)
    if not groups:
        for metric in ("bleu-1", "bleu-2", "bleu-3", "bleu-4", "meteor", "rouge-l"):
            add("all", metric, None, 0)
        return
    for k, value in enumerate(go.coco_bleu(groups), start=1):
        add("all", f"bleu-{k}", 100 * value, n)
    add("all", "meteor", 100 * meteor.meteor_scores(groups)[0], n)
    add("all", "rouge-l", 100 * go.coco_rouge_l_mean(groups), n)
