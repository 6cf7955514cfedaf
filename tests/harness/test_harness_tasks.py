"""The lm_eval task files a build writes (annotators/harness): prompts equal LongLM's inputs,
tasks follow what was built, data files resolve from the task folder wherever lm_eval runs."""

from __future__ import annotations

import ast
import importlib.util
import os
import pathlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from annotators.core import longlm
from annotators.core.card import complete_card
from annotators.harness import chapterbreak as cb_tasks
from annotators.harness import glge as glge_tasks
from annotators.harness import lot as lot_tasks
from annotators.harness import task_utils as task_utils_module

pytest.importorskip("lm_eval")
from lm_eval.utils import apply_template  # noqa: E402

SPLITS = {"train": 3, "validation": 1, "test": 2}
LOT_STATS = {"table_splits": {t: dict(SPLITS) for t in lot_tasks.TASKS}}
ROWS = {
    "clozet": {"story": "小明出门了。<mask>他很开心。", "plot0": "天下雨了。", "plot1": "太阳出来了。", "label": "1"},
    "senpos": {"story": "第一句。[MASK]第二句。[MASK]第三句。[MASK]第四句。", "sentence": "插入的句子。", "label": 2},
    "outgen": {"title": "小#猫", "outline": ["钓鱼", "河边#走", "回家"], "story": "小猫去河边钓鱼，然后回家。"},
}
# The same rows with a line break of every kind `str.splitlines()` knows in their prompt fields
# (a crawled story's U+2028, a Word export's \x0b, a CRLF): the `.source` line has a space there.
BROKEN_ROWS = {
    "clozet": {**ROWS["clozet"], "story": "小明\u2028出门了。\r\n<mask>他很\x0b开心。\n", "plot0": "天下\x85雨了。"},
    "senpos": {
        **ROWS["senpos"],
        "story": "第一句。\u2029[MASK]第二\x1c句。[MASK]第三句。\x0c[MASK]第四句。",
        "sentence": "插入\r的句子。",
    },
    "outgen": {**ROWS["outgen"], "title": "小#\x1d猫", "outline": ["钓鱼\x1e", "河边#走", "回\u2028家"]},
}


def _write(folder, files: dict[str, str]):
    for path, text in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text, encoding="utf-8")


class _TaskYaml(yaml.SafeLoader):
    """A task file as lm_eval reads it before resolving functions: `!function utils.f` is its
    name (the real `lm_eval` command reads these files in test_harness_runs.py)."""


_TaskYaml.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))


def _config(folder, name: str) -> dict:
    return yaml.load((folder / "lm_eval" / f"{name}.yaml").read_text(encoding="utf-8"), Loader=_TaskYaml)


def _render(config: dict, key: str, doc: dict):
    value = config[key]
    return value if not isinstance(value, str) else apply_template(value, doc)


@pytest.mark.parametrize("rows", [ROWS, BROKEN_ROWS], ids=["plain", "line_breaks"])
@pytest.mark.parametrize("task", ["clozet", "senpos", "outgen"])
def test_prompts_are_longlm_inputs(tmp_path, task, rows):
    files, _ = lot_tasks.attachments(LOT_STATS)
    _write(tmp_path, files)
    config, row = _config(tmp_path, task), rows[task]
    source, target = longlm.source_target(task, row)
    assert _render(config, "doc_to_text", row) == source
    if task == "outgen":
        assert config["output_type"] == "generate_until" and _render(config, "doc_to_target", row) == row["story"]
        return
    choices = config["doc_to_choice"]
    choices = choices if isinstance(choices, list) else ast.literal_eval(_render(config, "doc_to_choice", row))
    assert choices == [longlm.sentinel(k) for k in range(1, len(choices) + 1)]
    assert len(choices) == (2 if task == "clozet" else 3)
    gold = int(_render(config, "doc_to_target", row))
    assert config["target_delimiter"] == "" and target == source + choices[gold]


def test_plotcom_prompt_asks_for_the_masked_sentence(tmp_path):
    _write(tmp_path, lot_tasks.attachments(LOT_STATS)[0])
    config = _config(tmp_path, "plotcom")
    doc = {"story": "甲。<MASK>丙。", "plot": "乙。"}
    assert _render(config, "doc_to_text", doc) == "甲。<extra_id_1>丙。<extra_id_1>"
    assert config["generation_kwargs"]["until"] == ["<extra_id_2>", "\n"]


