"""annotators.core.lcs and the bounded USER alignment (issue 28): exact on normal inputs,
seconds on pathological ones."""

import difflib
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from annotators.core.lcs import lcs_length
from annotators.evaluate import lot_metrics
from annotators.storium.edits import Edit
from annotators.storium.steps import score
from annotators.storium.user_metric import AlignmentTooCostly, UserConfig, matched_blocks, user_scores, user_tokens


def textbook_lcs(a, b):
    row = [0] * (len(b) + 1)
    for x in a:
        diag = 0
        for j, y in enumerate(b, start=1):
            above = row[j]
            row[j] = diag + 1 if x == y else max(row[j], row[j - 1])
            diag = above
    return row[-1]


tokens = st.lists(st.sampled_from(["the", "a", "cat", "dog", "ran", "7", "x" * 30, "猫"]), max_size=60)


@settings(max_examples=300, deadline=None)
@given(tokens, tokens)
def test_lcs_equals_the_textbook_programme(a, b):
    assert lcs_length(a, b) == textbook_lcs(a, b)
    assert lot_metrics.lcs_length(a, b) == lot_metrics.lcs_table(a, b)[len(a)][len(b)]


@settings(max_examples=200, deadline=None)
@given(tokens, tokens, st.booleans())
def test_user_blocks_are_difflibs_own_under_the_limit(gen, pub, autojunk):
    matcher = difflib.SequenceMatcher(None, gen, pub, autojunk=autojunk)
    stop = UserConfig().stop_words
    expected = [
        (i1, i2 - i1)
        for tag, i1, i2, _, _ in matcher.get_opcodes()
        if tag == "equal" and any(t not in stop for t in gen[i1:i2])
    ]
    assert matched_blocks(gen, pub, UserConfig(autojunk=autojunk)) == expected


def test_characters_lcs_of_long_texts_is_fast():
    a, b = "ab" * 50_000, "ba" * 50_000
    start = time.perf_counter()
    assert lcs_length(a, b) == 99_999
    assert time.perf_counter() - start < 5


def test_repetitive_edit_is_rejected_in_seconds_not_minutes():
    gen, pub = "a b " * 2000, "b a c " * 1400  # difflib alone: 68 s
    start = time.perf_counter()
    try:
        matched_blocks(user_tokens(gen), user_tokens(pub))
        raised = False
    except AlignmentTooCostly:
        raised = True
    assert raised and time.perf_counter() - start < 15  # minutes unbounded
    dropped = score(Edit("e1", gen, pub, "m", None, ()), UserConfig())
    assert dropped.reason == "over_size_limit" and dropped.detail["generated_chars"] == len(gen)


def test_ordinary_long_edit_is_still_scored():
    words = [f"w{(i * 7919) % 3001}" for i in range(5_000)]  # a 5,000-token edit (~30 KB), revised at 450 places
    gen, pub = " ".join(words), " ".join(w for i, w in enumerate(words) if i % 11) + " the end"
    start = time.perf_counter()
    s = user_scores(gen, pub)
    assert 0 < s.precision <= 1 and time.perf_counter() - start < 15
