"""Prediction rows, accuracies and the LOT Table 13 markdown for the bias baselines.

Accuracy = (sum of credits) / n, where credit is 1 for a right pick, 0 otherwise, and
1/(number of candidates) for Random (its expected accuracy). `math.fsum` is exactly
rounded, so the figure does not depend on the order examples arrive in.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from annotators.audits.bias import BiasItem, candidate_only_pred, majority_label, train_candidate_only
from annotators.audits.classifier import NaiveBayes

EMPTY_MODEL = NaiveBayes((), {}, {})  # the candidate-only model of a task without training items

BASELINE_TITLES = {
    "random": "Random",
    "majority": "Majority",
    "length": "Length",
    "sentiment": "Sentiment",
    "discourse_markers": "Discourse Markers",
    "candidate_only": "Candidate only (w/o Context)",
}
TASK_TITLES = {"clozet": "ClozeT", "senpos": "SenPos"}


def prediction_rows(item: BiasItem, majority: int, model: NaiveBayes) -> list[dict]:
    """One row per baseline for a val/test item."""
    base = {
        "task": item.task,
        "split": item.split,
        "example_id": item.example_id,
        "gold": item.gold,
        "n_candidates": item.n_candidates,
    }
    picks = [("majority", majority), *item.preds, ("candidate_only", candidate_only_pred(item, model))]
    rows = [{**base, "baseline": "random", "prediction": -1, "credit": 1.0 / item.n_candidates}]
    rows += [{**base, "baseline": name, "prediction": pick, "credit": float(pick == item.gold)} for name, pick in picks]
    return rows


def accuracy_row(task: str, split: str, baseline: str, credits: Iterable[float]) -> dict:
    credits = list(credits)
    return {
        "task": task,
        "split": split,
        "baseline": baseline,
        "n": len(credits),
        "accuracy": math.fsum(credits) / len(credits) if credits else 0.0,
    }


def table13_markdown(rows: Sequence[dict]) -> str:
    """Blocks per split; rows are baselines, columns ClozeT and SenPos, values in percent."""
    acc = {(r["task"], r["split"], r["baseline"]): r for r in rows}
    lines = ["# Bias baselines (LOT Table 13 layout), accuracy in %", ""]
    splits = sorted({r["split"] for r in rows})
    if not splits:
        lines += ["No examples were evaluated (see rejects/).", ""]
    for split in splits:
        tasks = [t for t in TASK_TITLES if any(k[:2] == (t, split) for k in acc)]

        def cell(task: str, names: Sequence[str], split: str = split) -> str:
            found = [acc.get((task, split, b)) for b in names]
            return "/".join(f"{100 * r['accuracy']:.2f}" if r else "-" for r in found)

        lines += [
            f"## {split} split",
            "",
            "| Baselines | " + " | ".join(TASK_TITLES[t] for t in tasks) + " |",
            "|---|" + "---:|" * len(tasks),
        ]
        lines.append(
            "| # Examples | "
            + " | ".join(str(acc[(t, split, "random")]["n"]) if (t, split, "random") in acc else "-" for t in tasks)
            + " |"
        )
        order = [
            ("Random", ["random"]),
            ("Majority", ["majority"]),
            ("Length", ["length"]),
            ("BLEU-1/2", ["bleu1", "bleu2"]),
            ("Sentiment", ["sentiment"]),
            ("Discourse Markers", ["discourse_markers"]),
            (BASELINE_TITLES["candidate_only"], ["candidate_only"]),
        ]
        for title, names in order:
            lines.append(f"| {title} | " + " | ".join(cell(t, names) for t in tasks) + " |")
        lines.append("")
    return "\n".join(lines)


def credit_entry(row: dict) -> tuple[tuple[str, str, str], float]:
    """((task, split, baseline), credit) of one prediction row: accuracy is reported per
    (task, split, baseline). A plain tuple of strings, which Beam's shuffle encodes
    deterministically as it is (a NamedTuple key makes Beam warn that it falls back to pickling)."""
    return (row["task"], row["split"], row["baseline"]), row["credit"]


def summary_row(grouped: tuple[tuple[str, str, str], Iterable[float]]) -> dict:
    """`accuracy_row` of one ((task, split, baseline), its credits) group."""
    (task, split, baseline), credits = grouped
    return accuracy_row(task, split, baseline, credits)


def prediction_key(row: dict) -> tuple[str, str, str, str]:
    return row["task"], row["split"], row["example_id"], row["baseline"]


def summary_key(row: dict) -> tuple[str, str, str]:
    return row["task"], row["split"], row["baseline"]


def sorted_summary(rows: Iterable[dict]) -> list[dict]:
    return sorted(rows, key=summary_key)


def majority_of(grouped: tuple[str, Iterable[BiasItem]]) -> tuple[str, int]:
    """(task, its Majority label) from the task's training items."""
    task, items = grouped
    return task, majority_label([i.gold for i in items])


def candidate_model_of(grouped: tuple[str, Iterable[BiasItem]]) -> tuple[str, NaiveBayes]:
    """(task, its candidate-only classifier) trained on the task's items in id order."""
    task, items = grouped
    return task, train_candidate_only(sorted(items, key=lambda i: i.example_id))


def predictions_of(item: BiasItem, majority: dict, models: dict) -> list[dict]:
    """Every baseline's prediction row of one val/test item (an unseen task: label 0, empty model)."""
    return prediction_rows(item, majority.get(item.task, 0), models.get(item.task, EMPTY_MODEL))


def split_label(item: BiasItem) -> str:
    return f"{item.task}/{item.split}"
