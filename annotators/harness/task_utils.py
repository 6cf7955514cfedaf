"""The `utils.py` of every `lm_eval/` folder storybench writes (lm-evaluation-harness tasks).

The task files name these functions with `!function utils.<name>`; the harness imports this
file from beside them. Two jobs:

- `load_tables`: the tasks' `custom_dataset`. It reads the `dataset_kwargs` the task file
  gives (`data_files` relative to this folder, optional `columns` and `filters`) and calls
  `datasets.load_dataset("parquet", ...)` with the paths made absolute from this file's own
  place, so `lm_eval` works from any working directory and after the output folder moves
  (the harness would resolve relative `data_files` against the working directory).
- PlotCom and OutGen scoring: `generation_results` keeps each generation with its gold row,
  and the aggregations (`bleu_1` ... `order`) score them all at once with storybench's own
  evaluation code (`annotators.evaluate.steps.corpus_metrics`, what `python -m
  pipelines.evaluate --compat original` computes), imported, never re-implemented here.
  They need storybench installed where lm_eval runs (`make setup` installs both in .venv).
"""
from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
GENERATION_METRICS = {
    "plotcom": ("bleu-1", "bleu-2", "bleu-3", "bleu-4", "distinct-1", "distinct-2", "distinct-3", "distinct-4"),
    "outgen": ("bleu-1", "bleu-2", "bleu-3", "bleu-4", "distinct-1", "distinct-2", "distinct-3", "distinct-4",
               "coverage", "order"),
}


def _absolute(paths) -> list[str]:
    return [str(HERE / p) for p in ([paths] if isinstance(paths, str) else paths)]


def load_tables(data_files: dict, columns=None, filters=None, **_metadata):
    """The task's splits: `datasets.load_dataset("parquet")` over `data_files` (paths relative
    to this folder), keeping `columns` and the rows matching every `[column, op, value]` of
    `filters`. Other keyword arguments (the harness passes its metadata) are ignored."""
    import datasets

    kwargs = {}
    if columns:
        kwargs["columns"] = list(columns)
    if filters:
        kwargs["filters"] = [tuple(f) for f in filters]
    files = {split: _absolute(paths) for split, paths in data_files.items()}
    return datasets.load_dataset("parquet", data_files=files, **kwargs)


def _gold_record(task: str, doc: dict) -> dict:
    if task == "outgen":
        return {"title": doc["title"], "outline": list(doc["outline"]), "story": doc["story"]}
    return {"story": doc["story"], "plot": doc["plot"]}


def generation_results(doc: dict, results: list) -> dict:
    """process_results of PlotCom and OutGen: every metric gets (task, example id, the
    generation, the gold row); the aggregations score the whole list."""
    task = "outgen" if "outline" in doc else "plotcom"
    item = (task, doc["example_id"], results[0], _gold_record(task, doc))
    return {metric: item for metric in GENERATION_METRICS[task]}


_SCORED: dict = {}


def _corpus(items: list) -> dict:
    """storybench's corpus metrics of these items, computed once for all the metrics."""
    key = tuple((task, example_id, prediction) for task, example_id, prediction, _ in items)
    if key not in _SCORED:
        from annotators.evaluate.steps import corpus_metrics

        task = items[0][0]
        field = "story" if task == "outgen" else "plot"
        examples = [(example_id, {field: prediction}, gold) for _, example_id, prediction, gold in items]
        _SCORED.clear()
        _SCORED[key] = corpus_metrics(task, examples, compat="original")
    return _SCORED[key]


def _metric(name: str):
    def aggregate(items: list):
        value = _corpus(items)[name]
        return float("nan") if value is None else value

    aggregate.__name__ = name.replace("-", "_")
    return aggregate


bleu_1, bleu_2, bleu_3, bleu_4 = (_metric(f"bleu-{n}") for n in (1, 2, 3, 4))
distinct_1, distinct_2, distinct_3, distinct_4 = (_metric(f"distinct-{n}") for n in (1, 2, 3, 4))
coverage, order = _metric("coverage"), _metric("order")
