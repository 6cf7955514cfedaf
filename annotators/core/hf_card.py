"""Hugging Face dataset cards: the YAML front matter of an output folder's README.md.

`load_dataset(OUTPUT_FOLDER, CONFIG)` reads a job's tables through it: one config per table,
`data_files` per split (`<table>/train-*.parquet`, `validation-*`, `test-*`, as WriteTable
names a table's per-split files; a table without splits is one `train` split). A split with
no rows is left out of `data_files`: datasets 5.2 cannot build a 0-row split
("Instruction ... corresponds to no data", huggingface/datasets#8401); an empty table keeps
its config and loads with `streaming=True` as 0 rows.

Metadata per job: languages, task categories, the paper's citation, the source datasets;
`license: other`, because the texts keep their sources' licences (rows carry them where the
input did). The card text itself (CARD.md) follows the front matter.
"""

from __future__ import annotations

import json

SPLIT_ORDER = ("train", "validation", "test")

CITATIONS = {
    "lot": """@article{guan2022lot,
  title = {{LOT}: A Story-Centric Benchmark for Evaluating {C}hinese Long Text Understanding and Generation},
  author = {Guan, Jian and Feng, Zhuoer and Chen, Yamei and He, Ruilin and Mao, Xiaoxi and Fan, Changjie and Huang, Minlie},
  journal = {Transactions of the Association for Computational Linguistics},
  volume = {10},
  pages = {434--451},
  year = {2022}
}""",
    "chapterbreak": """@inproceedings{sun2022chapterbreak,
  title = {{ChapterBreak}: A Challenge Dataset for Long-Range Language Models},
  author = {Sun, Simeng and Thai, Katherine and Iyyer, Mohit},
  booktitle = {Proceedings of the 2022 Conference of the North American Chapter of the Association for Computational Linguistics},
  year = {2022}
}""",
    "glge": """@inproceedings{liu2021glge,
  title = {{GLGE}: A New General Language Generation Evaluation Benchmark},
  author = {Liu, Dayiheng and Yan, Yu and Gong, Yeyun and Qi, Weizhen and Zhang, Hang and Jiao, Jian and Chen, Weizhu and Fu, Jie and Shou, Linjun and Gong, Ming and Wang, Pengcheng and Chen, Jiusheng and Jiang, Daxin and Lv, Jiancheng and Zhang, Ruofei and Wu, Winnie and Zhou, Ming and Duan, Nan},
  booktitle = {Findings of the Association for Computational Linguistics: ACL-IJCNLP 2021},
  year = {2021}
}""",
    "storium": """@inproceedings{akoury2020storium,
  title = {{STORIUM}: A Dataset and Evaluation Platform for Machine-in-the-Loop Story Generation},
  author = {Akoury, Nader and Wang, Shufan and Whiting, Josh and Hood, Stephen and Peng, Nanyun and Iyyer, Mohit},
  booktitle = {Proceedings of the 2020 Conference on Empirical Methods in Natural Language Processing},
  year = {2020}
}""",
}

# job -> (pretty name, languages, task categories, the paper it follows, source datasets)
JOBS = {
    "lot": (
        "LOT (ClozeT, SenPos, PlotCom, OutGen)",
        ["zh"],
        ["text-generation", "multiple-choice"],
        "lot",
        ["original"],
    ),
    "stories": ("Cleaned stories for LOT", ["zh"], ["text-generation"], "lot", ["original"]),
    "crawl": ("Crawled story pages", ["zh"], ["text-generation"], "lot", ["original"]),
    "overlap": ("8-gram overlap audit", ["zh"], ["text-generation"], "lot", ["extended"]),
    "bias": ("Bias baselines audit", ["zh"], ["multiple-choice"], "lot", ["extended"]),
    "chapterbreak": ("ChapterBreak", ["en"], ["multiple-choice", "text-generation"], "chapterbreak", ["original"]),
    "glge": (
        "GLGE difficulty levels",
        ["en", "zh"],
        ["summarization", "question-answering", "text-generation"],
        "glge",
        ["extended"],
    ),
    "storium": ("STORIUM", ["en"], ["text-generation"], "storium", ["original"]),
    "edits": ("STORIUM user edits", ["en"], ["text-generation"], "storium", ["extended"]),
    "evaluate": ("Official-metric scores", ["en", "zh"], ["text-generation"], None, ["extended"]),
}


