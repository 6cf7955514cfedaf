"""What every `lm_eval/` folder shares: YAML text, the group file, `utils.py`, the summary
stats.json keeps and the card's section.

A folder is a dict {relative path: text} a job writes beside its tables (JobReport's
`attachments`); it is made from the job's stats alone (which tables and splits have rows,
which prefix lengths were built), so the same build gives the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

FOLDER = "lm_eval"
UTILS = Path(__file__).with_name("task_utils.py")
HARNESS = "lm-eval 0.4.13"


def q(value) -> str:
    """A YAML scalar: JSON's double-quoted string is valid YAML (non-ASCII kept as is)."""
    return json.dumps(value, ensure_ascii=False)


def data_files_yaml(files: dict[str, str]) -> list[str]:
    """`dataset_kwargs.data_files` lines: split -> pattern relative to the lm_eval folder."""
    return ["  data_files:"] + [f"    {split}: {q(path)}" for split, path in files.items()]


def dataset_lines(files: dict[str, str], extra: list[str] = ()) -> list[str]:
    """The dataset part of a task: the built parquet files, read by `utils.load_tables`
    (paths relative to this folder, so lm_eval works from any working directory)."""
    return (
        ["dataset_path: parquet", "dataset_kwargs:"]
        + data_files_yaml(files)
        + list(extra)
        + ["custom_dataset: !function utils.load_tables"]
    )


def metric_yaml(name: str, aggregation: str = "mean") -> list[str]:
    return [f"  - metric: {name}", f"    aggregation: {aggregation}", "    higher_is_better: true"]


def group_yaml(group: str, tasks: list[str], comment: str) -> str:
    lines = [f"# {comment}", f"group: {group}", "task:"] + [f"  - {t}" for t in tasks]
    return "\n".join(lines + ["metadata:", "  version: 1.0"]) + "\n"


def utils_source() -> str:
    return UTILS.read_text(encoding="utf-8")


def command(output_hint: str, group: str) -> str:
    return f"lm_eval run --model hf --model_args pretrained=MODEL --include_path {output_hint}/{FOLDER} --tasks {group}"


READS = "this folder's parquet files"  # what the tasks read, unless a build says otherwise


def summary(groups: dict[str, list[str]], output_hint: str, notes: list[str], reads: str = READS) -> dict:
    """stats.json's `lm_eval`: the folder, each group with its tasks, the command, what the
    tasks read (`reads`)."""
    first = next(iter(groups)) if groups else ""
    info = {
        "folder": FOLDER,
        "harness": HARNESS,
        "groups": groups,
        "command": command(output_hint, first) if groups else "",
        "notes": notes,
    }
    if reads != READS:  # named only where it is not the tables (GLGE's line files)
        info["reads"] = reads
    return info


def card_section(stats: dict) -> str:
    """The card's "Scoring a model" section from stats.json's `lm_eval` ("" without one)."""
    info = stats.get("lm_eval")
    if not info:
        return ""
    lines = ["## Scoring a model (lm-evaluation-harness)", ""]
    if not info["groups"]:  # the notes say why when they can (a GLGE build of tasks GLGE has no metric for)
        why = info["notes"][-1] if info.get("notes") and info["notes"][-1].startswith("No harness task") else ""
        why = why[:1].lower() + why[1:]
        return "\n".join(lines + [f"No task could be written: {why or 'no table has a test split with rows.'}", ""])
    reads = info.get("reads", READS)
    lines += [
        f"`{info['folder']}/` holds lm-evaluation-harness tasks ({info['harness']}, which `make setup` "
        f"installs) that read {reads} by paths relative to the task files, so "
        "they run from any directory and after the folder moves. With OUT this folder (e.g. "
        "`output/lot`):",
        "",
        "```",
        info["command"],
        "```",
        "",
        "(`--model hf` also needs torch and transformers: `pip install 'lm-eval[hf]'`.)",
        "",
        "| group | tasks |",
        "|---|---|",
    ]
    lines += [f"| `{g}` | {', '.join(f'`{t}`' for t in tasks)} |" for g, tasks in info["groups"].items()]
    lines += [""] + [f"- {note}" for note in info["notes"]]
    return "\n".join(lines) + "\n"
