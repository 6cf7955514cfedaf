"""`--tokenizer hf:PATH` in the glge job: the low-frequency score counted over a model's own
subword tokens (a tokenizer.json trained here, offline, on the targets), checked against a
plain re-computation that calls the `tokenizers` library directly."""

from __future__ import annotations

import json
import pathlib
from collections import Counter

import pytest
from conftest import shared_path, write_tokenizer_json
from spacy.lang.en.stop_words import STOP_WORDS
from tokenizers import Tokenizer

from annotators.text.tokenizers import get_tokenizer
from pipelines.glge import run

TASKS = ("gigaword", "coqa")


def read_lines(path: pathlib.Path) -> list[str]:
    return path.read_bytes().decode("utf-8").split("\n")[:-1]


@pytest.fixture(scope="module")
def glge(tmp_path_factory) -> pathlib.Path:
    """Real GLGE-style targets laid out as tasks (60% train, 15% dev, 25% test)."""
    root = tmp_path_factory.mktemp("glge_hf") / "glge"
    for task in TASKS:
        lines = shared_path("glge", f"{task}.hard.test").read_bytes().split(b"\n")[:-1]
        cut1, cut2 = int(len(lines) * 0.6), int(len(lines) * 0.75)
        folder = root / f"{task}_data" / "org_data"
        folder.mkdir(parents=True)
        for split, tgt in (("train", lines[:cut1]), ("dev", lines[cut1:cut2]), ("test", lines[cut2:])):
            (folder / f"{split}.tgt").write_bytes(b"".join(t + b"\n" for t in tgt))
            (folder / f"{split}.src").write_bytes(b"".join(b"source %d\n" % i for i in range(len(tgt))))
    return root


def plain_hard(path: pathlib.Path, train: list[str], test: list[str], fraction: float) -> list[int]:
    """GLGE 2.4 over the tokenizer's tokens: each token's text without its spaces."""
    tok = Tokenizer.from_file(str(path))

    def toks(line: str) -> list[str]:
        low = line.lower()
        pieces = [low[a:b].strip() for a, b in tok.encode(low, add_special_tokens=False).offsets]
        return [w for w in pieces if any(c.isalnum() for c in w) and w not in STOP_WORDS]

    tf = Counter(w for line in test for w in toks(line))
    scored = sorted((sum(tf[w] for w in t) / len(t), i) for i, line in enumerate(train) if (t := toks(line)))
    return sorted(i for _, i in scored[: int(len(train) * fraction)])


@pytest.mark.slow
@pytest.mark.parametrize("kind, form", [("bpe", "file"), ("wordpiece", "folder")])
def test_levels_scored_in_the_models_tokens(glge, tmp_path, kind, form):
    texts = [line for task in TASKS for line in read_lines(glge / f"{task}_data" / "org_data" / "train.tgt")]
    path = write_tokenizer_json(tmp_path / kind, texts, kind, vocab_size=800)
    out = tmp_path / "out"
    run(
        [
            "--input",
            str(glge),
            "--output",
            str(out),
            "--seed",
            "3",
            "--tokenizer",
            f"hf:{path if form == 'file' else path.parent}",
        ]
    )
    for task in TASKS:
        org = glge / f"{task}_data" / "org_data"
        train, test = read_lines(org / "train.tgt"), read_lines(org / "test.tgt")
        for level, fraction in (("hard", 0.25), ("medium+", 0.5)):
            want = plain_hard(path, train, test, fraction)
            assert read_lines(out / level / f"{task}_data" / "org_data" / "train.tgt") == [train[i] for i in want]
    whitespace = tmp_path / "ws"
    run(["--input", str(glge), "--output", str(whitespace), "--seed", "3"])
    assert (out / "hard").joinpath(f"{TASKS[0]}_data", "org_data", "train.tgt").read_bytes() != (
        whitespace / "hard"
    ).joinpath(f"{TASKS[0]}_data", "org_data", "train.tgt").read_bytes()
    stats = json.loads((out / "stats.json").read_text())
    name = get_tokenizer(f"hf:{path}").name
    assert stats["config"]["en"]["tokenizer"] == name and name.startswith(("hf:BPE:", "hf:WordPiece:"))
    assert str(tmp_path / kind) not in json.dumps(stats["config"])


@pytest.mark.parametrize(
    "flag, value, message",
    [
        ("--tokenizer", "hf:/no/such/tokenizer.json", "no such file or folder"),
        ("--lot-tokenizer", "hf:{tmp}", "holds no tokenizer.json"),
        ("--tokenizer", "hf:{tmp}/bad.json", "not a tokenizers tokenizer.json"),
        ("--tokenizer", "bert", "unknown tokenizer 'bert'"),
    ],
)
def test_a_wrong_tokenizer_is_a_usage_error(tmp_path, capsys, flag, value, message):
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        run(["--input", str(tmp_path), "--output", str(tmp_path / "o"), flag, value.format(tmp=tmp_path)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {flag}" in err and message in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()
