"""Tokenizers for packing: the default regex one and subword ones read with the `tokenizers`
library (`gpt2:DIR` on GPT-2's file layout, here a tiny vocabulary the test writes)."""

from __future__ import annotations

import pytest
from conftest import write_tiny_gpt2

from annotators.storium.context import SegmentSpec
from annotators.storium.pack import cut, cut_segments
from annotators.storium.tokens import RegexTokenizer, make_tokenizer


def test_regex_tokens_are_words_and_punctuation_runs():
    text = '"Hold it," she said -- don\'t!'
    assert [text[a:b] for a, b in RegexTokenizer().spans(text)] == [
        '"',
        "Hold",
        "it",
        ',"',
        "she",
        "said",
        "--",
        "don",
        "'",
        "t",
        "!",
    ]
    assert make_tokenizer("regex").name == r"regex:\w+|[^\w\s]+"


@pytest.fixture
def tiny_gpt2(tmp_path):
    return write_tiny_gpt2(tmp_path)


def test_gpt2_files_apply_ranked_merges(tiny_gpt2):
    tok = make_tokenizer(f"gpt2:{tiny_gpt2}")
    text = "the cat sat on the mat"
    pieces = [text[a:b] for a, b in tok.spans(text)]
    assert pieces == ["the", " cat", " ", "s", "at", " ", "o", "n", " the", " ", "m", "at"]
    assert tok.name.startswith("hf:BPE:") and tok.count(text) == 12


def test_byte_pieces_of_one_character_are_never_cut_apart(tiny_gpt2):
    tok = make_tokenizer(f"gpt2:{tiny_gpt2}")
    text = "é!"
    spans = tok.spans(text)
    assert spans == [(0, 1), (0, 1), (1, 2)]  # two byte pieces of 'é' both span the whole character
    assert cut(text, spans, 1, "start") == "é"  # offsets alone: 'é' for one token, which is two
    segs = [
        (SegmentSpec(kind="entry", source_id="e", text=text, keep=keep), spans)
        for keep in ("start", "end", "start", "end", "end")
    ]
    # encoded on its own a cut holds at most the kept tokens: 'é' alone is 2 tokens
    assert cut_segments(tok, segs, [1, 1, 2, 2, 3]) == [("", 0), ("!", 1), ("é", 2), ("!", 1), ("é!", 3)]


def test_tokenizer_spec_without_files_fails_clearly(tmp_path):
    with pytest.raises(ValueError, match="no GPT-2 vocabulary"):
        make_tokenizer(f"gpt2:{tmp_path}")
    with pytest.raises(ValueError, match="holds no tokenizer.json"):
        make_tokenizer(f"hf:{tmp_path}")
    with pytest.raises(ValueError, match="hf:PATH"):
        make_tokenizer("sentencepiece")
