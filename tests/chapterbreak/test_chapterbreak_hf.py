"""`--tokenizer hf:PATH`: ChapterBreak lengths in a model's own tokenizer.json, on real books.

The tokenizers are trained here, offline, with the `tokenizers` library (a GPT-2-style
byte-level BPE and a BERT-style WordPiece); every cut text is encoded again on its own with
the same file: golds hold exactly 128 of its tokens and prefixes at most the asked length.
"""

from __future__ import annotations

import json
import pathlib
import shutil

import pandas as pd
import pytest
from conftest import shared_path, write_tiny_gpt2, write_tokenizer_json

from annotators.chapterbreak.gutenberg import decode_text
from annotators.text.tokenizers import get_tokenizer
from pipelines.chapterbreak import run

pytestmark = pytest.mark.slow  # ChapterBreak builds on real books

REAL = ("pg_2024/pg84.txt", "pg_2017/pg11.txt")
LENGTHS = (256, 2048)


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    """The real books, copied into one folder (the job reads one glob)."""
    root, folder = shared_path("gutenberg"), tmp_path_factory.mktemp("books")
    found = [root / rel for rel in REAL if (root / rel).exists()] or pytest.skip("no real books")
    for path in found:
        shutil.copy(path, folder / path.name)
    return folder


@pytest.fixture(scope="module")
def vocab(books, tmp_path_factory):
    base = tmp_path_factory.mktemp("cb_hf")
    texts = [decode_text(p.read_bytes())[0] for p in sorted(books.glob("*.txt"))]  # as the job decodes
    return {kind: write_tokenizer_json(base / kind, texts, kind, vocab_size=1500) for kind in ("bpe", "wordpiece")}


def build(books, out: pathlib.Path, spec: str) -> pd.DataFrame:
    run(
        [
            "--gutenberg",
            str(books / "*.txt"),
            "--output",
            str(out),
            "--tokenizer",
            spec,
            "--prefix_lengths",
            ",".join(map(str, LENGTHS)),
            "--subsets",
            "cause,dialogue",
            "--seed",
            "3",
        ]
    )
    return pd.read_parquet(out / "examples")


def check_lengths(ex: pd.DataFrame, tok) -> None:
    """Each cut text, encoded on its own with the same tokenizer, holds what the row says."""
    golds = ex.drop_duplicates("boundary_id")
    prefixes = tok.counts(list(ex.prefix))
    gold_counts = tok.counts(list(golds.gold))
    assert list(ex.prefix_tokens) == prefixes
    assert all(n <= length for n, length in zip(prefixes, ex.prefix_length))
    assert list(golds.gold_tokens) == gold_counts
    chapter = golds.boundary == "chapter"
    assert chapter.sum() > 10
    assert {c for c, is_chapter in zip(gold_counts, chapter) if is_chapter} == {128}
    negatives = [n for row in golds.negatives for n in row]
    assert set(tok.counts(negatives)) == {128}  # every chapter opening and subset position: 128 or more
    assert {c for c, is_chapter in zip(gold_counts, chapter) if not is_chapter} == {128}
    # a prefix falls short of its length only where the book has no more text before the cut
    # (a few tokens short: a character of several byte tokens, a word's pieces at the start)
    for _, rows in ex.sort_values("prefix_length").groupby("boundary_id"):
        short, long = rows.iloc[0], rows.iloc[-1]
        if short.prefix_tokens < short.prefix_length - 4:
            assert long.prefix == short.prefix, short.example_id


def test_bpe_file_and_folder_give_the_same_build(books, vocab, tmp_path):
    tok = get_tokenizer(f"hf:{vocab['bpe']}")
    ex = build(books, tmp_path / "file", f"hf:{vocab['bpe']}")
    assert set(ex.tokenizer) == {tok.name} and tok.name.startswith("hf:BPE:")
    check_lengths(ex, tok)
    build(books, tmp_path / "folder", f"hf:{vocab['bpe'].parent}")
    first, second = tmp_path / "file", tmp_path / "folder"
    files = sorted(f.relative_to(first) for f in first.rglob("*") if f.is_file())
    assert files == sorted(f.relative_to(second) for f in second.rglob("*") if f.is_file())
    for rel in files:  # tables, stats.json, CARD.md, figures: the same bytes
        assert (first / rel).read_bytes() == (second / rel).read_bytes(), rel
    stats = json.loads((tmp_path / "file" / "stats.json").read_text())
    assert stats["config"]["tokenizer"] == stats["config"]["examples"]["tokenizer"] == tok.name
    assert str(vocab["bpe"].parent) not in json.dumps(stats)
    assert tok.name in (tmp_path / "file" / "CARD.md").read_text()


def test_wordpiece_tokenizer_json(books, vocab, tmp_path):
    tok = get_tokenizer(f"hf:{vocab['wordpiece'].parent}")
    ex = build(books, tmp_path / "wp", f"hf:{vocab['wordpiece'].parent}")
    assert set(ex.tokenizer) == {tok.name} and tok.name.startswith("hf:WordPiece:")
    check_lengths(ex, tok)
    text = ex.prefix.iloc[0]
    assert tok.count(text) == len(tok.spans(text)) and text.lower() != text  # cased text, uncased tokens


def test_gpt2_files_converted_to_tokenizer_json_give_the_same_spans(tmp_path):
    """The README's conversion of GPT-2's vocab.json + merges.txt, and the `gpt2:DIR` alias."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    folder = write_tiny_gpt2(tmp_path)
    tok = Tokenizer(models.BPE.from_file(str(folder / "vocab.json"), str(folder / "merges.txt")))
    tok.pre_tokenizer, tok.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
    (tmp_path / "converted").mkdir()
    tok.save(str(tmp_path / "converted" / "tokenizer.json"))
    converted, alias = get_tokenizer(f"hf:{tmp_path / 'converted'}"), get_tokenizer(f"gpt2:{folder}")
    text = "the cat sat on the mat — “é” 中文\n\nCHAPTER II.  the end"
    assert converted.spans(text) == alias.spans(text) and converted.name == alias.name
    assert [text[a:b] for a, b in alias.spans(text)][:4] == ["the", " cat", " ", "s"]
