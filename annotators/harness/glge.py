"""GLGE's lm-evaluation-harness tasks (`OUT/lm_eval/`): one per GLGE task and difficulty level
built, `storybench_glge_{level}_{task}` (groups `storybench_glge_{level}`; `medium+` is
written `medium_plus`).

The test set is the same in every level (GLGE 2.4: only the training data differs), so a
level's task differs in its few-shot pool: `fewshot_split: train` is that level's training
set (`--num_fewshot K`). GLGE fine-tunes sequence-to-sequence models on source -> target,
so the prompt is the source line and a line break, and the model writes the target line
(greedy, up to 128 tokens, until a line break). The metric is GLGE's own, as `pipelines.evaluate
--compat original` computes it (imported by `utils.py`): ROUGE-1/2/L of ROUGE-1.5.5 for
the summarisation tasks, the QG scripts' BLEU-1..4, METEOR (needs Java) and ROUGE-L, CoQA's
F1, PersonaChat's BLEU-1/2 and distinct-1/2. Tasks of other names (LOT's, scored by the LOT
output's own tasks, or a task of your own) have no GLGE metric and get no harness task.
"""

from __future__ import annotations

from annotators.harness import common

GROUP = "storybench_glge"
LEVELS = ("easy", "medium", "medium+", "hard")


def level_name(level: str) -> str:
    return level.replace("+", "_plus")


def task_name(level: str, task: str) -> str:
    return f"{GROUP}_{level_name(level)}_{task}"


def task_yaml(level: str, task: str, metrics: tuple[str, ...], has_train: bool) -> str:
    folder = f"../{level}/{task}_data/org_data"
    lines = [
        f"# storybench GLGE {task}, {level} level (GLGE section 2.4): write the target line of each "
        f"test source line; {', '.join(metrics)} as GLGE's scripts compute them.",
        f"task: {task_name(level, task)}",
        "dataset_path: text",
        "dataset_kwargs:",
        "  data_files:",
    ]
    for split, name in (("train", "train"), ("test", "test")):
        if split == "train" and not has_train:
            continue
        lines += [
            f"    {split}:",
            f"      source: {common.q(f'{folder}/{name}.src')}",
            f"      target: {common.q(f'{folder}/{name}.tgt')}",
        ]
    lines += ["custom_dataset: !function utils.load_lines"]
    if has_train:
        lines += ["training_split: train", "fewshot_split: train"]
    lines += [
        "test_split: test",
        "output_type: generate_until",
        'doc_to_text: "{{source}}\\n"',
        'doc_to_target: "{{target}}"',
        'target_delimiter: ""',
        'fewshot_delimiter: "\\n\\n"',
        "generation_kwargs:",
        '  until: ["\\n"]',
        "  max_gen_toks: 128",
        "  do_sample: false",
        f"process_results: !function utils.{task}_results",
        "metric_list:",
    ]
    for metric in metrics:
        lines += common.metric_yaml(metric, f"!function utils.{metric.replace('-', '_')}")
    return "\n".join(lines + ["metadata:", "  version: 1.0"]) + "\n"


def built(stats: dict) -> list[tuple[str, str, bool]]:
    """(level, task, has training lines) of every GLGE-metric task with test lines."""
    from annotators.harness.task_utils import GLGE_METRICS

    out = []
    for task, info in sorted(stats.get("glge", {}).items()):
        if task not in GLGE_METRICS or not info.get("sizes", {}).get("test"):
            continue
        levels = info.get("levels", {})
        out += [(level, task, bool(levels[level].get("train_size"))) for level in LEVELS if level in levels]
    return out


def attachments(stats: dict) -> tuple[dict[str, str], dict]:
    """({path under the output: text}, stats.json's `lm_eval`) of a GLGE build."""
    from annotators.harness.task_utils import GLGE_METRICS

    tasks = built(stats)
    files = {
        f"{common.FOLDER}/{task_name(level, task)}.yaml": task_yaml(level, task, GLGE_METRICS[task], train)
        for level, task, train in tasks
    }
    groups: dict[str, list[str]] = {}
    for level, task, _ in tasks:
        groups.setdefault(f"{GROUP}_{level_name(level)}", []).append(task_name(level, task))
    for group, names in groups.items():
        files[f"{common.FOLDER}/{group}.yaml"] = common.group_yaml(group, names, "storybench: GLGE tasks of this build")
    if tasks:
        files[f"{common.FOLDER}/utils.py"] = common.utils_source()
    others = sorted(t for t in stats.get("glge", {}) if t not in GLGE_METRICS)
    notes = [
        "The test set is the same in every level; a level's task draws its few-shot examples "
        "(`--num_fewshot K`) from that level's training set.",
        "Scored with GLGE's official metrics as `pipelines.evaluate --compat original` computes them "
        "(storybench must be installed where lm_eval runs; squadqg/msqg's METEOR needs Java).",
    ]
    if others:
        notes.append(f"No harness task for {', '.join(others)}: not a GLGE task with a GLGE metric.")
    return files, common.summary(groups, "OUT", notes, reads="this folder's `.src`/`.tgt` line files")
