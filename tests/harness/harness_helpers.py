"""Helpers of the harness tests: builds (LOT from the embedded sample as `make build-lot` does, and
ChapterBreak from the fixture books plus real ones when ../shared/data has them), and
`run_lm_eval`: the real `lm_eval` command, offline, from a working directory of its own."""

from __future__ import annotations

import glob
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT, SHARED_DATA

FIX = ROOT / "tests" / "fixtures" / "chapterbreak"
REAL_BOOKS = ["pg_2017/pg11.txt", "pg_2024/pg84.txt"]
CB_LENGTHS = "256,1024"


def lm_eval_command() -> str:
    pytest.importorskip("lm_eval")
    exe = pathlib.Path(sys.executable).parent / "lm_eval"
    if not exe.exists():
        pytest.skip("the lm_eval command is not installed (make setup installs it)")
    return str(exe)


def offline_env(tmp: pathlib.Path) -> dict:
    """The environment of an lm_eval run: Hugging Face offline, caches in `tmp`, and a dead
    proxy for anything but loopback, so an attempt to reach the network fails the run."""
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env.update(
        HF_DATASETS_OFFLINE="1",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_HOME=str(tmp / "hf"),
        HF_DATASETS_CACHE=str(tmp / "hf" / "datasets"),
        HTTP_PROXY="http://127.0.0.1:9",
        HTTPS_PROXY="http://127.0.0.1:9",
        NO_PROXY="127.0.0.1,localhost",
        TOKENIZERS_PARALLELISM="false",
    )
    return env


def run_lm_eval(
    include: pathlib.Path, tasks: list[str], workdir: pathlib.Path, model: str = "dummy", model_args: str | None = None
) -> tuple[dict, dict[str, list[dict]]]:
    """Runs `lm_eval run` from `workdir` (not the repository) with --log_samples; returns the
    results JSON and the logged samples per task."""
    workdir.mkdir(parents=True, exist_ok=True)
    out = workdir / "results"
    cmd = [
        lm_eval_command(),
        "run",
        "--model",
        model,
        "--include_path",
        str(include),
        "--tasks",
        *tasks,
        "--output_path",
        str(out),
        "--log_samples",
        "--seed",
        "0",
    ]
    if model_args:
        cmd += ["--model_args", model_args]
    done = subprocess.run(cmd, cwd=workdir, env=offline_env(workdir), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    [results_file] = glob.glob(str(out / "**" / "results_*.json"), recursive=True)
    samples = {}
    for path in glob.glob(str(out / "**" / "samples_*.jsonl"), recursive=True):
        task = pathlib.Path(path).name[len("samples_") :].rsplit("_", 1)[0]
        samples[task] = [json.loads(line) for line in pathlib.Path(path).read_text(encoding="utf-8").splitlines()]
    return json.loads(pathlib.Path(results_file).read_text(encoding="utf-8")), samples


def build_lot(root: pathlib.Path) -> pathlib.Path:
    """`make build-lot`'s command, into a folder that is then moved (the tasks must follow)."""
    from pipelines.lot import run

    run(
        [
            "--stories",
            str(ROOT / "samples/lot/stories.jsonl"),
            "--annotations",
            str(ROOT / "samples/lot/clozet_annotations.jsonl"),
            "--output",
            str(root / "built"),
            "--seed",
            "0",
            "--splits",
            "8,1,1",
        ]
    )
    moved = root / "moved" / "lot"
    moved.parent.mkdir()
    shutil.move(str(root / "built"), str(moved))
    return moved


def build_chapterbreak(root: pathlib.Path) -> pathlib.Path:
    """ChapterBreak of the fixture books and AO3 works, with real PG-19 books when present."""
    from pipelines.chapterbreak import run

    books = root / "books"
    shutil.copytree(FIX / "books", books)
    for rel in REAL_BOOKS:
        if (SHARED_DATA / "gutenberg" / rel).exists():
            shutil.copy(SHARED_DATA / "gutenberg" / rel, books / rel.replace("/", "_"))
    run(
        [
            "--gutenberg",
            str(books / "*.txt"),
            "--ao3",
            str(FIX / "ao3"),
            "--output",
            str(root / "out"),
            "--prefix-lengths",
            CB_LENGTHS,
            "--seed",
            "0",
        ]
    )
    return root / "out"


GLGE_WORDS = (
    "the ship sailed into the harbour at dawn while the crew sang an old song about home and "
    "the sea a storm rose over the hills and the farmers brought the sheep down to the river"
).split()


def build_glge(root: pathlib.Path) -> pathlib.Path:
    """GLGE levels of three small GLGE-named tasks (coqa, xsum, personachat) of seeded lines."""
    import random

    from pipelines.glge import run

    rng = random.Random(7)
    for task in ("coqa", "xsum", "personachat"):
        folder = root / "in" / f"{task}_data" / "org_data"
        folder.mkdir(parents=True)
        for split, n in (("train", 16), ("dev", 3), ("test", 6)):
            for end, words in (("src", 14), ("tgt", 7)):
                lines = [" ".join(rng.choice(GLGE_WORDS) for _ in range(words)) for _ in range(n)]
                (folder / f"{split}.{end}").write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    run(["--input", str(root / "in"), "--output", str(root / "out"), "--seed", "0"])
    return root / "out"
