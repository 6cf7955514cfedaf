"""The character shares the cleaning rules use, checked against their definitions character
by character (they are computed with regular expressions and str.translate for speed)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from annotators.text import charset, zh_clean

TEXT = st.text(
    alphabet=st.one_of(
        st.characters(max_codepoint=0x2100),
        st.sampled_from(sorted(charset.COMMON)),
        st.characters(min_codepoint=0xFF00, max_codepoint=0xFF70),
    ),
    max_size=60,
)


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_shares_and_width_folding_follow_their_definitions(text):
    wide = [c for c in text if ord(c) > 127]
    assert charset.common_score(text) == (sum(c in charset.COMMON for c in wide) / len(wide) if wide else 0.0)
    chars = [c for c in text if not c.isspace()]
    assert charset.latin_share(text) == (sum("\x80" <= c <= "\xff" for c in chars) / len(chars) if chars else 0.0)
    folded = "".join(chr(ord(c) - 0xFEE0) if c.isalnum() and 0xFF10 <= ord(c) <= 0xFF5A else c for c in text)
    assert zh_clean._fold_width(text) == folded


def test_no_break_and_next_line_spaces_are_not_latin_letters():
    assert charset.latin_share("\xa0\x85é") == 1.0
    assert zh_clean._fold_width("ＡＢ１２ｚ，：！") == "AB12z，：！"
