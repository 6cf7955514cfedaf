"""Shared test fixtures: paths to the project's samples and to ../shared/data (optional)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED_DATA = pathlib.Path(os.environ.get("STORYBENCH_SHARED_DATA", ROOT.parent / "shared" / "data"))
sys.path.insert(0, str(ROOT))


def shared_path(*parts: str) -> pathlib.Path:
    """A path under ../shared/data, or skip the test when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not present: {path}")
    return path


@pytest.fixture
def samples_dir() -> pathlib.Path:
    return ROOT / "samples"


def write_tiny_gpt2(folder):
    """GPT-2's file layout (vocab.json + merges.txt) with a handful of merges over the 256
    byte characters of its byte-level alphabet (space is "\u0120")."""
    from tokenizers import pre_tokenizers

    merges = ["t h", "th e", "\u0120 c", "\u0120c a", "\u0120ca t", "a t", "\u0120 the"]
    vocab = {ch: i for i, ch in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    for m in merges:
        vocab["".join(m.split())] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n", encoding="utf-8")
    return folder


def write_tokenizer_json(folder, texts, kind: str = "bpe", vocab_size: int = 600):
    """A `tokenizer.json` trained here, offline, with the `tokenizers` library on `texts`:
    "bpe" is GPT-2's layout (byte-level BPE), "wordpiece" BERT's (lower-cased, `##` pieces).
    Returns the file's path."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    if kind == "bpe":
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size,
            show_progress=False,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            special_tokens=["<|endoftext|>"],
        )
    else:
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece()
        trainer = trainers.WordPieceTrainer(
            vocab_size=vocab_size, show_progress=False, special_tokens=["[UNK]", "[CLS]", "[SEP]"]
        )
    tok.train_from_iterator(list(texts), trainer)
    path = pathlib.Path(folder) / "tokenizer.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tok.save(str(path))
    return path


_JIEBA_IN_JOB = """
import importlib, sys
importlib.import_module("pipelines." + sys.argv[1]).run(sys.argv[2:])
jieba = sys.modules.get("jieba")
print("loaded" if jieba is not None and jieba.dt.initialized else "not loaded")
"""


def jieba_in_job(job: str, args: list[str], workers: str) -> str:
    """Whether `python -m pipelines.<job> ARGS --direct_num_workers=<workers>`, run in a fresh
    process, left jieba's dictionary loaded in the job's own process ("loaded" / "not
    loaded"): whether its text steps ran there or on the pool's workers."""
    run = subprocess.run(
        [sys.executable, "-c", _JIEBA_IN_JOB, job, *args, f"--direct_num_workers={workers}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout.strip().splitlines()[-1]


def job_reasons(job: str) -> tuple[str, ...]:
    """Every reject reason the catalogue lets `job` give (annotators/<benchmark>/reasons.py)."""
    from annotators.audits import reasons as audits
    from annotators.storium import reasons as storium

    own = {
        "overlap": audits.OVERLAP_REASONS,
        "bias": audits.BIAS_REASONS,
        "storium": storium.STORIUM_REASONS,
        "edits": storium.EDITS_REASONS,
    }
    if job in own:
        return own[job]
    package = {"crawl": "stories"}.get(job, job)
    return __import__(f"annotators.{package}.reasons", fromlist=["JOB_REASONS"]).JOB_REASONS


def check_rejects(folder) -> int:
    """The output folder's rejects: every reason is in its job's catalogue (and so has a
    meaning in the card), every detail parses as JSON, and stats.json counts the same rows.
    Returns the number of rejects."""
    import pyarrow.parquet as pq

    from annotators.core.reasons import catalogue

    folder = pathlib.Path(folder)
    stats = json.loads((folder / "stats.json").read_text(encoding="utf-8"))
    rows = [r for f in sorted((folder / "rejects").glob("*.parquet")) for r in pq.read_table(f).to_pylist()]
    allowed = set(job_reasons(stats["job"]))
    assert allowed <= set(catalogue()), allowed - set(catalogue())
    given = {r["reason"] for r in rows}
    # `http_<status>` is the catalogue's `http_status` with its code (reasons.meaning)
    given = {"http_status" if g.startswith("http_") and g[5:].isdigit() else g for g in given}
    assert given <= allowed, given - allowed
    for r in rows:
        assert isinstance(json.loads(r["detail"]), dict), r
    assert len(rows) == sum(s["rejected"] for s in stats["stages"].values())
    return len(rows)


def check_card_extras(folder) -> None:
    """CARD.md ends with its licence (and the paper's citation), README.md embeds CARD.md,
    and every figure the card shows is a PNG in the folder, listed in stats.json."""
    import re

    folder = pathlib.Path(folder)
    card = (folder / "CARD.md").read_text(encoding="utf-8")
    readme = (folder / "README.md").read_text(encoding="utf-8")
    stats = json.loads((folder / "stats.json").read_text(encoding="utf-8"))
    assert "## Licence" in card and "License: other." in card
    if stats["job"] != "evaluate":
        assert "## Citation" in card and "```bibtex" in card
    assert card.strip() in readme
    shown = re.findall(r"!\[[^\]]*\]\((figures/[^)]+\.png)\)", card)
    drawn = [f["file"] for f in stats.get("figures", []) if "missing" not in f]
    assert shown == drawn
    for name in shown:
        assert (folder / name).read_bytes().startswith(b"\x89PNG\r\n\x1a\n"), name


def check_dataset_card(folder) -> dict:
    """The output folder's README.md is a Hugging Face dataset card whose YAML front matter
    is valid and whose configs load with `datasets.load_dataset` offline, with the splits and
    row counts of the parquet files (pandas); an empty table loads with streaming=True.
    Returns {config: {split: rows}}."""
    import glob
    import tempfile

    import pandas as pd
    import yaml

    datasets = pytest.importorskip("datasets")
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    datasets.disable_progress_bars()
    folder = pathlib.Path(folder)
    check_rejects(folder)
    check_card_extras(folder)
    text = (folder / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    meta = yaml.safe_load(text.split("---\n", 2)[1])
    assert meta["license"] and meta["language"] and meta["task_categories"] and meta["size_categories"]
    tables = {p.parent.name for p in folder.glob("*/*.parquet")}
    assert {c["config_name"] for c in meta["configs"]} == tables
    found = {}
    for config in meta["configs"]:
        expected = {
            f["split"]: sum(len(pd.read_parquet(p)) for p in glob.glob(str(folder / f["path"])))
            for f in config["data_files"]
        }
        cache = tempfile.mkdtemp()
        if sum(expected.values()):
            ds = datasets.load_dataset(str(folder), config["config_name"], cache_dir=cache)
            got = {split: d.num_rows for split, d in ds.items()}
        else:
            ds = datasets.load_dataset(str(folder), config["config_name"], cache_dir=cache, streaming=True)
            got = {split: sum(1 for _ in d) for split, d in ds.items()}
        assert got == expected, config["config_name"]
        found[config["config_name"]] = got
    return found
