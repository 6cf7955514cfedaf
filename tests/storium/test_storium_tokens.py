"""Tokenizers for packing: the default regex one and a byte-level BPE over local GPT-2 files
(here a tiny vocabulary written by the test, with the real files' layout)."""
from __future__ import annotations


import pytest

from annotators.storium.pack import cut
from annotators.storium.tokens import RegexTokenizer, make_tokenizer
from annotators.text.bpe import Gpt2Tokenizer, _byte_to_unicode
from conftest import write_tiny_gpt2


def test_regex_tokens_are_words_and_punctuation_runs():
    text = "\"Hold it,\" she said -- don't!"
    assert [text[a:b] for a, b in RegexTokenizer().spans(text)] == [
        '"', "Hold", "it", ',"', "she", "said", "--", "don", "'", "t", "!"]
    assert make_tokenizer("regex").name == r"regex:\w+|[^\w\s]+"


def test_byte_table_is_a_bijection_with_space_as_G_dot():
    table = _byte_to_unicode()
    assert len(set(table.values())) == 256 and table[32] == "\u0120" and table[ord("a")] == "a"


@pytest.fixture
def tiny_gpt2(tmp_path):
    return write_tiny_gpt2(tmp_path)


def test_bpe_applies_ranked_merges(tiny_gpt2):
    tok = Gpt2Tokenizer(str(tiny_gpt2))
    text = "the cat sat on the mat"
    pieces = [text[a:b] for a, b in tok.spans(text)]
    assert pieces == ["the", " cat", " ", "s", "at", " ", "o", "n", " the", " ", "m", "at"]
    assert tok.name == f"gpt2-bpe:{tiny_gpt2.name}"


def test_bpe_never_cuts_inside_a_character(tiny_gpt2):
    tok = Gpt2Tokenizer(str(tiny_gpt2))
    text = "é!"
    spans = tok.spans(text)
    assert spans == [(0, 1), (0, 1), (1, 2)]  # two byte pieces of 'é' map to the whole character
    assert cut(text, spans, 1, "start") == "é"


def test_gpt2_spec_without_files_fails_clearly(tmp_path):
    with pytest.raises(FileNotFoundError):
        make_tokenizer(f"gpt2:{tmp_path}")
    with pytest.raises(ValueError):
        make_tokenizer("sentencepiece")
