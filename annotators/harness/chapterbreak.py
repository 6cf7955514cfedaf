"""ChapterBreak's lm-evaluation-harness tasks (`OUT/lm_eval/`).

Suffix identification as the paper runs it (ChapterBreak section 2): the prefix is the
context, the gold suffix and its five negatives are the choices (gold first), and an example
is right when the model gives the gold the highest log-likelihood P(s+|c). The harness's
`acc` takes the first of equal maxima, so with the gold first a tie counts as correct, as
storybench's scorer (`pipelines.evaluate --task chapterbreak`) and the original evaluation
count it. The paper reports PG-19 and AO3 apart and per prefix length, so there is one task
per source and prefix length built: `storybench_chapterbreak_{source}_ctx_{N}` (chapter
boundaries, group `storybench_chapterbreak`) and, for the appendix subsets,
`storybench_chapterbreak_{source}_{cause|dialogue}_ctx_{N}` (groups
`storybench_chapterbreak_cause`, `storybench_chapterbreak_dialogue`). Each reads the rows of
its source, boundary type and prefix length from the examples table (parquet `filters`).

A prefix that ends a chapter ends without a line break, so a paragraph break ("\\n\\n") is put
between it and the suffixes; a subset prefix already ends with the space or break before its
suffix.
"""

from __future__ import annotations

from annotators.harness import common

GROUP = "storybench_chapterbreak"
BOUNDARIES = ("chapter", "cause", "dialogue")
SOURCES = ("pg19", "ao3")
COLUMNS = ["example_id", "book_id", "source", "boundary", "prefix", "gold", "negatives", "prefix_length"]
PROMPT = [
    "output_type: multiple_choice",
    "doc_to_text: \"{{prefix}}{{ '' if prefix[-1:].isspace() else '\\n\\n' }}\"",
    'doc_to_choice: "{{ [gold] + negatives }}"',
    "doc_to_target: 0",
    'target_delimiter: ""',
]


def group_name(boundary: str) -> str:
    return GROUP if boundary == "chapter" else f"{GROUP}_{boundary}"


def task_name(source: str, boundary: str, length: int) -> str:
    middle = source if boundary == "chapter" else f"{source}_{boundary}"
    return f"{GROUP}_{middle}_ctx_{length}"


def task_yaml(source: str, boundary: str, length: int) -> str:
    title = "chapter boundaries" if boundary == "chapter" else f"the {boundary} subset (appendix A)"
    extra = [
        "  columns: [" + ", ".join(common.q(c) for c in COLUMNS) + "]",
        "  filters:",
        f'    - ["source", "==", {common.q(source)}]',
        f'    - ["boundary", "==", {common.q(boundary)}]',
        f'    - ["prefix_length", "==", {length}]',
    ]
    lines = [
        f"# storybench ChapterBreak, {source}, {title}, prefixes of {length} tokens: which of the gold "
        "suffix (first) and its 5 negatives has the highest log-likelihood; accuracy, ties correct.",
        f"task: {task_name(source, boundary, length)}",
    ]
    lines += common.dataset_lines({"test": "../examples/*.parquet"}, extra)
    lines += ["test_split: test"] + PROMPT + ["metric_list:"] + common.metric_yaml("acc")
    return "\n".join(lines + ["metadata:", "  version: 1.0"]) + "\n"


def built(stats: dict) -> list[tuple[str, str, int]]:
    """(source, boundary, prefix length) of every task: the sources and boundary types with
    examples (stats' Table 4) at every prefix length built."""
    table4 = stats.get("chapterbreak", {}).get("table4_examples", {})
    lengths = stats.get("config", {}).get("examples", {}).get("prefix_lengths", [])
    return [
        (source, boundary, length)
        for boundary in BOUNDARIES
        for source in SOURCES
        if table4.get(source, {}).get(boundary, {}).get("examples", 0) > 0
        for length in lengths
    ]


def attachments(stats: dict) -> tuple[dict[str, str], dict]:
    """({path under the output: text}, stats.json's `lm_eval`) of a ChapterBreak build."""
    tasks = built(stats)
    files = {f"{common.FOLDER}/{task_name(*t)}.yaml": task_yaml(*t) for t in tasks}
    groups: dict[str, list[str]] = {}
    for source, boundary, length in tasks:
        groups.setdefault(group_name(boundary), []).append(task_name(source, boundary, length))
    for group, names in groups.items():
        files[f"{common.FOLDER}/{group}.yaml"] = common.group_yaml(
            group, names, "storybench: ChapterBreak tasks of this build"
        )
    if tasks:
        files[f"{common.FOLDER}/utils.py"] = common.utils_source()
    notes = [
        "Accuracy (`acc`) per source and prefix length, as the paper reports it; the choices are "
        "the gold suffix and its negatives after the prefix, scored by the model's log-likelihood; "
        "a tie with the gold counts as correct.",
        "Prefixes are up to N tokens of the build's tokenizer (stats.json); a model with a shorter "
        "window sees the prefix cut from the left (the harness's `max_length`).",
        "Replace MODEL with a Hugging Face model name or folder; `--model local-completions` or `vllm` work as well.",
    ]
    return files, common.summary(groups, "OUT", notes)
