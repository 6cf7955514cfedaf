"""End-to-end runs of `python -m pipelines.glge` into tmp_path (GLGE paper section 2.4).

The Hard and Medium+ selections are checked against a plain re-computation of the
definition written here, not by calling the annotators.
"""

from __future__ import annotations

import json
import pathlib
import random
import shutil
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import check_rejects, shared_path
from spacy.lang.en.stop_words import STOP_WORDS

from pipelines.glge import run
from schemas.common import detail_message
from schemas.lot import OUTGEN_SCHEMA, PLOTCOM_SCHEMA

pytestmark = pytest.mark.slow  # end-to-end job runs: `make test-fast` leaves them out

FIXTURES = pathlib.Path(__file__).parents[1] / "fixtures" / "glge"
LEVELS = ("easy", "medium", "medium+", "hard")
KEYS = ("train.src", "train.tgt", "dev.src", "dev.tgt", "test.src", "test.tgt")
BROKEN = {"mismatch": "line_count_mismatch", "empty": "empty_file", "nodev": "missing_split", "latin": "not_utf8"}


# ----------------------------------------------------------------------------- inputs
def write_task(root: pathlib.Path, task: str, files: dict[str, bytes]) -> None:
    folder = root / f"{task}_data" / "org_data"
    folder.mkdir(parents=True, exist_ok=True)
    for key, data in files.items():
        (folder / key).write_bytes(data)


def synth_files(n_train=240, n_dev=20, n_test=60) -> dict[str, bytes]:
    """Seeded English-like targets with stop words, punctuation, ties and empty lines."""
    rng = random.Random(7)
    words = "the of a , . ' and is".split() + [f"word{k}" for k in range(400)] + ["2", "19"]
    weights = [0.3] * 8 + [1 / (k + 1) for k in range(400)] + [0.5, 0.5]  # Zipf-like

    def target(i: int) -> str:
        n = rng.randint(1, 9)
        return "" if i % 37 == 5 else " ".join(rng.choices(words, weights, k=n))

    files = {}
    for split, n in (("train", n_train), ("dev", n_dev), ("test", n_test)):
        files[f"{split}.src"] = "".join(f"{split} document {i} about things\n" for i in range(n)).encode()
        files[f"{split}.tgt"] = "".join(target(i) + "\n" for i in range(n)).encode()
    return files


def write_lot(root: pathlib.Path) -> None:
    for kind, schema in (("plotcom", PLOTCOM_SCHEMA), ("outgen", OUTGEN_SCHEMA)):
        rows = []
        for i, split in enumerate(["train"] * 8 + ["val", "val", "test", "test"]):
            common = {"example_id": f"{kind}-{i:02d}", "story_id": f"s{i}", "split": split}
            if kind == "plotcom":
                rows.append(
                    {
                        **common,
                        "story": f"小明走进森林。<MASK>他回家了。{i}",
                        "plot": f"他看见第{i}只狐狸。",
                        "removed_index": 1,
                        "origin": "auto",
                    }
                )
            else:
                rows.append(
                    {
                        **common,
                        "title": f"森林{i}",
                        "outline": ["小狐狸", f"第{i}天"],
                        "story": f"小明走进森林。\n他看见第{i}只狐狸。",
                        "outline_source": "rake",
                        "title_source": "input",
                    }
                )
        (root / kind).mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), root / kind / "part-00000-of-00001.parquet")


