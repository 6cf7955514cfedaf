"""Draw a job's figures from its written tables (annotators/core/figures.py says what and how).

Runs in the report step, after every table is written: each figure reads only its columns,
one row group at a time, from local or remote storage (FileSystems), and writes
`figures/<name>.png` beside the tables. A figure whose tables are missing is listed as not
drawn, with the reason; it never fails the job.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pyarrow.compute as pc
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems

from annotators.core.figures import Counts, Figure, count_values, draw, panels
from pipelines.engine.paths import join, table_files, write_bytes

LOG = logging.getLogger("storybench")


def figure_counts(output: str, figure: Figure) -> Counts:
    """Counts of the figure's value per (panel, line), read from the written tables."""
    counts: Counts = {}
    source = figure.value.split(":", 1)[-1]
    for table in figure.tables:
        for path in table_files(join(output, table)):
            with FileSystems.open(path, compression_type="uncompressed") as f:
                parquet = pq.ParquetFile(f)
                for i in range(parquet.num_row_groups):
                    group = parquet.read_row_group(i, columns=figure.columns())
                    for column, wanted in figure.where:
                        group = group.filter(pc.equal(group[column], wanted))
                    values = group[source]
                    if figure.value.startswith("chars:"):
                        values = pc.utf8_length(values)
                    n = group.num_rows
                    lines = group[figure.line].to_pylist() if figure.line else [""] * n
                    if figure.panel:
                        for panel in sorted(set(group[figure.panel].to_pylist())):
                            keep = pc.equal(group[figure.panel], panel)
                            count_values(
                                counts,
                                panel,
                                [line for line, k in zip(lines, keep.to_pylist()) if k],
                                values.filter(keep).to_pylist(),
                            )
                    else:
                        count_values(counts, table, lines, values.to_pylist())
    return counts


def draw_figures(output: str, figures: Sequence[Figure]) -> list[dict]:
    """Draw every figure into `output/figures/`; returns stats["figures"] entries."""
    entries = []
    for figure in figures:
        entry: dict = {"file": figure.file, "title": figure.title, "value": figure.value, "tables": list(figure.tables)}
        missing = [t for t in figure.tables if not table_files(join(output, t))]
        if missing:
            entry["missing"] = f"no table {', '.join(missing)} in this output"
            entries.append(entry)
            continue
        counts = figure_counts(output, figure)
        write_bytes(join(output, figure.file), draw(figure, counts))
        entry["panels"] = [
            {"panel": p, "lines": [{"line": line, "summary": s} for line, s in lines]}
            for p, lines in panels(figure, counts)
        ]
        entries.append(entry)
    return entries
