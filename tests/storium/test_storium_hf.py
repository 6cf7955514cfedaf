"""`--tokenizer hf:PATH` in the storium job: budgets counted in a model's own tokenizer.json
(trained here, offline, with the `tokenizers` library on the fixture games' texts)."""

from __future__ import annotations

import json
import pathlib

import pandas as pd
import pytest
from conftest import write_tokenizer_json

from annotators.storium.leaves import MISSING
from annotators.text.tokenizers import get_tokenizer
from pipelines import storium

FIXTURES = pathlib.Path(__file__).parents[1] / "fixtures" / "storium"


def _game_texts() -> list[str]:
    out = []

    def walk(value):
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, dict):
            [walk(v) for v in value.values()]
        elif isinstance(value, list):
            [walk(v) for v in value]

    for path in sorted(FIXTURES.glob("*.json")):
        try:
            walk(json.loads(path.read_text(encoding="utf-8-sig")))
        except (ValueError, UnicodeDecodeError):
            continue
    return out


@pytest.fixture(scope="module")
def vocab(tmp_path_factory):
    base = tmp_path_factory.mktemp("storium_hf")
    return {
        kind: write_tokenizer_json(base / kind, _game_texts(), kind, vocab_size=300) for kind in ("bpe", "wordpiece")
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    "kind, form, budget", [("bpe", "file", 40), ("bpe", "folder", 1024), ("wordpiece", "file", 60)]
)
def test_budgets_in_the_models_tokens(vocab, tmp_path, kind, form, budget):
    path = vocab[kind] if form == "file" else vocab[kind].parent
    out = tmp_path / "out"
    storium.run(
        [
            "--games",
            str(FIXTURES / "*.json"),
            "--output",
            str(out),
            "--budget",
            str(budget),
            "--tokenizer",
            f"hf:{path}",
        ]
    )
    tok = get_tokenizer(f"hf:{vocab[kind]}")
    packed = pd.read_parquet(out / "packed")
    assert len(packed) > 0 and set(packed.tokenizer) == {tok.name}
    assert tok.name.startswith("hf:BPE:" if kind == "bpe" else "hf:WordPiece:")
    cut_short = 0
    for row in packed.itertuples():
        segs = list(row.segments)
        assert row.total_tokens <= budget
        assert row.total_tokens == sum(s["tokens"] for s in segs) + row.special_tokens
        for s in segs:
            if s["text"] != MISSING:  # the special token counts one
                assert tok.count(s["text"]) == s["tokens"] <= s["true_tokens"], s
        short = sum(s["tokens"] < s["true_tokens"] for s in segs)
        assert short == 0 or row.true_total_tokens > budget  # what fits is kept whole
        cut_short += short
    assert cut_short > 0
    stats = json.loads((out / "stats.json").read_text())
    assert stats["config"]["tokenizer"] == tok.name and str(path) not in json.dumps(stats["config"])
    assert f"tokenizer: `{tok.name}`" in (out / "CARD.md").read_text()


@pytest.mark.parametrize(
    "spec, message",
    [
        ("hf:/no/such/tokenizer.json", "no such file or folder"),
        ("hf:{tmp}", "holds no tokenizer.json"),
        ("hf:{tmp}/bad.json", "not a tokenizers tokenizer.json"),
        ("hf:", "needs a path"),
        ("gpt2:{tmp}", "no GPT-2 vocabulary"),
    ],
)
def test_a_wrong_tokenizer_path_is_a_usage_error(tmp_path, capsys, spec, message):
    (tmp_path / "bad.json").write_text('{"version": "1.0", "model": ', encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        storium.run(
            [
                "--games",
                str(FIXTURES / "*.json"),
                "--output",
                str(tmp_path / "o"),
                "--tokenizer",
                spec.format(tmp=tmp_path),
            ]
        )
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "error: argument --tokenizer:" in err and message in err and "Traceback" not in err


@pytest.mark.slow
def test_same_bytes_with_two_worker_processes(vocab, tmp_path):
    spec = f"hf:{vocab['bpe']}"
    base = ["--games", str(FIXTURES / "*.json"), "--budget", "40", "--tokenizer", spec]
    storium.run([*base, "--output", str(tmp_path / "one")])
    storium.run(
        [*base, "--output", str(tmp_path / "two"), "--direct_running_mode=multi_processing", "--direct_num_workers=2"]
    )
    files = sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "two") for p in (tmp_path / "two").rglob("*") if p.is_file())
    for rel in files:
        assert (tmp_path / "one" / rel).read_bytes() == (tmp_path / "two" / rel).read_bytes(), rel