def test_chapterbreak_prompt_puts_a_break_only_where_the_prefix_has_none(tmp_path):
    stats = {
        "config": {"examples": {"prefix_lengths": [256]}},
        "chapterbreak": {"table4_examples": {"pg19": {"chapter": {"examples": 2}}}},
    }
    _write(tmp_path, cb_tasks.attachments(stats)[0])
    config = _config(tmp_path, "storybench_chapterbreak_pg19_ctx_256")
    doc = {"prefix": "He left.", "gold": "CHAPTER II.\n\nMorning 'came'.", "negatives": ['CHAPTER II.\n\n"No"', "x"]}
    assert _render(config, "doc_to_text", doc) == "He left.\n\n"
    assert _render(config, "doc_to_text", {**doc, "prefix": "He said "}) == "He said "
    assert ast.literal_eval(_render(config, "doc_to_choice", doc)) == [doc["gold"], *doc["negatives"]]
    assert config["doc_to_target"] == 0
    assert config["dataset_kwargs"]["filters"] == [
        ["source", "==", "pg19"],
        ["boundary", "==", "chapter"],
        ["prefix_length", "==", 256],
    ]


def test_tasks_follow_what_was_built():
    stats = {
        "table_splits": {
            **LOT_STATS["table_splits"],
            "clozet": {"train": 0, "test": 0},
            "senpos": {"train": 4, "validation": 0, "test": 1},
        }
    }
    files, summary = lot_tasks.attachments(stats)
    assert "lm_eval/clozet.yaml" not in files
    assert summary["groups"] == {
        "storybench_lot": ["storybench_lot_senpos", "storybench_lot_plotcom", "storybench_lot_outgen"]
    }
    assert any("clozet" in note for note in summary["notes"])
    assert "validation" not in files["lm_eval/senpos.yaml"]  # an empty split is not listed
    files, summary = lot_tasks.attachments({"table_splits": {}})
    assert files == {} and summary["groups"] == {} and summary["command"] == ""
    cb_stats = {
        "config": {"examples": {"prefix_lengths": [256, 512]}},
        "chapterbreak": {
            "table4_examples": {
                "pg19": {"chapter": {"examples": 3}, "cause": {"examples": 0}, "dialogue": {"examples": 2}},
                "ao3": {"chapter": {"examples": 0}},
            }
        },
    }
    files, summary = cb_tasks.attachments(cb_stats)
    assert summary["groups"] == {
        "storybench_chapterbreak": ["storybench_chapterbreak_pg19_ctx_256", "storybench_chapterbreak_pg19_ctx_512"],
        "storybench_chapterbreak_dialogue": [
            "storybench_chapterbreak_pg19_dialogue_ctx_256",
            "storybench_chapterbreak_pg19_dialogue_ctx_512",
        ],
    }
    assert sorted(files) == sorted(
        [f"lm_eval/{t}.yaml" for ts in summary["groups"].values() for t in ts]
        + ["lm_eval/storybench_chapterbreak.yaml", "lm_eval/storybench_chapterbreak_dialogue.yaml", "lm_eval/utils.py"]
    )


def test_card_names_the_tasks_and_the_command():
    _, summary = lot_tasks.attachments(LOT_STATS)
    card = complete_card("# card\n", {"job": "lot", "lm_eval": summary})
    assert "--include_path OUT/lm_eval --tasks storybench_lot" in card
    assert "`storybench_lot_outgen`" in card and "lm_eval run --model hf" in card


def test_data_files_resolve_from_the_task_folder_wherever_lm_eval_runs(tmp_path, monkeypatch):
    import datasets

    out = tmp_path / "moved" / "out"
    _write(
        out,
        cb_tasks.attachments(
            {
                "config": {"examples": {"prefix_lengths": [256]}},
                "chapterbreak": {"table4_examples": {"pg19": {"chapter": {"examples": 1}}}},
            }
        )[0],
    )
    (out / "examples").mkdir()
    table = pa.table(
        {
            "example_id": ["a", "b", "c"],
            "source": ["pg19", "ao3", "pg19"],
            "prefix_length": [256, 256, 512],
            "text": ["x", "y", "z"],
        }
    )
    pq.write_table(table, out / "examples" / "part-00000-of-00001.parquet")
    spec = importlib.util.spec_from_file_location("storybench_lm_eval_utils", out / "lm_eval" / "utils.py")
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "cache"))
    ds = utils.load_tables(
        data_files={"test": "../examples/*.parquet"},
        columns=["example_id", "source"],
        filters=[["source", "==", "pg19"], ["prefix_length", "==", 256]],
        version=1.0,
        pretrained="ignored",
    )
    assert ds["test"].to_list() == [{"example_id": "a", "source": "pg19"}]
    assert os.getcwd() == str(elsewhere)


