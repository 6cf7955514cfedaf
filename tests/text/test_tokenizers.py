"""annotators.text.tokenizers: one interface, spans that cut text verbatim."""

from __future__ import annotations

import pytest

from annotators.text.tokenizers import get_tokenizer

EN = 'He said: "don\'t go" -- now.\n\nCHAPTER II.\nIt rained.'


@pytest.mark.parametrize(
    "spec,expected",
    [
        ("words_punct_v1", ["He", "said", ":", '"', "don't", "go", '"', "-", "-", "now", "."]),
        ("word_punct_chars", ["He", "said", ":", '"', "don", "'", "t", "go", '"', "-", "-", "now", "."]),
        ("word_punct_runs", ["He", "said", ":", '"', "don", "'", "t", "go", '"', "--", "now", "."]),
        ("whitespace_v1", ["He", "said:", "\"don't", 'go"', "--", "now."]),
    ],
)
def test_regex_tokenizers(spec, expected):
    tok = get_tokenizer(spec)
    assert tok.name == spec
    first = EN.split("\n")[0]
    assert tok.tokens(first) == expected
    assert tok.count(first) == len(expected)
    assert [first[s:e] for s, e in tok.spans(first)] == expected


def test_whitespace_tokens_equal_str_split():
    text = "a\u3000b\x1fc\td  e\u00a0f"
    assert get_tokenizer("whitespace_v1").tokens(text) == text.split()


@pytest.mark.parametrize("n", [0, 1, 5, 10_000])
def test_head_and_tail_cut_the_text_verbatim(n):
    tok = get_tokenizer("words_punct_v1")
    head, tail = tok.head(EN, n), tok.tail(EN, n)
    assert EN.startswith(head) and EN.endswith(tail)
    assert tok.count(head) == min(n, tok.count(EN)) == tok.count(tail)


def test_jieba_tokens_and_spans_agree_and_drop_whitespace():
    text = "小明 今天去了公园。\n他很高兴！"
    for spec in ("jieba", "jieba_nohmm"):
        tok = get_tokenizer(spec)
        words = tok.tokens(text)
        assert words and all(w.strip() for w in words)
        assert [text[s:e] for s, e in tok.spans(text)] == words
        assert "".join(words) == "".join(text.split())


def test_unknown_tokenizer_names_the_known_ones():
    with pytest.raises(ValueError, match="words_punct_v1"):
        get_tokenizer("sentencepiece")


@pytest.mark.parametrize("name", ["words_punct_v1", "word_punct_chars", "word_punct_runs", "whitespace_v1"])
def test_a_regex_head_reads_only_the_start_and_cuts_as_the_whole_text_does(name):
    """ChapterBreak cuts a suffix of every later chapter at every boundary: tokenizing whole
    chapters made a 365-chapter book's examples take 40 s. The head's spans are the first
    matches, and every cut equals the one over all of the text's spans."""
    import random

    from annotators.text.cuts import Cut, Offsets, fit_heads

    tok = get_tokenizer(name)
    rng = random.Random(7)
    pieces = ["word", "don't", "l'homme", ",", "...", " ", "\n\n", "Chapter", "12", "é", "—", "’s"]
    for _ in range(200):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 400)))
        n = rng.randrange(1, 150)
        spans = tok.spans(text)
        assert tok.window_spans(text, n) == spans[: n + 2]
        whole = fit_heads(tok, [Cut(text, Offsets.of(spans), 0, n)])[0]
        assert tok.head_counted(text, n) == (text[: whole[0]], whole[1])
