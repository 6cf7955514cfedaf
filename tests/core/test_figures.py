"""Card figures: counting, binning, summaries, deterministic PNGs, and reading written tables."""

from __future__ import annotations

import collections
import json
import zlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from annotators.core.card import complete_card
from annotators.core.figures import Figure, bin_edges, binned, card_section, count_values, draw, panels, summary

LENGTHS = Figure("lengths", "Story length", "characters", ("clozet", "outgen"), "chars:story", line="split")


def png_chunks(data: bytes) -> list[bytes]:
    """The chunk types of a PNG, in order."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    out, at = [], 8
    while at < len(data):
        size = int.from_bytes(data[at : at + 4], "big")
        out.append(data[at + 4 : at + 8])
        at += 12 + size
    return out


def test_summary_is_exact_on_counts():
    counts = collections.Counter({3: 2, 10: 1, 7: 1})  # 3 3 7 10
    assert summary(counts) == {"n": 4, "min": 3, "median": 3, "mean": 5.75, "max": 10}
    assert summary(collections.Counter({5: 1}))["median"] == 5
    assert summary({}) == {"n": 0}


def test_bins_small_integer_ranges_are_unit_bins_else_equal_width():
    assert bin_edges([2, 4]) == [1.5, 2.5, 3.5, 4.5]
    edges = bin_edges([0, 1000], bins=10)
    assert len(edges) == 11 and edges[0] == 0 and edges[-1] == 1000
    assert binned(collections.Counter({0: 1, 999: 2, 1000: 3, 500: 4}), edges) == [1, 0, 0, 0, 0, 4, 0, 0, 0, 5]
    assert bin_edges([0.25, 0.25]) == [-0.25, 0.75]  # one value: one bin around it


def test_count_values_skips_nulls_and_rounds_floats():
    counts: dict = {}
    count_values(counts, "t", ["train", "train", "test", "test"], [0.123456, None, float("nan"), 0.5])
    assert counts == {("t", "train"): {0.1235: 1}, ("t", "test"): {0.5: 1}}


def test_lines_follow_split_order_and_panels_table_order():
    counts: dict = {}
    count_values(counts, "outgen", ["test", "val", "train"], [1, 2, 3])
    count_values(counts, "clozet", ["train"], [5])
    layout = panels(LENGTHS, counts)
    assert [p for p, _ in layout] == ["clozet", "outgen"]
    assert [line for line, _ in layout[1][1]] == ["train", "val", "test"]


def test_png_is_deterministic_and_carries_no_software_or_time():
    counts: dict = {}
    count_values(counts, "clozet", ["train"] * 50 + ["test"] * 5, list(range(200, 250)) + [210, 220, 230, 240, 250])
    first, again = draw(LENGTHS, counts), draw(LENGTHS, dict(counts))
    assert first == again
    chunks = png_chunks(first)
    assert b"tIME" not in chunks and chunks[-1] == b"IEND"
    assert b"matplotlib" not in first and b"Software" not in first
    other: dict = {}
    count_values(other, "clozet", ["train"] * 50, list(range(300, 350)))
    assert draw(LENGTHS, other) != first  # the counts are what is drawn


def test_png_has_pixels_for_each_line():
    """The image is not blank: decoded rows hold more than the background colour."""
    counts: dict = {}
    count_values(counts, "clozet", ["train"] * 30, list(range(30)))
    data = draw(LENGTHS, counts)
    at, idat = 8, b""
    while at < len(data):
        size = int.from_bytes(data[at : at + 4], "big")
        if data[at + 4 : at + 8] == b"IDAT":
            idat += data[at + 8 : at + 8 + size]
        at += 12 + size
    raw = zlib.decompress(idat)
    assert len(set(raw)) > 10


def test_card_section_lists_each_line_and_links_the_png():
    counts: dict = {}
    count_values(counts, "clozet", ["train", "train", "val"], [200, 300, 250])
    entry = {
        "file": LENGTHS.file,
        "title": LENGTHS.title,
        "panels": [
            {"panel": p, "lines": [{"line": line, "summary": s} for line, s in lines]}
            for p, lines in panels(LENGTHS, counts)
        ],
    }
    text = card_section([entry, {"file": "figures/x.png", "title": "X", "missing": "no table x in this output"}])
    assert "![Story length](figures/lengths.png)" in text
    assert "| clozet | train | 2 | 200 | 200 | 250 | 300 |" in text
    assert "| clozet | val | 1 | 250 | 250 | 250 | 250 |" in text
    assert "Not drawn: no table x in this output." in text and "figures/x.png" not in text


def test_complete_card_adds_figures_licence_and_citation():
    text = complete_card("# card\n", {"job": "chapterbreak", "figures": []})
    assert text.startswith("# card\n\n## Licence") and "public domain" in text
    assert "@inproceedings{sun2022chapterbreak" in text
    assert "## Citation" not in complete_card("# c\n", {"job": "evaluate"})


@pytest.mark.slow
def test_figures_are_read_from_written_tables(tmp_path):
    from pipelines.engine.figures import draw_figures, figure_counts

    schema = pa.schema([("split", pa.string()), ("story", pa.string()), ("status", pa.string())])
    for table, rows in {
        "clozet": [("train", "一二三", "ok"), ("test", "一二三四五", "ok")],
        "outgen": [("train", "一", "ok"), ("train", "一二", "rejected")],
    }.items():
        (tmp_path / table).mkdir()
        data = pa.table({k: [r[i] for r in rows] for i, k in enumerate(schema.names)}, schema=schema)
        pq.write_table(data, tmp_path / table / "train-00000-of-00001.parquet", row_group_size=1)
    kept = Figure(
        "ok_lengths",
        "Lengths",
        "characters",
        ("clozet", "outgen"),
        "chars:story",
        line="split",
        where=(("status", "ok"),),
    )
    by_status = Figure("by_status", "Lengths", "characters", ("outgen",), "chars:story", panel="status")
    assert figure_counts(str(tmp_path), kept) == {
        ("clozet", "train"): {3: 1},
        ("clozet", "test"): {5: 1},
        ("outgen", "train"): {1: 1},
    }
    assert figure_counts(str(tmp_path), by_status) == {("ok", ""): {1: 1}, ("rejected", ""): {2: 1}}
    missing = Figure("m", "M", "x", ("nothing",), "chars:story")
    entries = draw_figures(str(tmp_path), [kept, missing])
    assert (tmp_path / "figures" / "ok_lengths.png").read_bytes()[:4] == b"\x89PNG"
    assert entries[1] == {
        "file": "figures/m.png",
        "title": "M",
        "value": "chars:story",
        "tables": ["nothing"],
        "missing": "no table nothing in this output",
    }
    assert json.dumps(entries)  # stats.json holds them