def test_glge_tasks_only_for_glge_metrics(tmp_path):
    levels = {level: {"train_size": 0 if level == "hard" else 4} for level in glge_tasks.LEVELS}
    stats = {
        "glge": {
            "xsum": {"sizes": {"test": 3}, "levels": levels},
            "lot_outgen": {"sizes": {"test": 3}, "levels": levels},
            "coqa": {"sizes": {"test": 0}, "levels": levels},
        }
    }
    files, summary = glge_tasks.attachments(stats)
    assert summary["groups"] == {
        f"storybench_glge_{name}": [f"storybench_glge_{name}_xsum"]
        for name in ("easy", "medium", "medium_plus", "hard")
    }
    assert any("lot_outgen" in note for note in summary["notes"])
    _write(tmp_path, files)
    easy, hard = _config(tmp_path, "storybench_glge_medium_plus_xsum"), _config(tmp_path, "storybench_glge_hard_xsum")
    assert easy["dataset_kwargs"]["data_files"]["train"]["source"] == "../medium+/xsum_data/org_data/train.src"
    assert "training_split" not in hard and "train" not in hard["dataset_kwargs"]["data_files"]
    assert _render(easy, "doc_to_text", {"source": "a b c", "target": "x"}) == "a b c\n"
    assert [m["metric"] for m in easy["metric_list"]] == ["rouge-1", "rouge-2", "rouge-l"]


def test_glge_line_files_split_as_the_jobs_split_them(tmp_path, monkeypatch):
    """A lone "\\r" inside a line stays in it (read_text's universal newlines made it a line
    break: 101 examples from 100 lines, the later ones against the wrong targets); CRLF
    endings and the UTF-8 BOM are left out, as pipelines.glge and pipelines.evaluate read them."""
    import datasets

    out = tmp_path / "out"
    (out / "lm_eval").mkdir(parents=True)
    (out / "lm_eval" / "utils.py").write_text(pathlib.Path(task_utils_module.__file__).read_text(encoding="utf-8"))
    data = out / "data"
    data.mkdir()
    (data / "test.src").write_bytes("\ufeffone\r\ntwo\r(stray)\r\nthree\n".encode("utf-8"))
    (data / "test.tgt").write_bytes(b"1\n2\n3")
    spec = importlib.util.spec_from_file_location("storybench_lm_eval_utils_lines", out / "lm_eval" / "utils.py")
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "cache"))
    ds = utils.load_lines(data_files={"test": {"source": "../data/test.src", "target": "../data/test.tgt"}})
    rows = ds["test"].to_list()
    assert [(r["source"], r["target"]) for r in rows] == [("one", "1"), ("two\r(stray)", "2"), ("three", "3")]


def test_glge_card_says_what_its_tasks_read_and_why_none_was_written():
    """The GLGE card said its tasks read parquet files (they read the .src/.tgt files), and a
    build of non-GLGE task names said 'no table has a test split with rows'."""
    from annotators.harness.common import card_section

    levels = {level: {"train_size": 4} for level in glge_tasks.LEVELS}
    _, info = glge_tasks.attachments({"glge": {"xsum": {"sizes": {"test": 3}, "levels": levels}}})
    assert "read this folder's `.src`/`.tgt` line files" in card_section({"lm_eval": info})
    _, none = glge_tasks.attachments({"glge": {"mytask": {"sizes": {"test": 3}, "levels": levels}}})
    assert "No task could be written: no harness task for mytask: not a GLGE task" in card_section({"lm_eval": none})
    _, lot = lot_tasks.attachments(LOT_STATS)
    assert "reads" not in lot and "read this folder's parquet files" in card_section({"lm_eval": lot})