def build_inputs(root: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    glge, lot = root / "glge", root / "lot"
    shutil.copytree(FIXTURES, glge)
    write_task(glge, "synth", synth_files())
    good = synth_files(10, 4, 4)
    write_task(glge, "mismatch", {**good, "train.tgt": b"only\ntwo\n"})
    write_task(glge, "empty", {**good, "dev.src": b""})
    write_task(glge, "nodev", {k: v for k, v in good.items() if k != "dev.tgt"})
    write_task(glge, "latin", {**good, "test.tgt": good["test.tgt"] + "caf\u00e9\n".encode("latin-1")})
    write_lot(lot)
    return glge, lot


def run_job(glge, lot, out, *extra) -> pathlib.Path:
    args = ["--input", str(glge), "--output", str(out), "--seed", "3", *extra]
    run(args + (["--lot", str(lot)] if lot else []))
    return out


def files_of(out: pathlib.Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def read_lines(path: pathlib.Path) -> list[str]:
    text = path.read_bytes().decode("utf-8")
    return text[:-1].split("\n") if text else []


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return build_inputs(tmp_path_factory.mktemp("in"))


@pytest.fixture(scope="module")
def out(inputs, tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    stale = out / "hard" / "mismatch_data" / "org_data" / "train.src"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"left over from an earlier run\n")
    (out / "stats.json").write_text('{"job": "glge"}\n')  # an earlier run's output folder
    return run_job(*inputs, out)


# ----------------------------------------------------------------------------- the definition
def independent_selection(train: list[str], test: list[str], fraction: float) -> list[int]:
    """GLGE 2.4 as stated in the issue, written out plainly."""

    def toks(line):
        return [w for w in line.lower().split() if any(c.isalnum() for c in w) and w not in STOP_WORDS]

    tf = Counter(w for line in test for w in toks(line))
    scored = []
    for i, line in enumerate(train):
        t = toks(line)
        if t:
            scored.append((sum(tf[w] for w in t) / len(t), i))
    scored.sort()
    return sorted(i for _, i in scored[: int(len(train) * fraction)])


def check_against_definition(out: pathlib.Path, glge: pathlib.Path, task: str) -> None:
    org = glge / f"{task}_data" / "org_data"
    train, test = read_lines(org / "train.tgt"), read_lines(org / "test.tgt")
    src = read_lines(org / "train.src")
    table = pq.read_table(out / "levels").to_pylist()
    for level, fraction in (("hard", 0.25), ("medium+", 0.5)):
        want = independent_selection(train, test, fraction)
        got_dir = out / level / f"{task}_data" / "org_data"
        assert read_lines(got_dir / "train.tgt") == [train[i] for i in want]
        assert read_lines(got_dir / "train.src") == [src[i] for i in want]
        assert sorted(r["line_index"] for r in table if r["task"] == task and r["level"] == level) == want


# ----------------------------------------------------------------------------- tests
def test_accounting_balances_and_broken_tasks_are_rejected(out):
    stats = json.loads((out / "stats.json").read_text())
    load = stats["stages"]["load"]
    assert (load["read"], load["written"], load["rejected"]) == (8, 4, 4)
    assert load["rejected_by_reason"] == {r: 1 for r in sorted(BROKEN.values())}
    assert stats["balanced"] and stats["stages"]["levels"]["rejected"] == 0
    check_rejects(out)
    rejects = {r["input_id"]: r for r in pq.read_table(out / "rejects").to_pylist()}
    assert {k: v["reason"] for k, v in rejects.items()} == BROKEN
    assert detail_message(rejects["latin"]["detail"]).endswith(
        "latin_data/org_data/test.tgt line 5: byte 0xe9 at column 4 is not UTF-8 (unexpected end of data)"
    )
    assert "mismatch_data/org_data/train.src has 10 lines but " in rejects["mismatch"]["detail"]
    assert "mismatch_data/org_data/train.tgt has 2; " in rejects["mismatch"]["detail"]
    assert "nodev_data/org_data/dev.tgt: file not found" in rejects["nodev"]["detail"]
    assert "empty_data/org_data/dev.src line 1: file is empty" in rejects["empty"]["detail"]


def test_broken_tasks_leave_no_output_and_stale_files_are_gone(out):
    for task in BROKEN:
        assert not any(out.glob(f"*/{task}_data/**/*.*")), task
    assert sorted(json.loads((out / "stats.json").read_text())["glge"]) == [
        "lot_outgen",
        "lot_plotcom",
        "synth",
        "tiny",
    ]


def test_dev_test_and_easy_are_byte_copies(out, inputs):
    glge, _ = inputs
    for task in ("tiny", "synth"):
        for level in LEVELS:
            for key in KEYS:
                if level != "easy" and key.startswith("train"):
                    continue
                got = out / level / f"{task}_data" / "org_data" / key
                assert got.read_bytes() == (glge / f"{task}_data" / "org_data" / key).read_bytes()


@pytest.mark.parametrize("task", ["tiny", "synth"])
def test_hard_and_medium_plus_equal_the_definition(out, inputs, task):
    check_against_definition(out, inputs[0], task)


def test_tiny_levels_exact(out):
    hard = out / "hard" / "tiny_data" / "org_data"
    assert hard.joinpath("train.tgt").read_bytes() == b"it was the best of times\nthe moon rose .\n"
    plus = read_lines(out / "medium+" / "tiny_data" / "org_data" / "train.src")
    assert plus == ["story one", "story two", "story five", "story seven"]


def test_medium_is_floor_half_distinct_lines_in_order(out, inputs):
    table = pq.read_table(out / "levels").to_pylist()
    train = read_lines(inputs[0] / "synth_data" / "org_data" / "train.tgt")
    idx = [
        r["line_index"]
        for r in sorted(table, key=lambda r: r["line_index"])
        if r["task"] == "synth" and r["level"] == "medium"
    ]
    assert len(idx) == len(set(idx)) == len(train) // 2
    assert read_lines(out / "medium" / "synth_data" / "org_data" / "train.tgt") == [train[i] for i in idx]


def test_levels_get_harder_in_the_report(out):
    glge = json.loads((out / "stats.json").read_text())["glge"]
    synth = glge["synth"]["levels"]
    assert [synth[lv]["train_size"] for lv in LEVELS] == [240, 120, 120, 60]
    assert glge["synth"]["harder"] and glge["tiny"]["harder"]
    assert synth["hard"]["token_overlap"] < synth["medium+"]["token_overlap"] <= synth["easy"]["token_overlap"]
    card = (out / "CARD.md").read_text()
    assert "**Score(y)** = sum of TF(w)" in card and "| hard | 60 |" in card


def test_lot_tasks_become_glge_tasks(out):
    plot = out / "hard" / "lot_plotcom_data" / "org_data"
    assert read_lines(plot / "dev.tgt") == ["他看见第8只狐狸。", "他看见第9只狐狸。"]
    assert (
        len(read_lines(plot / "train.tgt")) == 2
        and len(read_lines(out / "medium" / "lot_plotcom_data" / "org_data" / "train.src")) == 4
    )
    outgen = out / "easy" / "lot_outgen_data" / "org_data"
    assert read_lines(outgen / "test.src") == ["森林10#小狐狸#第10天<extra_id_1>", "森林11#小狐狸#第11天<extra_id_1>"]
    assert read_lines(outgen / "test.tgt")[0] == "<extra_id_1>小明走进森林。 他看见第10只狐狸。"  # LongLM target


def test_byte_identical_with_two_worker_processes(out, inputs, tmp_path):
    again = run_job(*inputs, tmp_path / "mp", "--direct_running_mode=multi_processing", "--direct_num_workers=2")
    assert files_of(again) == files_of(out)


def test_another_seed_changes_only_medium(out, inputs, tmp_path):
    other = files_of(run_job(inputs[0], None, tmp_path / "s", "--seed", "4", "--tasks", "synth", "tiny"))
    base = files_of(out)
    medium = "medium/synth_data/org_data/train.tgt"
    assert other[medium] != base[medium]
    for name, data in other.items():
        if name.startswith(("easy/", "hard/", "medium+/")):
            assert data == base[name], name


def test_shared_realistic_targets(tmp_path):
    """Real GLGE-style target text (model predictions) laid out as tasks."""
    glge = tmp_path / "glge"
    for task in ("gigaword", "coqa"):
        lines = shared_path("glge", f"{task}.hard.test").read_bytes().split(b"\n")[:-1]
        cut1, cut2 = int(len(lines) * 0.6), int(len(lines) * 0.75)
        parts = {"train": lines[:cut1], "dev": lines[cut1:cut2], "test": lines[cut2:]}
        files = {}
        for split, tgt in parts.items():
            files[f"{split}.tgt"] = b"".join(t + b"\n" for t in tgt)
            files[f"{split}.src"] = b"".join(b"%s source %d\n" % (task.encode(), i) for i in range(len(tgt)))
        write_task(glge, task, files)
    out = run_job(glge, None, tmp_path / "out")
    stats = json.loads((out / "stats.json").read_text())
    for task in ("gigaword", "coqa"):
        check_against_definition(out, glge, task)
        levels = stats["glge"][task]["levels"]
        assert stats["glge"][task]["harder"]
        assert levels["hard"]["type_overlap"] < levels["medium"]["type_overlap"] < levels["easy"]["type_overlap"]


def test_bad_command_lines_stop_before_running(tmp_path, capsys):
    with pytest.raises(SystemExit):
        run(["--output", str(tmp_path / "o")])
    with pytest.raises(SystemExit):
        run(["--input", str(tmp_path / "absent"), "--output", str(tmp_path / "o")])
    assert "not a folder" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


# ----------------------------------------------------------------------------- committed as a whole
def test_building_the_graph_lists_no_folder(inputs, tmp_path, monkeypatch):
    """Task folders and LOT tables are found when the job runs, never while the graph is built."""
    import apache_beam as beam

    from pipelines import glge

    def refuse(*_):
        raise AssertionError("listed while the graph was built")

    monkeypatch.setattr(glge, "discover_glge", refuse)
    monkeypatch.setattr(glge, "_lot_parquet_paths", refuse)
    args, options = glge.parse_job_args(
        glge.build_parser(), ["--input", str(inputs[0]), "--lot", str(inputs[1]), "--output", str(tmp_path / "o")]
    )
    report = glge.JobReport(str(tmp_path / "o.incomplete"), "glge", config={}, seed=0, inputs=[], options=options)
    p = beam.Pipeline(options=options)
    glge.build_graph(p, report, args, glge.glge_config(args), glge.job_langs(args), str(tmp_path / "o.incomplete"))
    report.finish(p)
    assert not any(tmp_path.iterdir())


def test_a_rerun_with_fewer_tasks_leaves_no_folder_of_the_others(inputs, tmp_path):
    glge, lot = inputs
    out = run_job(glge, lot, tmp_path / "out", "--tasks", "tiny", "lot_plotcom")
    assert {p.name for p in out.glob("*/*_data")} == {"tiny_data", "lot_plotcom_data"}
    run_job(glge, None, out, "--tasks", "tiny")
    assert {p.name for p in out.glob("*/*_data")} == {"tiny_data"}
    assert {r["task"] for r in pq.read_table(out / "levels").to_pylist()} == {"tiny"}
    assert json.loads((out / "stats.json").read_text())["config"]["tasks"] == ["tiny"]
    assert files_of(out) == files_of(run_job(glge, None, tmp_path / "fresh", "--tasks", "tiny"))
    assert not (tmp_path / "out.incomplete").exists()


def test_a_failed_run_leaves_the_previous_output_untouched(tmp_path, monkeypatch):
    """The input folder disappears after the graph is built: listing it fails the run."""
    from pipelines import glge

    shutil.copytree(FIXTURES, tmp_path / "in")
    out = run_job(tmp_path / "in", None, tmp_path / "out")
    before = files_of(out)
    real_run = glge.run_pipeline

    def input_gone_then_run(p, **kwargs):
        shutil.rmtree(tmp_path / "in")
        return real_run(p, **kwargs)

    monkeypatch.setattr(glge, "run_pipeline", input_gone_then_run)
    with pytest.raises(Exception, match="No such file or directory"):
        run_job(tmp_path / "in", None, out)
    assert files_of(out) == before


def test_output_folder_is_a_hugging_face_dataset_card(out):
    """README.md's YAML configs load with datasets.load_dataset, splits and row counts as written."""
    from conftest import check_dataset_card

    assert check_dataset_card(out)
