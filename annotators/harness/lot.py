"""LOT's lm-evaluation-harness tasks (`OUT/lm_eval/`, group `storybench_lot`).

The prompts are LongLM's inputs (LOT section 5.2, PEERS.md 1.4; annotators.core.longlm writes
the same strings as `.source` files), written as Jinja templates in the task files:

- ClozeT: `plot0<extra_id_1>plot1<extra_id_2>` + the story with `<mask>` written `<sep>` +
  `<mask>`; the choices are the two sentinels, the answer the right candidate's
  (multiple_choice: the model's log-likelihood of each sentinel after the input).
- SenPos: the removed sentence + `<sep>` + the story with its k-th `[MASK]` written
  `<extra_id_k>` + `<mask>`; the choices are `<extra_id_1>`..`<extra_id_n>`, the answer
  `<extra_id_label>`.
- PlotCom: LongLM's text infilling (LOT section 4): the story with `<MASK>` written
  `<extra_id_1>`, then `<extra_id_1>` again, where the output's span starts; the model writes
  the missing sentence (generate_until).
- OutGen: `title#phrase1#...#phrase8<extra_id_1>` (a `#` inside a field written `＃`); the
  model writes the story.

In the ClozeT, SenPos and OutGen prompts a line break inside a field is a space (Jinja's
`' '.join(field.splitlines())`, annotators.core.longlm.one_line), as on the `.source` line:
before, a story holding U+2028 or \x0b gave the model another text than LongLM's input.

Generation follows LOT section 5.2 (top-k sampling, k = 40, temperature 0.7; at most 512
tokens for a story); PlotCom and OutGen are scored with storybench's OutGen metrics
(`utils.py`: what `pipelines.evaluate --compat original` gives). A task is written only when
its table's test split has rows (datasets cannot build an empty split).
"""

from __future__ import annotations

from annotators.core.hf_card import data_files
from annotators.harness import common

GROUP = "storybench_lot"
TASKS = ("clozet", "senpos", "plotcom", "outgen")

PROMPTS = {
    "clozet": [
        "output_type: multiple_choice",
        "doc_to_text: \"{{' '.join(plot0.splitlines())}}<extra_id_1>{{' '.join(plot1.splitlines())}}<extra_id_2>"
        "{{' '.join(story.splitlines()) | replace('<mask>', '<sep>')}}<mask>\"",
        'doc_to_choice: ["<extra_id_1>", "<extra_id_2>"]',
        'doc_to_target: "{{label | int}}"',
        'target_delimiter: ""',
    ],
    "senpos": [
        "output_type: multiple_choice",
        "doc_to_text: \"{{' '.join(sentence.splitlines())}}<sep>"
        "{% for part in ' '.join(story.splitlines()).split('[MASK]') %}{% if not loop.first %}"
        '<extra_id_{{loop.index0}}>{% endif %}{{part}}{% endfor %}<mask>"',
        "doc_to_choice: \"[{% for k in range(1, story.count('[MASK]') + 1) %}'<extra_id_{{k}}>', {% endfor %}]\"",
        'doc_to_target: "{{label - 1}}"',
        'target_delimiter: ""',
    ],
    "plotcom": [
        "output_type: generate_until",
        "doc_to_text: \"{{story | replace('<MASK>', '<extra_id_1>')}}<extra_id_1>\"",
        'doc_to_target: "{{plot}}"',
        'target_delimiter: ""',
        "generation_kwargs:",
        '  until: ["<extra_id_2>", "\\n"]',
        "  max_gen_toks: 128",
        "  do_sample: true",
        "  top_k: 40",
        "  temperature: 0.7",
    ],
    "outgen": [
        "output_type: generate_until",
        'doc_to_text: "{% for field in [title] + outline %}{% if not loop.first %}#{% endif %}'
        "{{' '.join(field.splitlines()) | replace('#', '＃')}}{% endfor %}<extra_id_1>\"",
        'doc_to_target: "{{story}}"',
        'target_delimiter: ""',
        "generation_kwargs:",
        '  until: ["<extra_id_2>", "\\n"]',
        "  max_gen_toks: 512",
        "  do_sample: true",
        "  top_k: 40",
        "  temperature: 0.7",
    ],
}

TITLES = {
    "clozet": "LOT ClozeT: which of two candidates fills the story's <mask> (LOT section 3.1); accuracy",
    "senpos": "LOT SenPos: at which [MASK] the removed sentence goes (LOT section 3.2); accuracy",
    "plotcom": "LOT PlotCom: write the story's missing sentence (LOT section 3.3); BLEU-1..4, distinct-1..4",
    "outgen": "LOT OutGen: write the story of a title and outline (LOT section 3.4); "
    "BLEU-1..4, distinct-1..4, coverage, order",
}


def task_name(task: str) -> str:
    return f"{GROUP}_{task}"


def _metrics(task: str) -> list[str]:
    if task in ("clozet", "senpos"):
        return ["metric_list:"] + common.metric_yaml("acc")
    from annotators.harness.task_utils import GENERATION_METRICS

    lines = ["process_results: !function utils.generation_results", "metric_list:"]
    for metric in GENERATION_METRICS[task]:
        lines += common.metric_yaml(metric, f"!function utils.{metric.replace('-', '_')}")
    return lines


def task_yaml(task: str, splits: dict[str, int]) -> str:
    """One task file; `splits`: the table's rows per split (test must have rows)."""
    files = {split: f"../{path}" for split, path in data_files(task, splits)}
    lines = [f"# storybench {TITLES[task]}.", f"task: {task_name(task)}"]
    lines += common.dataset_lines(files)
    if "train" in files:
        lines += ["training_split: train", "fewshot_split: train"]
    lines += ["test_split: test"] + PROMPTS[task] + _metrics(task)
    return "\n".join(lines + ["metadata:", "  version: 1.0"]) + "\n"


def tasks_written(stats: dict) -> list[str]:
    splits = stats.get("table_splits", {})
    return [t for t in TASKS if splits.get(t, {}).get("test", 0) > 0]


def attachments(stats: dict) -> tuple[dict[str, str], dict]:
    """({path under the output: text}, stats.json's `lm_eval`) of a LOT build."""
    tasks = tasks_written(stats)
    files = {f"{common.FOLDER}/{task}.yaml": task_yaml(task, stats["table_splits"][task]) for task in tasks}
    groups = {GROUP: [task_name(t) for t in tasks]} if tasks else {}
    if tasks:
        files[f"{common.FOLDER}/{GROUP}.yaml"] = common.group_yaml(
            GROUP, groups[GROUP], "storybench: the LOT tasks of this build"
        )
        files[f"{common.FOLDER}/utils.py"] = common.utils_source()
    missing = [t for t in TASKS if t not in tasks]
    notes = [
        "ClozeT and SenPos: multiple choice by log-likelihood (`acc`) over LongLM's inputs "
        "(the sentinels `<extra_id_k>` are the choices); PlotCom and OutGen: generation "
        "(top-k 40, temperature 0.7 as LOT 5.2; `--gen_kwargs do_sample=False` for greedy) scored "
        "with storybench's OutGen metrics (`pipelines.evaluate --compat original`), which need "
        "storybench installed where lm_eval runs.",
        "SenPos test rows that nobody reviewed yet are scored too (the table's `reviewed` column).",
        "Replace MODEL with a Hugging Face model name or folder; `--model local-completions` or `vllm` work as well.",
    ]
    if missing:
        notes.append(f"No task for {', '.join(missing)}: no test rows in this build.")
    return files, common.summary(groups, "OUT", notes)
