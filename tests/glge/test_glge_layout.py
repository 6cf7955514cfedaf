"""Reading GLGE-layout and LOT tasks: broken tasks are rejected naming file and line."""

from __future__ import annotations

import io
import pathlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from annotators.core.outcome import Drop
from annotators.glge.layout import glge_task, lot_task, parse_parquet_rows, serialise_lot_row, split_lines
from annotators.glge.levels import GlgeConfig, build_levels, gets_harder, level_files, level_rows
from schemas.glge import FILES, LEVELS_SCHEMA, GlgeTask, LotTable

TINY = pathlib.Path(__file__).parents[1] / "fixtures" / "glge" / "tiny_data" / "org_data"


def tiny_files() -> dict[str, bytes]:
    return {key: (TINY / key).read_bytes() for key in FILES}


@pytest.mark.parametrize(
    "data, lines",
    [
        (b"a\nb\n", [b"a", b"b"]),
        (b"a\nb", [b"a", b"b"]),  # last line without newline still counts
        (b"a\r\n\nb\n", [b"a\r", b"", b"b"]),  # CR kept, empty line is an example
        (b"\n", [b""]),
    ],
)
def test_split_lines(data, lines):
    assert split_lines(data) == lines


def test_good_task_passes_unchanged():
    task = glge_task("tiny", tiny_files())
    assert isinstance(task, GlgeTask) and task.lang == "en"
    assert task.names["train.tgt"] == "tiny_data/org_data/train.tgt"


@pytest.mark.parametrize(
    "key, data, reason, detail",
    [
        ("dev.tgt", None, "missing_split", "in/tiny_data/org_data/dev.tgt: file not found"),
        ("test.src", b"", "empty_file", "in/tiny_data/org_data/test.src line 1: file is empty"),
        (
            "train.tgt",
            b"ok\nfine\nbad \xff here\n",
            "not_utf8",
            "in/tiny_data/org_data/train.tgt line 3: byte 0xff at column 5 is not UTF-8",
        ),
        (
            "train.src",
            b"one\ntwo\n",
            "line_count_mismatch",
            "in/tiny_data/org_data/train.src has 2 lines but in/tiny_data/org_data/train.tgt has 8; "
            "in/tiny_data/org_data/train.tgt line 3 has no partner",
        ),
        ("dev.tgt", "a\nb\nc\n".encode("gbk"), "line_count_mismatch", "dev.tgt line 3 has no partner"),
        ("test.tgt", "电影很好看\n".encode("gbk") * 3, "not_utf8", "test.tgt line 1: byte 0xb5"),
    ],
)
def test_broken_task_is_a_drop_naming_file_and_line(key, data, reason, detail):
    files = tiny_files()
    files[key] = data
    result = glge_task("tiny", files, prefix="in/")
    assert isinstance(result, Drop)
    assert result.reason == reason
    assert detail in result.detail


def test_build_levels_on_the_tiny_fixture():
    levels = build_levels(glge_task("tiny", tiny_files()), GlgeConfig(), seed=0)
    assert levels.scores == (1.5, 0.5, 0.0, None, 2.0, 0.0, None, 1.0)
    assert levels.ranks == (4, 2, 0, None, 5, 1, None, 3)
    assert levels.selected["hard"] == (2, 5)
    assert levels.selected["medium+"] == (1, 2, 5, 7)
    assert len(levels.selected["medium"]) == 4
    assert levels.summary["unscorable_train_targets"] == 2
    assert levels.summary["levels"]["hard"]["type_overlap"] == 0.0
    assert levels.summary["levels"]["easy"]["token_overlap"] == 5 / 8
    assert levels.summary["harder"] is True


def test_gets_harder_flags_a_hard_level_easier_than_medium():
    def rates(*values):
        return {
            lv: {"type_overlap": v, "token_overlap": v} for lv, v in zip(("easy", "medium", "medium+", "hard"), values)
        }

    assert gets_harder(rates(0.9, 0.8, 0.7, 0.5))
    assert gets_harder(rates(0.9, 0.9, 0.9, 0.9))
    assert not gets_harder(rates(0.9, 0.4, 0.7, 0.5))  # random medium already harder than hard
    assert gets_harder(rates(None, None, None, None))  # no test tokens: nothing to compare


