"""The Beam tier: the glge job's composite transforms over in-memory inputs (GLGE paper 2.4).

Each test runs one transform on the in-process FnApiRunner (no Prism download) and asserts
its exact main output and, through a recording report, its exact rejects rows.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import pathlib

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.runners.portability.fn_api_runner import FnApiRunner
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from annotators.glge.levels import GlgeConfig
from pipelines.glge import LevelRows, LoadTasks, ScoreTasks, SummariseTasks, WriteTaskFiles
from schemas.common import Reject, detail_message
from schemas.glge import FILES, GlgeTask, TaskSpec, TaskSummary
from schemas.lot import PLOTCOM_SCHEMA
from tests.beam_report import RecordingReport

TINY = pathlib.Path(__file__).parents[1] / "fixtures" / "glge" / "tiny_data" / "org_data"


def pipeline() -> TestPipeline:
    return TestPipeline(runner=FnApiRunner())


def read_from(files: dict[str, bytes], location: str, *parts: str) -> bytes | None:
    """An in-memory `read(location, *parts)` for LoadTasks."""
    return files.get("/".join((location, *parts)))


def tiny_files() -> dict[str, bytes]:
    return {key: (TINY / key).read_bytes() for key in FILES}


def tiny_task() -> GlgeTask:
    names = {key: f"in/tiny_data/org_data/{key}" for key in FILES}
    return GlgeTask("tiny", "en", tiny_files(), names, origin="glge")


def in_memory(task: str, files: dict[str, bytes]) -> dict[str, bytes]:
    return {f"in/{task}_data/org_data/{key}": data for key, data in files.items()}


def reject(input_id: str, reason: str, detail: str) -> dict:
    return Reject("load", input_id, reason, detail).to_row()  # detail as JSON


def load(p, specs, files):
    """LoadTasks over in-memory specs and files: (main, rejects of stage `load`)."""
    report = RecordingReport()
    tasks = p | beam.Create(specs) | LoadTasks(report, read=functools.partial(read_from, files))
    return tasks, report.by_stage["load"]


# ----------------------------------------------------------------------------- LoadTasks
def test_load_tasks_passes_a_good_glge_task_unchanged():
    with pipeline() as p:
        tasks, rejects = load(p, [TaskSpec("tiny", "glge", "in")], in_memory("tiny", tiny_files()))
        assert_that(tasks, equal_to([tiny_task()]), label="main")
        assert_that(rejects, equal_to([]), label="rejects")


def test_load_tasks_rejects_a_task_whose_src_and_tgt_line_counts_differ():
    files = in_memory("odd", {**tiny_files(), "dev.src": b"one\n"})
    with pipeline() as p:
        tasks, rejects = load(p, [TaskSpec("odd", "glge", "in")], files)
        assert_that(tasks, equal_to([]), label="main")
        assert_that(
            rejects,
            equal_to(
                [
                    reject(
                        "odd",
                        "line_count_mismatch",
                        "in/odd_data/org_data/dev.src has 1 lines but "
                        "in/odd_data/org_data/dev.tgt has 2; in/odd_data/org_data/dev.tgt line 2 has no partner",
                    )
                ]
            ),
            label="rejects",
        )


def test_load_tasks_rejects_a_task_named_but_not_found():
    with pipeline() as p:
        tasks, rejects = load(p, [TaskSpec("absent", "glge", "")], {})
        assert_that(tasks, equal_to([]), label="main")
        assert_that(
            rejects,
            equal_to(
                [
                    reject(
                        "absent",
                        "missing_split",
                        "absent_data/org_data/train.src: file not found (task absent needs "
                        "train.src, train.tgt, dev.src, dev.tgt, test.src, test.tgt)",
                    )
                ]
            ),
            label="rejects",
        )


def test_load_tasks_rejects_a_lot_table_without_parquet_files():
    with pipeline() as p:
        tasks, rejects = load(p, [TaskSpec("lot_outgen", "outgen", "lot/outgen")], {})
        assert_that(tasks, equal_to([]), label="main")
        assert_that(
            rejects,
            equal_to([reject("lot_outgen", "missing_table", "lot/outgen: no parquet files for LOT outgen")]),
            label="rejects",
        )


def plotcom_parquet() -> bytes:
    rows = [
        {
            "example_id": f"p-{i}",
            "story_id": f"s{i}",
            "split": split,
            "story": f"他走进森林。<MASK>{i}",
            "plot": f"狐狸{i}。",
            "removed_index": 1,
            "origin": "auto",
        }
        for i, split in enumerate(["train", "train", "val", "test"])
    ]
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=PLOTCOM_SCHEMA), sink)
    return sink.getvalue()


def test_load_tasks_builds_a_lot_task_from_its_parquet_files():
    spec = TaskSpec("lot_plotcom", "plotcom", "lot/plotcom", ("lot/plotcom/part-0.parquet",))
    with pipeline() as p:
        tasks, rejects = load(p, [spec], {"lot/plotcom/part-0.parquet": plotcom_parquet()})
        files = tasks | beam.Map(lambda t: (t.task, t.lang, t.files["train.tgt"], t.files["dev.src"]))
        assert_that(
            files,
            equal_to([("lot_plotcom", "zh", "狐狸0。\n狐狸1。\n".encode(), "他走进森林。<MASK>2\n".encode())]),
            label="main",
        )
        assert_that(rejects, equal_to([]), label="rejects")


def test_load_tasks_rejects_an_unreadable_parquet_file():
    spec = TaskSpec("lot_plotcom", "plotcom", "lot/plotcom", ("lot/plotcom/part-0.parquet",))
    with pipeline() as p:
        tasks, rejects = load(p, [spec], {"lot/plotcom/part-0.parquet": b"PAR1 truncated"})
        assert_that(tasks, equal_to([]), label="main")
        got = rejects | beam.Map(lambda r: (r["input_id"], r["reason"], detail_message(r["detail"]).split(" (")[0]))
        assert_that(
            got,
            equal_to([("lot_plotcom", "unreadable_file", "lot/plotcom/part-0.parquet: not a readable parquet file")]),
            label="rejects",
        )


# ----------------------------------------------------------------------------- ScoreTasks
def score(p, tasks):
    report = RecordingReport()
    levels = p | beam.Create(tasks) | ScoreTasks(report, GlgeConfig(), seed=0, langs=["en"])
    return levels, report.by_stage["levels"]


def test_score_tasks_selects_hard_and_medium_plus_by_lowest_score():
    with pipeline() as p:
        levels, rejects = score(p, [tiny_task()])
        got = levels | beam.Map(lambda t: (t.task, t.selected["hard"], t.selected["medium+"], t.ranks))
        assert_that(got, equal_to([("tiny", (2, 5), (1, 2, 5, 7), (4, 2, 0, None, 5, 1, None, 3))]), label="main")
        assert_that(rejects, equal_to([]), label="rejects")


def test_score_tasks_records_a_task_that_raises_as_internal_error():
    broken = dataclasses.replace(
        tiny_task(), task="broken", files={k: v for k, v in tiny_files().items() if k != "test.tgt"}
    )
    with pipeline() as p:
        levels, rejects = score(p, [broken, tiny_task()])
        assert_that(levels | beam.Map(lambda t: t.task), equal_to(["tiny"]), label="main")
        got = rejects | beam.Map(
            lambda r: (r["stage"], r["input_id"], r["reason"], detail_message(r["detail"]).split(" |")[0])
        )
        assert_that(got, equal_to([("levels", "broken", "internal_error", "KeyError: 'test.tgt'")]), label="rejects")


# ----------------------------------------------------------------------------- outputs
def test_level_rows_one_per_training_line_per_level():
    from annotators.glge.levels import build_levels

    levels = build_levels(tiny_task(), GlgeConfig(), seed=0)
    with pipeline() as p:
        rows = p | beam.Create([levels]) | LevelRows()
        fixed = (
            rows
            | beam.Filter(lambda r: r["level"] != "medium")
            | beam.Map(lambda r: (r["level"], r["line_index"], r["low_freq_rank"]))
        )
        assert_that(
            fixed,
            equal_to(
                [("easy", i, rank) for i, rank in enumerate((4, 2, 0, None, 5, 1, None, 3))]
                + [
                    ("medium+", 1, 2),
                    ("medium+", 2, 0),
                    ("medium+", 5, 1),
                    ("medium+", 7, 3),
                    ("hard", 2, 0),
                    ("hard", 5, 1),
                ]
            ),
            label="fixed levels",
        )
        medium = rows | beam.Filter(lambda r: r["level"] == "medium") | beam.combiners.Count.Globally()
        assert_that(medium, equal_to([4]), label="medium size")


def test_write_task_files_writes_the_layout_and_returns_the_summary(tmp_path):
    from annotators.glge.levels import build_levels

    levels = build_levels(tiny_task(), GlgeConfig(), seed=0)
    with pipeline() as p:
        summaries = p | beam.Create([levels]) | WriteTaskFiles(str(tmp_path))
        assert_that(summaries, equal_to([TaskSummary("tiny", levels.summary)]))
    hard = tmp_path / "hard" / "tiny_data" / "org_data"
    assert hard.joinpath("train.tgt").read_bytes() == b"it was the best of times\nthe moon rose .\n"
    assert len(list(tmp_path.rglob("*.*"))) == 24


def test_summarise_tasks_is_one_dict_sorted_by_task():
    with pipeline() as p:
        merged = p | beam.Create([TaskSummary("b", {"n": 2}), TaskSummary("a", {"n": 1})]) | SummariseTasks()
        assert_that(merged | beam.Map(lambda d: list(d.items())), equal_to([[("a", {"n": 1}), ("b", {"n": 2})]]))
