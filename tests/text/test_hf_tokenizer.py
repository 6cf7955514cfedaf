"""annotators.text.hf and annotators.text.cuts: a tokenizer.json read offline, cuts that keep
the text verbatim and hold at most the asked tokens when encoded on their own."""

from __future__ import annotations

import json

import pytest
from conftest import write_tokenizer_json

from annotators.text.cuts import Cut, Offsets, fit_heads, fit_tails
from annotators.text.hf import load_hf
from annotators.text.tokenizers import get_tokenizer

SAMPLE = (
    "It was a dark and stormy night; the rain fell in torrents, except at occasional "
    "intervals, when it was checked by a violent gust of wind which swept up the streets. "
    "“Don’t,” said Émile — café, naïve, 中文字, 😀 and the lamps of London. "
) * 20
MIXED = "Héllo 😀 wörld — “quoted” 中文 text\n\n  CHAPTER II.  end"


@pytest.fixture(scope="module", params=["bpe", "wordpiece"])
def tok(request, tmp_path_factory):
    path = write_tokenizer_json(tmp_path_factory.mktemp(request.param), [SAMPLE[:400]], request.param, 300)
    return load_hf(str(path))


def test_spans_are_the_librarys_offsets_one_per_token(tok):
    spans = tok.spans(MIXED)
    assert len(spans) == tok.count(MIXED) == tok.counts([MIXED, ""])[0] and tok.counts([]) == []
    assert all(0 <= s <= e <= len(MIXED) for s, e in spans)
    assert tok.tokens_many([MIXED]) == [tok.tokens(MIXED)]


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 8, 13, 40, 10_000])
def test_head_and_tail_hold_at_most_n_tokens_and_keep_the_text(tok, n):
    for text in (MIXED, SAMPLE[:700]):
        head, tail = tok.head(text, n), tok.tail(text, n)
        assert text.startswith(head) and text.endswith(tail)
        assert tok.count(head) <= n and tok.count(tail) <= n
        if n >= tok.count(text):
            assert tok.count(head) == tok.count(text) == tok.count(tail)


def test_heads_of_plain_text_hold_exactly_n(tok):
    text = SAMPLE[:2000]
    for n in range(1, 120, 7):
        assert tok.count(tok.head(text, n)) == n


def test_a_character_of_several_byte_tokens_is_never_split(tmp_path):
    tok = load_hf(str(write_tokenizer_json(tmp_path, ["plain ascii text only"], "bpe", 280)))
    text = "ab😀cd"  # the emoji is 4 byte tokens sharing one character's offsets
    assert tok.spans(text)[2:6] == [(2, 3)] * 4
    assert [tok.head(text, n) for n in range(10)] == [
        "",
        "a",
        "ab",
        "ab",
        "ab",
        "ab",
        "ab😀",
        "ab😀c",
        "ab😀cd",
        "ab😀cd",
    ]
    assert [tok.tail(text, n) for n in range(8)] == ["", "d", "cd", "cd", "cd", "cd", "😀cd", "b😀cd"]


def test_tails_and_heads_inside_a_long_text_fit_in_one_batch(tok):
    text = SAMPLE[:3000]
    offsets = Offsets.of(tok.spans(text))
    ends = [200, 1000, 2999, 5]
    tails = fit_tails(tok, [Cut(text, offsets, at, 50) for at in ends])
    for at, (start, count) in zip(ends, tails):
        assert count == tok.count(text[start:at]) <= 50
    heads = fit_heads(tok, [Cut(text, offsets, at, 30) for at in (0, 17, 999, 2990)])
    for at, (end, count) in zip((0, 17, 999, 2990), heads):
        assert count == tok.count(text[at:end]) <= 30 and end >= at


def test_name_is_the_hash_of_the_tokenizer_not_of_its_path(tmp_path):
    path = write_tokenizer_json(tmp_path / "a", [SAMPLE[:400]], "bpe", 300)
    (tmp_path / "b").mkdir()
    pretty = json.loads(path.read_text(encoding="utf-8"))
    (tmp_path / "b" / "other.json").write_text(json.dumps(pretty, indent=1), encoding="utf-8")
    names = {
        get_tokenizer(f"hf:{path}").name,
        get_tokenizer(f"hf:{path.parent}").name,
        load_hf(str(tmp_path / "b" / "other.json")).name,
    }
    assert len(names) == 1 and names.pop().startswith("hf:BPE:")


def test_a_models_truncation_and_padding_are_ignored(tmp_path):
    path = write_tokenizer_json(tmp_path, [SAMPLE[:400]], "bpe", 300)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["truncation"] = {"direction": "Right", "max_length": 8, "strategy": "LongestFirst", "stride": 0}
    path.write_text(json.dumps(data), encoding="utf-8")
    assert load_hf(str(path)).count(SAMPLE[:500]) > 8


@pytest.mark.parametrize(
    "spec, message",
    [
        ("hf:/no/such/file.json", "no such file or folder"),
        ("hf:", "needs a path"),
        ("gpt2:/no/such/folder", "no GPT-2 vocabulary"),
    ],
)
def test_bad_specs_say_what_is_wrong(spec, message):
    with pytest.raises(ValueError, match=message):
        get_tokenizer(spec)


def test_an_invalid_file_is_a_value_error(tmp_path):
    (tmp_path / "tokenizer.json").write_text('{"model": {"type": "BPE"', encoding="utf-8")
    with pytest.raises(ValueError, match="not a tokenizers tokenizer.json"):
        get_tokenizer(f"hf:{tmp_path}")
    (tmp_path / "x.json").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ValueError, match="cannot read"):
        get_tokenizer(f"hf:{tmp_path / 'x.json'}")