def test_level_files_copy_dev_test_and_subset_train():
    files = tiny_files()
    files["train.src"] = files["train.src"].rstrip(b"\n")  # no final newline in the original
    levels = build_levels(glge_task("tiny", files), GlgeConfig(), seed=0)
    out = {(level, key): data for level, key, data in level_files(levels)}
    assert len(out) == 24
    for level in ("easy", "medium", "medium+", "hard"):
        for key in ("dev.src", "dev.tgt", "test.src", "test.tgt"):
            assert out[(level, key)] == files[key]
    assert out[("easy", "train.src")] == files["train.src"]
    assert out[("hard", "train.src")] == b"story two\nstory five\n"
    assert out[("hard", "train.tgt")] == b"it was the best of times\nthe moon rose .\n"
    assert out[("medium+", "train.src")] == b"story one\nstory two\nstory five\nstory seven\n"


def test_level_rows_fit_the_schema():
    levels = build_levels(glge_task("tiny", tiny_files()), GlgeConfig(), seed=0)
    rows = list(level_rows(levels))
    assert len(rows) == 8 + 4 + 4 + 2
    pa.Table.from_pylist(rows, schema=LEVELS_SCHEMA)
    empty = [r for r in rows if r["level"] == "easy" and r["line_index"] == 3][0]
    assert empty["score"] is None and empty["n_tokens"] == 0 and empty["low_freq_rank"] is None


# ----------------------------------------------------------------------------- LOT tables
def lot_rows(kind: str) -> list[dict]:
    base = {
        "plotcom": lambda i: {"story": f"他走进森林。<MASK>最后他回家了。第{i}个", "plot": f"他遇到了一只狐狸{i}。"},
        "outgen": lambda i: {
            "title": f"森林{i}",
            "outline": ["遇到狐狸", "回家"],
            "story": f"他走进森林。\n他遇到狐狸{i}。",
        },
    }
    rows = []
    for i, split in enumerate(["train", "train", "val", "test", "train"]):
        rows.append({"example_id": f"ex-{9 - i}", "split": split, **base[kind](i)})
    return rows


def test_lot_serialisation():
    row = lot_rows("outgen")[0]
    assert serialise_lot_row("outgen", row) == (
        "森林0#遇到狐狸#回家<extra_id_1>",
        "<extra_id_1>他走进森林。 他遇到狐狸0。",
    )  # LongLM target
    assert serialise_lot_row("plotcom", lot_rows("plotcom")[1]) == (
        "他走进森林。<MASK>最后他回家了。第1个",
        "他遇到了一只狐狸1。",
    )


def test_lot_rows_become_one_line_whatever_line_break_they_hold():
    """.src/.tgt lines are read back with str.splitlines() by some tools: no \\x0c, NEL or
    U+2029 (any character it splits at) may stay inside one, or src and tgt lines stop pairing."""
    row = {
        **lot_rows("plotcom")[0],
        "story": "他走进森林。\x0c<MASK>\x85最后\u2029他回家了。",
        "plot": "狐\u2028狸\x1e",
    }
    src, tgt = serialise_lot_row("plotcom", row)
    assert (src, tgt) == ("他走进森林。 <MASK> 最后 他回家了。", "狐 狸")
    assert len(src.splitlines()) == len(tgt.splitlines()) == 1


def test_lot_task_maps_val_to_dev_and_orders_by_example_id():
    task = lot_task("lot_plotcom", "plotcom", [LotTable("lot/plotcom/part-0.parquet", lot_rows("plotcom"))])
    assert isinstance(task, GlgeTask) and task.lang == "zh" and task.origin == "lot"
    # train rows are ex-9, ex-8, ex-5 (indices 0, 1, 4): sorted -> ex-5, ex-8, ex-9
    assert task.files["train.tgt"].decode() == "他遇到了一只狐狸4。\n他遇到了一只狐狸1。\n他遇到了一只狐狸0。\n"
    assert task.files["dev.tgt"].decode() == "他遇到了一只狐狸2。\n"
    levels = build_levels(task, GlgeConfig(), seed=0)
    assert len(levels.selected["medium"]) == 1 and len(levels.selected["hard"]) == 0


