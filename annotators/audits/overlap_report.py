"""Per-task overlap figures and their markdown in the layout of LOT Table 14.

Percent = sum o / sum n, "# 8-grams" = sum o, "# Exam" = examples with o > 0,
"# Exam >10%" = examples with ratio > 0.1, "Max Percent" = the largest ratio.
Every figure is order-independent (integer sums, a max), so runners agree byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from schemas.lot import TASKS

TASK_TITLES = {"clozet": "ClozeT", "senpos": "SenPos", "plotcom": "PlotCom", "outgen": "OutGen"}


def summarize(task: str, split: str, reference: str, rows: Iterable[dict], over_threshold: float = 0.1) -> dict:
    """One summary row (Table 14 column) from the example rows of one task and split."""
    rows = list(rows)
    total_n = sum(r["n"] for r in rows)
    total_o = sum(r["o"] for r in rows)
    return {
        "task": task,
        "split": split,
        "reference": reference,
        "n_examples": len(rows),
        "ratio": total_o / total_n if total_n else 0.0,
        "ngrams": total_o,
        "examples": sum(1 for r in rows if r["o"] > 0),
        "examples_over_10pct": sum(1 for r in rows if r["ratio"] > over_threshold),
        "max_ratio": max((r["ratio"] for r in rows), default=0.0),
        "total_ngrams": total_n,
    }


def _pct(x: float) -> str:
    return f"{100 * x:.2f}%"


def _task_order(task: str) -> tuple:
    return (TASKS.index(task), "") if task in TASKS else (len(TASKS), task)


def table14_markdown(summaries: Sequence[dict], n: int = 8, *, empty_references: Sequence[str] = ()) -> str:
    """Markdown blocks in Table 14's layout: one block per (split, reference kind). A block
    audited against a reference in `empty_references` (no readable row) says that its figures
    compared against nothing: 0.00% there is no finding."""
    blocks: dict[tuple[str, str], list[dict]] = {}
    for row in summaries:
        kind = "train" if row["reference"].endswith("/train") else row["reference"]
        blocks.setdefault((row["split"], kind), []).append(row)
    lines = [f"# {n}-gram overlap (LOT Table 14 layout)", ""]
    if not blocks:
        lines += ["No test examples were audited (see rejects/).", ""]
    for (split, kind), rows in sorted(blocks.items()):
        rows = sorted(rows, key=lambda r: _task_order(r["task"]))
        title = "the Training Sets (each task's own train split)" if kind == "train" else f"`{kind}`"
        head = [TASK_TITLES.get(r["task"], r["task"]) for r in rows]
        lines += [f"## {split} split: overlap with {title}", ""]
        empty = sorted({r["reference"] for r in rows if r["reference"] in empty_references})
        if empty:
            lines += [
                f"**The reference {', '.join(f'`{e}`' for e in empty)} has no readable rows (see rejects/): "
                "nothing was compared, so these figures say nothing about overlap.**",
                "",
            ]
        lines += [
            "| Tasks | " + " | ".join(head) + " |",
            "|---|" + "---:|" * len(rows),
        ]
        table = [
            ("# Examples", lambda r: f"{r['n_examples']:,}"),
            ("Percent", lambda r: _pct(r["ratio"])),
            (f"# {n}-grams", lambda r: f"{r['ngrams']:,}"),
            ("# Exam", lambda r: f"{r['examples']:,}"),
            ("# Exam >10%", lambda r: f"{r['examples_over_10pct']:,}"),
            ("Max Percent", lambda r: _pct(r["max_ratio"])),
        ]
        for label, fmt in table:
            lines.append(f"| {label} | " + " | ".join(fmt(r) for r in rows) + " |")
        lines.append("")
    return "\n".join(lines)


def split_keyed(row: dict) -> tuple[tuple[str, str], dict]:
    """((task, split), row): the examples table is summarised per (task, split). A plain tuple
    of strings, which Beam's shuffle encodes deterministically as it is (a NamedTuple key
    makes Beam warn that it falls back to pickling)."""
    return (row["task"], row["split"]), row


def summarize_split(
    grouped: tuple[tuple[str, str], Iterable[dict]], references: dict[str, str], threshold: float
) -> dict:
    """`summarize` of one ((task, split), its rows) group, against the task's reference."""
    (task, split), rows = grouped
    return summarize(task, split, references[task], rows, threshold)


OVER_FIELDS = ("task", "split", "example_id", "ratio")


def over_row(row: dict) -> dict:
    """The over-threshold table's row of an examples-table row."""
    return {k: row[k] for k in OVER_FIELDS}


def example_key(row: dict) -> tuple[str, str, str]:
    return row["task"], row["split"], row["example_id"]


def summary_key(row: dict) -> tuple[str, str]:
    return row["task"], row["split"]


def sorted_summaries(rows: Iterable[dict]) -> list[dict]:
    return sorted(rows, key=summary_key)


def over_ids_tsv(rows: Iterable[dict]) -> str:
    """over_10pct.tsv: task, split and example id of every example over the threshold, sorted."""
    return "".join(f"{r['task']}\t{r['split']}\t{r['example_id']}\n" for r in sorted(rows, key=example_key))
