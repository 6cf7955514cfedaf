"""Every suffix holds exactly `suffix_tokens` tokens of the tokenizer, or all of its text.

A byte-level BPE keeps a blank line as one token at a text's end but splits it before a word,
so a verbatim cut can jump from N-1 tokens to N+1: here "...five six\\n\\n" holds 7 tokens
and "...five six\\n\\nseven" 9, so no verbatim suffix of this opening holds 8. Such a gold's
boundary is skipped and such a chapter or position is never drawn as a negative (one token
fewer would favour a suffix under a summed log-likelihood). The tokenizer is trained here,
offline, with the `tokenizers` library.
"""

from __future__ import annotations

import pytest
from conftest import write_tokenizer_json

from annotators.chapterbreak.examples import BookChapter, BookText, ExampleConfig, chapter_examples, exact_head
from annotators.chapterbreak.records import PoolOpening
from annotators.chapterbreak.subsets import subset_examples
from annotators.text.tokenizers import get_tokenizer

WORDS = "one two three four five six seven eight nine ten eleven twelve".split()
JUMP = "one two three four five six\n\nseven eight nine ten"  # 6 words, then a blank line
EVEN = "one two three four five six seven eight nine ten"


def opening(i: int, jump: bool = False, order=WORDS) -> str:
    """Ten words from order[i] on (each opening's first 8 tokens its own), a blank line after
    the sixth with `jump`."""
    words = (order[i:] + order[:i])[:10]
    return " ".join(words[:6]) + ("\n\n" if jump else " ") + " ".join(words[6:])


@pytest.fixture(scope="module")
def bpe(tmp_path_factory):
    rotations = [order[i:] + order[:i] for order in (WORDS, WORDS[::-1]) for i in range(len(WORDS))]
    texts = [" ".join(words) + "\n\n" for words in rotations] * 20
    path = write_tokenizer_json(tmp_path_factory.mktemp("exact"), texts, "bpe", vocab_size=600)
    tok = get_tokenizer(f"hf:{path}")
    assert tok.count(JUMP[: JUMP.index("seven")]) == 7 and tok.count(JUMP[: JUMP.index(" eight")]) == 9
    assert tok.count(" ".join(WORDS[:8])) == 8
    return f"hf:{path}"


def config(tokenizer: str, **kw) -> ExampleConfig:
    return ExampleConfig(suffix_tokens=8, prefix_lengths=(16,), tokenizer=tokenizer, subsets=(), **kw)


def test_exact_head_is_none_only_where_the_count_jumps(bpe):
    tok = get_tokenizer(bpe)
    assert exact_head(tok, EVEN, 8) == " ".join(WORDS[:8])
    assert exact_head(tok, JUMP, 8) is None
    assert exact_head(tok, "one two three", 8) == "one two three"  # shorter: all of it
    assert exact_head(tok, "one two three\n\n", 8) == "one two three\n\n"
    words = get_tokenizer("words_punct_v1")  # context-free: always exact
    assert exact_head(words, JUMP, 8) == "one two three four five six\n\nseven eight"
    # a shorter text is all of it but trailing whitespace, which no token holds
    assert exact_head(words, "one two three\n\n", 8) == "one two three"
    assert exact_head(words, "one two three\n\nfour", 3) == "one two three"


def test_a_gold_that_jumps_is_skipped_and_a_chapter_that_jumps_is_never_a_negative(bpe):
    bodies = [opening(i, jump=i in (1, 5)) for i in range(9)]
    chapters = [BookChapter(i, "", "", body) for i, body in enumerate(bodies)]
    rows = chapter_examples("b", "pg19", chapters, seed=0, config=config(bpe))
    tok = get_tokenizer(bpe)
    # gold 1 jumps (skipped); gold 2 draws its 5 negatives from 3, 4, 6, 7, 8 (5 jumps);
    # gold 3 has only 4 later chapters that do not jump
    assert [r["chapter_index"] for r in rows] == [2]
    assert sorted(rows[0]["negative_chapter_indices"]) == [3, 4, 6, 7, 8]
    assert tok.counts([rows[0]["gold"], *rows[0]["negatives"]]) == [8] * 6 and rows[0]["gold_tokens"] == 8
    # the default tokenizer cuts every opening exactly: gold 1 stays
    rows = chapter_examples("b", "pg19", chapters, seed=0, config=config("words_punct_v1"))
    assert [r["chapter_index"] for r in rows] == [1, 2, 3]


def test_a_subset_position_that_jumps_is_neither_gold_nor_negative(bpe):
    quoted = [f'"{opening(i)}," she said.' for i in range(10)]
    quoted[2] = '"one two three four five\n\nsix seven," she said.'  # '"' and 5 words: a jump at 8
    chapters = [BookChapter(0, "", "", "\n\n".join(quoted))]
    tok = get_tokenizer(bpe)
    book = BookText(chapters, bpe)
    rows = subset_examples("b", "pg19", chapters, "dialogue", seed=0, config=config(bpe, subset_per_book="0"))
    jump = book.text.index('"one two three four five\n\n')
    assert rows and all(r["cut_offset"] != jump for r in rows)
    texts = [t for r in rows for t in (r["gold"], *r["negatives"])]
    assert '"one two three four five\n\n' not in texts
    assert all(c == 8 for c in tok.counts(texts))


def test_out_of_book_negatives_hold_exactly_the_suffix(bpe):
    chapters = [BookChapter(i, "", "", opening(i)) for i in range(7)]
    tok = get_tokenizer(bpe)
    backwards = WORDS[::-1]  # openings no chapter of the book has
    pool = [PoolOpening(f"o{i}", 1, "", "", opening(i % 12, jump=i >= 20, order=backwards)) for i in range(22)]
    kept = set()
    for seed in range(6):
        rows = chapter_examples(
            "b", "pg19", chapters, seed=seed, config=config(bpe, negatives_from="out_of_book"), pool=pool
        )
        for r in rows:
            assert tok.counts(r["negatives"]) == [8] * 5
            assert not {"o20", "o21"} & set(r["negative_book_ids"])
            kept.add(r["chapter_index"])
    assert kept  # some draws missed the two openings that jump
