"""Reading and checking tasks in the GLGE layout (PEERS.md 3.2; GLGE paper section 2.4).

`{task}_data/org_data/{train,dev,test}.{src,tgt}`: one example per line, src and tgt aligned.
A line is the bytes up to each b"\\n"; a final line without a newline still counts, and a
trailing newline does not add an empty line. A broken task (missing split, empty file,
bytes that are not UTF-8, src/tgt line counts that differ) is a `Drop` naming file and
line (codes in `annotators.glge.reasons`), so the job writes nothing for it. LOT's PlotCom
and OutGen tables become tasks too (`lot_task`), serialised as stated in `serialise_lot_row`.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from typing import Any

from annotators.core.longlm import one_line, outgen_source_target
from annotators.core.outcome import Drop
from schemas.glge import FILES, SIDES, SPLITS, GlgeTask, LotRow, LotTable, SrcTgt

LOT_SPLITS = {"train": "train", "val": "dev", "test": "test"}
LOT_FIELDS = {"plotcom": ("story", "plot"), "outgen": ("title", "outline", "story")}


def split_lines(data: bytes) -> list[bytes]:
    """The lines of a file without their b"\\n" (a b"\\r" before it is kept)."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def iter_lines(data: bytes) -> Iterator[bytes]:
    """`split_lines(data)` one line at a time, without a list of them all."""
    for line in io.BytesIO(data):
        yield line[:-1] if line.endswith(b"\n") else line


