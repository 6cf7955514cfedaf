"""The `utils.py` of every `lm_eval/` folder storybench writes (lm-evaluation-harness tasks).

The task files name these functions with `!function utils.<name>`; the harness imports this
file from beside them. Two jobs:

- `load_tables`: the tasks' `custom_dataset`. It reads the `dataset_kwargs` the task file
  gives (`data_files` relative to this folder, optional `columns` and `filters`) and calls
  `datasets.load_dataset("parquet", ...)` with the paths made absolute from this file's own
  place, so `lm_eval` works from any working directory and after the output folder moves
  (the harness would resolve relative `data_files` against the working directory).
- `load_lines`: the same for GLGE's `{split}.src` / `{split}.tgt` line files (one example per
  line: `line`, `source`, `target`).
- Scoring generations (PlotCom, OutGen, GLGE): `generation_results` keeps each generation
  with its gold row, and the aggregations (`bleu_1` ... `order`, `rouge_1`, `meteor`, `f1`)
  score them all at once with storybench's own evaluation code
  (`annotators.evaluate.steps.corpus_metrics`, what `python -m pipelines.evaluate --compat
  original` computes), imported, never re-implemented here.
  They need storybench installed where lm_eval runs (`make setup` installs both in .venv).
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
GLGE_METRICS = {
    **{task: ("rouge-1", "rouge-2", "rouge-l") for task in ("cnndm", "gigaword", "xsum", "msnews")},
    **{task: ("bleu-1", "bleu-2", "bleu-3", "bleu-4", "meteor", "rouge-l") for task in ("squadqg", "msqg")},
    "coqa": ("f1",),
    "personachat": ("bleu-1", "bleu-2", "distinct-1", "distinct-2"),
}
GENERATION_METRICS = {
    "plotcom": ("bleu-1", "bleu-2", "bleu-3", "bleu-4", "distinct-1", "distinct-2", "distinct-3", "distinct-4"),
    "outgen": (
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
    ),
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


def _lines(path: Path) -> list[str]:
    """The file's lines as storybench's jobs read them: split at "\n" only, each without its
    trailing "\r", the UTF-8 BOM left out (read_text's universal newlines split a line at a
    lone "\r" too, which shifted every later example against its target)."""
    text = path.read_bytes().decode("utf-8-sig")
    if not text:
        return []
    return [line.rstrip("\r") for line in (text[:-1] if text.endswith("\n") else text).split("\n")]


def load_lines(data_files: dict, **_metadata):
    """GLGE splits from aligned line files: `data_files` maps a split to {"source": path,
    "target": path} (relative to this folder); rows `line` (0-based), `source`, `target`."""
    import datasets

    splits = {}
    for split, paths in data_files.items():
        sources, targets = _lines(HERE / paths["source"]), _lines(HERE / paths["target"])
        if len(sources) != len(targets):
            raise ValueError(f"{paths['source']} has {len(sources)} lines, {paths['target']} {len(targets)}")
        splits[split] = datasets.Dataset.from_dict(
            {"line": list(range(len(sources))), "source": sources, "target": targets}
        )
    return datasets.DatasetDict(splits)


def _gold_record(task: str, doc: dict) -> dict:
    if "target" in doc:  # GLGE
        return {"text": doc["target"], "source": doc["source"]}
    if task == "outgen":
        return {"title": doc["title"], "outline": list(doc["outline"]), "story": doc["story"]}
    return {"story": doc["story"], "plot": doc["plot"]}


def generation_results(doc: dict, results: list) -> dict:
    """process_results of PlotCom and OutGen: every metric gets (task, example id, the
    generation, the gold row); the aggregations score the whole list."""
    task = "outgen" if "outline" in doc else "plotcom"
    item = (task, doc["example_id"], results[0], _gold_record(task, doc))
    return {metric: item for metric in GENERATION_METRICS[task]}


def _glge_results(task: str):
    def results(doc: dict, outputs: list) -> dict:
        item = (task, doc["line"], outputs[0], _gold_record(task, doc))
        return {metric: item for metric in GLGE_METRICS[task]}

    results.__name__ = f"{task}_results"
    return results


cnndm_results, gigaword_results, xsum_results, msnews_results = (
    _glge_results(t) for t in ("cnndm", "gigaword", "xsum", "msnews")
)
squadqg_results, msqg_results, coqa_results, personachat_results = (
    _glge_results(t) for t in ("squadqg", "msqg", "coqa", "personachat")
)


_SCORED: dict = {}


def _corpus(items: list) -> dict:
    """storybench's corpus metrics of these items, computed once for all the metrics."""
    key = tuple((task, example_id, prediction) for task, example_id, prediction, _ in items)
    if key not in _SCORED:
        from annotators.evaluate.steps import corpus_metrics

        task = items[0][0]
        field = {"outgen": "story", "plotcom": "plot"}.get(task, "text")
        ordered = sorted(items, key=lambda item: item[1])  # GLGE: line order, as its scorers read
        examples = [(str(example_id), {field: prediction}, gold) for _, example_id, prediction, gold in ordered]
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
rouge_1, rouge_2, rouge_l = _metric("rouge-1"), _metric("rouge-2"), _metric("rouge-l")
meteor, f1 = _metric("meteor"), _metric("f1")
