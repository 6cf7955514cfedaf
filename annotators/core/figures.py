"""Figures for the cards: what a researcher checks first, drawn as deterministic PNGs.

A `Figure` says which column of which written tables to count, split into panels and lines
(one line per split, level or boundary kind). The engine (pipelines/engine/figures.py) reads
only those columns, one row group at a time, into `Counts`: a Counter of values per
(panel, line), so memory grows with the number of distinct values, never with the rows
(integers are counted as they are; floats rounded to `FLOAT_DIGITS` decimals). This module
bins the counts, summarises them and draws them with matplotlib's Agg canvas (headless, no
pyplot state). The PNG carries no timestamp or software tag, so the same counts give the same
bytes on any runner and worker count (with the same matplotlib and FreeType).
"""

from __future__ import annotations

import collections
import dataclasses
import io
import math
from collections.abc import Iterable, Mapping

FLOAT_DIGITS = 4
BINS = 40
# Lines in a panel come in this order (splits, then GLGE levels, then ChapterBreak boundaries);
# other values follow alphabetically.
LINE_ORDER = (
    "train",
    "val",
    "valid",
    "validation",
    "dev",
    "test",
    "easy",
    "medium",
    "medium+",
    "hard",
    "chapter",
    "cause",
    "dialogue",
    "pg19",
    "ao3",
)


@dataclasses.dataclass(frozen=True)
class Figure:
    """One PNG (`figures/<name>.png`) of the distribution of `value` in `tables`.

    `value`: a numeric column, or `chars:<column>` for the length in characters of a string
    column. Panels: one per table, or one per value of `panel` when set. Lines: one per value
    of `line` ("" draws one line). `where`: (column, value) pairs a row must match.
    """

    name: str
    title: str
    xlabel: str
    tables: tuple[str, ...]
    value: str
    line: str = ""
    panel: str = ""
    where: tuple[tuple[str, str], ...] = ()

    @property
    def file(self) -> str:
        return f"figures/{self.name}.png"

    def columns(self) -> list[str]:
        """The columns the figure reads (the value's source, line, panel, filters), in order."""
        wanted = [self.value.split(":", 1)[-1], self.line, self.panel, *(c for c, _ in self.where)]
        return list(dict.fromkeys(c for c in wanted if c))


Counts = dict[tuple[str, str], collections.Counter]


def count_values(counts: Counts, panel: str, lines: Iterable[str], values: Iterable) -> None:
    """Add one batch of rows (`lines[i]`, `values[i]`) of one panel to `counts`; None values
    (a nullable column's nulls) are skipped."""
    for line, value in zip(lines, values):
        if value is None:
            continue
        if isinstance(value, float):
            if math.isnan(value):
                continue
            value = round(value, FLOAT_DIGITS)
        key = (panel, line)
        bucket = counts.get(key)
        if bucket is None:
            bucket = counts[key] = collections.Counter()
        bucket[value] += 1


def _order(value: str) -> tuple:
    return (LINE_ORDER.index(value), "") if value in LINE_ORDER else (len(LINE_ORDER), value)


def summary(counter: Mapping) -> dict:
    """n, min, median (lower), mean and max of counted values."""
    n = sum(counter.values())
    if not n:
        return {"n": 0}
    ordered = sorted(counter)
    half, seen, median = (n - 1) // 2, 0, ordered[0]
    for value in ordered:
        seen += counter[value]
        if seen > half:
            median = value
            break
    mean = sum(v * c for v, c in counter.items()) / n
    return {"n": n, "min": ordered[0], "median": median, "mean": round(mean, 4), "max": ordered[-1]}


def bin_edges(values: Iterable, bins: int = BINS) -> list[float]:
    """Common edges for every line of a panel: unit bins for a small integer range, else
    `bins` equal bins from the smallest to the largest value."""
    values = list(values)
    lo, hi = min(values), max(values)
    if all(isinstance(v, int) for v in values) and hi - lo + 1 <= bins:
        return [lo - 0.5 + i for i in range(hi - lo + 2)]
    if hi == lo:
        return [lo - 0.5, hi + 0.5]
    width = (hi - lo) / bins
    return [lo + i * width for i in range(bins)] + [hi]


def binned(counter: Mapping, edges: list[float]) -> list[int]:
    """Counts per bin (the last bin includes its right edge)."""
    out = [0] * (len(edges) - 1)
    lo, width, last = edges[0], (edges[-1] - edges[0]) / (len(edges) - 1), len(edges) - 2
    for value, count in counter.items():
        out[max(0, min(int((value - lo) / width), last))] += count
    return out


def panels(figure: Figure, counts: Counts) -> list[tuple[str, list[tuple[str, dict]]]]:
    """[(panel, [(line, summary), ...]), ...] in drawing order."""
    names = sorted({p for p, _ in counts}, key=lambda p: (figure.tables.index(p) if p in figure.tables else -1, p))
    return [
        (p, [(line, summary(counts[(p, line)])) for line in sorted({ln for q, ln in counts if q == p}, key=_order)])
        for p in names
    ]


def load_drawing() -> None:
    """Import what `draw` uses (matplotlib's Agg canvas: about 0.6 CPU-s), ahead of time."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: F401
    from matplotlib.figure import Figure as MplFigure  # noqa: F401


def draw(figure: Figure, counts: Counts) -> bytes:
    """The figure as PNG bytes: one panel per table (or `panel` value), one step line per
    `line` value giving each bin's share of that line's rows, so splits of different sizes
    compare; the legend gives each line's n and median."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as MplFigure

    layout = panels(figure, counts)
    n = max(1, len(layout))
    cols = min(n, 2)
    rows = -(-n // cols)
    fig = MplFigure(figsize=(5.2 * cols, 3.4 * rows), dpi=100)
    FigureCanvasAgg(fig)
    fig.suptitle(figure.title, fontsize=11)
    if not layout:
        ax = fig.add_subplot(1, 1, 1)
        ax.text(0.5, 0.5, "no rows", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
    for i, (panel, lines) in enumerate(layout):
        ax = fig.add_subplot(rows, cols, i + 1)
        keys = [(panel, line) for line, _ in lines]
        edges = bin_edges(v for k in keys for v in counts[k])
        for (line, info), key in zip(lines, keys):
            shares = [c / info["n"] for c in binned(counts[key], edges)]
            label = f"{line or 'all'} (n={info['n']:,}, median {_fmt(info['median'])})"
            ax.stairs(shares, edges, label=label, linewidth=1.4)
        ax.set_title(panel, fontsize=10)
        ax.set_xlabel(figure.xlabel, fontsize=9)
        ax.set_ylabel("share of rows", fontsize=9)
        ax.tick_params(labelsize=8)
        ax.legend(fontsize=7, frameon=False)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def _fmt(value) -> str:
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def card_section(entries: list[dict]) -> str:
    """The card's Figures section from stats["figures"] (each: file, title, panels)."""
    if not entries:
        return ""
    out = ["## Figures", ""]
    for entry in entries:
        out += [f"### {entry['title']}", ""]
        if entry.get("missing"):
            out += [f"Not drawn: {entry['missing']}.", ""]
            continue
        out += [f"![{entry['title']}]({entry['file']})", ""]
        out += ["| panel | line | n | min | median | mean | max |", "|---|---|---:|---:|---:|---:|---:|"]
        for panel in entry["panels"]:
            for line in panel["lines"]:
                s = line["summary"]
                cells = [_fmt(s[k]) if k in s else "-" for k in ("min", "median", "mean", "max")]
                out.append(f"| {panel['panel']} | {line['line'] or 'all'} | {s['n']:,} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)