def line_count(data: bytes) -> int:
    """`len(split_lines(data))`, counted without splitting."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def line_text(line: bytes) -> str:
    """A line as text for scoring (already checked to be UTF-8; a CR and a BOM are dropped)."""
    return line.rstrip(b"\r").decode("utf-8").lstrip("\ufeff")


def _first_non_utf8(name: str, lines: Iterable[bytes]) -> Drop | None:
    """The first line that is not UTF-8, as a Drop naming file, line, column and byte."""
    for number, line in enumerate(lines, start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as exc:
            byte = line[exc.start : exc.start + 1].hex()
            return Drop(
                "not_utf8", f"{name} line {number}: byte 0x{byte} at column {exc.start + 1} is not UTF-8 ({exc.reason})"
            )
    return None


def check_task(task: GlgeTask) -> GlgeTask | Drop:
    """The task unchanged if all six files are present, non-empty, UTF-8 and aligned."""
    for key in FILES:
        if task.files.get(key) is None:
            return Drop(
                "missing_split", f"{task.names[key]}: file not found (task {task.task} needs {', '.join(FILES)})"
            )
        if not task.files[key]:
            return Drop("empty_file", f"{task.names[key]} line 1: file is empty")
    for key in FILES:  # a file's lines one at a time: a list of every file's lines held 2x the task
        bad = _first_non_utf8(task.names[key], iter_lines(task.files[key]))
        if bad:
            return bad
    for split in SPLITS:
        src, tgt = (f"{split}.{side}" for side in SIDES)
        n_src, n_tgt = line_count(task.files[src]), line_count(task.files[tgt])
        if n_src != n_tgt:
            longer = src if n_src > n_tgt else tgt
            return Drop(
                "line_count_mismatch",
                f"{task.names[src]} has {n_src} lines but {task.names[tgt]} has {n_tgt}; "
                f"{task.names[longer]} line {min(n_src, n_tgt) + 1} has no partner",
            )
    return task


def glge_task(task: str, files: dict[str, bytes | None], prefix: str = "") -> GlgeTask | Drop:
    """A checked task from raw file bytes (None = file absent)."""
    names = {key: f"{prefix}{task}_data/org_data/{key}" for key in FILES}
    return check_task(GlgeTask(task, "en", dict(files), names, origin="glge"))


# ----------------------------------------------------------------------------- LOT tables
def serialise_lot_row(kind: str, row: dict[str, Any]) -> SrcTgt:
    """(src, tgt) of a LOT row. PlotCom: story with <MASK> -> plot. OutGen: exactly LongLM's
    pair (PEERS.md 1.4; `annotators.core.longlm`): `title#phrase1#...#phraseK<extra_id_1>` ->
    `<extra_id_1>` + story. Line breaks inside a field (any `str.splitlines()` splits at:
    `longlm.one_line`) become spaces so each example stays on one line."""
    if kind == "plotcom":
        src, tgt = row["story"], row["plot"]
    else:
        src, tgt = outgen_source_target(row)
    return SrcTgt(one_line(src), one_line(tgt))


def _field_drop(field: str, value: Any, ok: bool, text: str) -> Drop | None:
    """missing_field when absent (None), bad_field_type when present with the wrong type."""
    if ok:
        return None
    return Drop("missing_field" if value is None else "bad_field_type", text)


def _row_drop(kind: str, row: dict[str, Any]) -> Drop | None:
    """Why a LOT row cannot be serialised (the detail lacks the file and row), or None."""
    split = row.get("split")
    if split not in LOT_SPLITS:
        return Drop(
            "missing_field" if split is None else "unknown_split", f"split {split!r} is not one of {sorted(LOT_SPLITS)}"
        )
    drop = _field_drop(
        "example_id",
        row.get("example_id"),
        isinstance(row.get("example_id"), str),
        "example_id is missing or not a string",
    )
    for field in LOT_FIELDS[kind]:
        value = row.get(field)
        ok = (
            isinstance(value, list) and all(isinstance(v, str) for v in value)
            if field == "outline"
            else isinstance(value, str)
        )
        drop = drop or _field_drop(field, value, ok, f"field {field!r} is missing or has the wrong type")
    return drop


def parse_parquet_rows(name: str, data: bytes) -> list[dict[str, Any]] | Drop:
    """Rows of one parquet file's bytes (read by the job), or a Drop naming the file.

    A LOT task is one element (scoring needs all its rows), so the job reads each file's bytes
    whole rather than streaming rows with `pipelines.engine.ReadParquetRows`.
    """
    import pyarrow.parquet as pq

    try:
        return pq.read_table(io.BytesIO(data)).to_pylist()
    except Exception as exc:  # truncated or non-parquet bytes
        return Drop("unreadable_file", f"{name}: not a readable parquet file ({exc})"[:1000])


def _lot_examples(kind: str, tables: Iterable[LotTable]) -> dict[str, list[LotRow]] | Drop:
    """Checked rows per GLGE split (val -> dev); the first bad row is a Drop naming file and row."""
    by_split: dict[str, list[LotRow]] = {s: [] for s in SPLITS}
    for table in sorted(tables, key=lambda t: t.path):
        for number, row in enumerate(table.rows, start=1):
            drop = _row_drop(kind, row)
            if drop:
                return Drop(drop.reason, f"{table.path} row {number}: {drop.detail}")
            by_split[LOT_SPLITS[row["split"]]].append(LotRow(row["example_id"], table.path, number, row))
    return by_split


def _lines_file(lines: Iterable[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode("utf-8")


def lot_task(task: str, kind: str, tables: Iterable[LotTable]) -> GlgeTask | Drop:
    """A LOT PlotCom/OutGen table as a GLGE task: val -> dev, rows in example_id order."""
    tables = list(tables)
    folder = min((t.path for t in tables), default=None)
    folder = folder.rsplit("/", 1)[0] if folder else kind
    by_split = _lot_examples(kind, tables)
    if isinstance(by_split, Drop):
        return by_split
    for lot_split, split in LOT_SPLITS.items():
        if not by_split[split]:
            return Drop("missing_split", f"{folder}/*.parquet: no rows with split {lot_split!r}")
    files: dict[str, bytes] = {}
    for split in SPLITS:
        ordered = sorted(by_split[split], key=lambda r: (r.example_id, r.table, r.row_number))
        pairs = [serialise_lot_row(kind, r.row) for r in ordered]
        files[f"{split}.src"] = _lines_file(p.src for p in pairs)
        files[f"{split}.tgt"] = _lines_file(p.tgt for p in pairs)
    names = {key: f"{folder}/*.parquet [{key}]" for key in FILES}
    return check_task(GlgeTask(task, "zh", files, names, origin="lot"))