def test_lot_task_problems_name_file_and_row():
    rows = lot_rows("outgen")
    rows[3]["outline"] = "not a list"
    bad = lot_task("lot_outgen", "outgen", [LotTable("lot/outgen/p.parquet", rows)])
    assert bad == Drop("bad_field_type", "lot/outgen/p.parquet row 4: field 'outline' is missing or has the wrong type")
    no_test = [r for r in lot_rows("outgen") if r["split"] != "test"]
    missing = lot_task("lot_outgen", "outgen", [LotTable("lot/outgen/p.parquet", no_test)])
    assert missing == Drop("missing_split", "lot/outgen/*.parquet: no rows with split 'test'")
    odd = lot_rows("plotcom")
    odd[0]["split"] = "dev"
    assert lot_task("t", "plotcom", [LotTable("x/p.parquet", odd)]).reason == "unknown_split"


def test_parse_parquet_rows():
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(lot_rows("plotcom")), sink)
    assert parse_parquet_rows("p.parquet", sink.getvalue()) == lot_rows("plotcom")
    bad = parse_parquet_rows("lot/plotcom/p.parquet", b"PAR1 truncated")
    assert bad.reason == "unreadable_file" and bad.detail.startswith("lot/plotcom/p.parquet: ")


def test_line_text_drops_a_byte_order_mark_and_carriage_return():
    from annotators.glge.layout import line_text, split_lines

    lines = split_lines(b"\xef\xbb\xbfriver bank\r\nsea\n")
    assert [line_text(x) for x in lines] == ["river bank", "sea"]


def test_level_summaries_give_average_source_and_target_lengths():
    files = {f"{split}.{side}": b"d\n" for split in ("dev", "test") for side in ("src", "tgt")}
    files.update(
        {
            "train.src": b"one two three\nfour five\nsix\n",
            "train.tgt": b"a b\nc\nd e f g\n",
            "test.src": b"x\n",
            "test.tgt": b"a\n",
        }
    )
    summary = build_levels(glge_task("lengths", files), GlgeConfig(), seed=0).summary
    assert summary["length_unit"] == "words"
    easy = summary["levels"]["easy"]
    assert (easy["avg_src_len"], easy["avg_tgt_len"]) == (2.0, 2.33)
    for level in ("medium", "hard", "medium+"):
        chosen = build_levels(glge_task("lengths", files), GlgeConfig(), seed=0).selected[level]
        src = [3, 2, 1]
        expected = round(sum(src[i] for i in chosen) / len(chosen), 2) if chosen else None
        assert summary["levels"][level]["avg_src_len"] == expected


def test_build_levels_tokenizes_train_in_bounded_batches(monkeypatch):
    """Training targets are tokenized TOKEN_BATCH lines at a time and only their test-vocabulary
    token ids are kept (a 400,000-line task held every line's token list: 1.2 GB peak for a
    171 MB task); the scores, levels, summary and files are those of one batch."""
    from annotators.glge import levels as lv
    from annotators.glge.layout import iter_lines, line_count

    files = tiny_files()
    files["train.tgt"] = files["train.tgt"].rstrip(b"\n")  # no final newline
    files["train.src"] = files["train.src"].rstrip(b"\n")
    whole = build_levels(glge_task("tiny", files), GlgeConfig(), seed=0)
    sizes = []
    real = lv.tokens_of

    def spy(texts, config):
        sizes.append(len(texts))
        return real(texts, config)

    monkeypatch.setattr(lv, "TOKEN_BATCH", 3)
    monkeypatch.setattr(lv, "tokens_of", spy)
    batched = build_levels(glge_task("tiny", files), GlgeConfig(), seed=0)
    assert sizes[1:] == [3, 3, 2]  # the test targets first, then train in batches of 3
    assert batched == whole
    assert list(level_files(batched)) == list(level_files(whole))
    for data in (b"", b"\n", b"a", b"a\n", b"a\r\n\nb", b"a\n\n"):
        assert list(iter_lines(data)) == split_lines(data)
        assert line_count(data) == len(split_lines(data))