def size_category(rows: int) -> str:
    for limit, name in (
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
        (10_000_000, "1M<n<10M"),
        (100_000_000, "10M<n<100M"),
    ):
        if rows < limit:
            return name
    return "100M<n<1B"


def _split_key(split: str) -> tuple:
    return (SPLIT_ORDER.index(split) if split in SPLIT_ORDER else len(SPLIT_ORDER), split)


def data_files(table: str, splits: dict[str, int] | None) -> list[tuple[str, str]]:
    """(split, path pattern) of one table's config: its non-empty splits, or one `train`."""
    if splits is None:
        return [("train", f"{table}/*.parquet")]
    found = [(s, f"{table}/{s}-*.parquet") for s in sorted(splits, key=_split_key) if splits[s]]
    return found or [("train", f"{table}/*.parquet")]


def front_matter(stats: dict) -> str:
    """The YAML front matter (between `---` lines) of a job's README.md from its stats."""
    job = stats.get("job", "")
    pretty, languages, tasks, paper, sources = JOBS.get(job, (job, ["en"], ["text-generation"], None, ["original"]))
    tables: dict[str, int] = stats.get("tables", {})
    splits: dict[str, dict[str, int]] = stats.get("table_splits", {})
    q = json.dumps
    lines = [
        "---",
        f"pretty_name: {q(pretty)}",
        "license: other",
        "license_details: the texts keep the licences of their sources (see the card and the rows' licence fields)",
        "language:",
    ] + [f"- {x}" for x in languages]
    lines += ["task_categories:"] + [f"- {t}" for t in tasks]
    lines += ["size_categories:", f"- {size_category(sum(tables.values()))}", "source_datasets:"]
    lines += [f"- {s}" for s in sources]
    lines += ["tags:", "- storybench", f"- {job}", "configs:"]
    for table in sorted(tables):
        lines += [f"- config_name: {q(table)}", "  data_files:"]
        for split, path in data_files(table, splits.get(table)):
            lines += [f"  - split: {q(split)}", f"    path: {q(path)}"]
    if paper:
        lines.append("citation: |")
        lines += [f"  {line}" for line in CITATIONS[paper].splitlines()]
    lines.append("---")
    return "\n".join(lines) + "\n"


# paper -> what the rows' texts are licensed under (they keep their sources' licences).
LICENCES = {
    "lot": "The stories keep the licences of the sites they came from; each stories row carries its "
    "input's `license` and `url` where the input gave them. LOT's own release states no licence.",
    "chapterbreak": "PG-19 books are public domain in the United States (each Project Gutenberg file "
    "carries its licence); AO3 works belong to their authors and are for research use "
    "only: bring your own copies and do not redistribute them.",
    "glge": "Each GLGE task keeps its source dataset's licence (CNN/DailyMail, Gigaword, XSUM, MSNews, "
    "SQuAD 1.1, MSQG, CoQA, PersonaChat; LOT for the Chinese tasks). MSNews and MSQG are "
    "bring-your-own-data.",
    "storium": "STORIUM games are licensed under STORIUM's Data Transfer and Use Agreement, which forbids "
    "redistribution: outputs built from them stay with the research team that obtained them.",
}


def licence_section(stats: dict) -> str:
    """The card's Licence and Citation sections (in CARD.md and so in README.md)."""
    paper = JOBS.get(stats.get("job", ""), (None, None, None, None, None))[3]
    note = LICENCES.get(paper, "The texts keep the licences of their sources.")
    out = [
        "## Licence",
        "",
        f"License: other. {note} storybench's code is Apache-2.0; it adds no licence of its own to the data.",
        "",
    ]
    if paper:
        out += ["## Citation", "", "```bibtex", CITATIONS[paper], "```", ""]
    return "\n".join(out)


def readme(stats: dict, card_text: str) -> str:
    """README.md: the front matter, then the human-readable card (CARD.md, which ends with its
    licence and citation), then how to load it."""
    loading = (
        "\n## Loading\n\n```python\nfrom datasets import load_dataset\n"
        'ds = load_dataset("path/to/this/folder", "<config>")  # a config per table\n```\n'
        "A split with no rows is not listed (datasets cannot build an empty split); an empty "
        "table loads with `streaming=True`. pandas, DuckDB and polars read `<table>/*.parquet`.\n"
    )
    return front_matter(stats) + "\n" + card_text.rstrip("\n") + "\n" + loading
