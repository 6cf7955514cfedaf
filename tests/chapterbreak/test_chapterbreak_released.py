"""The released JSON files (`card.ReleasedWriter`) keep json.dumps's bytes while their text is
escaped by orjson: any text, control characters, quotes, non-ASCII and lone surrogates included."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from annotators.chapterbreak.card import ReleasedWriter, _item_json, released_json

# every code point, surrogates (category Cs) included: orjson refuses those, json escapes them
ANY_TEXT = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()), max_size=60)
BOOKISH = st.text(alphabet=st.sampled_from('ab "\\\n\r\t\x00\x1f\x7f\u00e9\u2014\u201c\u2028\U0001f600'), max_size=60)


@settings(max_examples=400, deadline=None)
@given(ANY_TEXT | BOOKISH, ANY_TEXT | BOOKISH, st.lists(ANY_TEXT | BOOKISH, max_size=4))
def test_an_item_is_written_as_json_dumps_writes_it(ctx, pos, negs):
    expected = json.dumps({"ctx": ctx, "pos": pos, "negs": negs}, ensure_ascii=False)
    assert _item_json(ctx, pos, tuple(negs)) == expected


def test_a_released_file_reads_back_as_its_rows_and_keeps_the_old_bytes():
    rows = [
        {
            "source": "pg19",
            "book_id": "b1",
            "cut_offset": 5,
            "prefix": 'He said "no".\n',
            "gold": "Then\tit",
            "negatives": ["x", "y\u2028"],
        },
        {"source": "pg19", "book_id": "b1", "cut_offset": 9, "prefix": "caf\u00e9 \x01", "gold": "g", "negatives": []},
        {"source": "ao3", "book_id": "w7", "cut_offset": 1, "prefix": "\U0001f600", "gold": "\\", "negatives": ["n"]},
    ]
    text = released_json(rows)
    parsed = json.loads(text)
    assert parsed["pg19"]["b1"][0] == {"ctx": 'He said "no".\n', "pos": "Then\tit", "negs": ["x", "y\u2028"]}
    assert parsed["pg19"]["b1"][1]["negs"] == []
    assert parsed["ao3"]["w7"] == [{"ctx": "\U0001f600", "pos": "\\", "negs": ["n"]}]
    # the layout the writer wrote before orjson: json.dumps of each item, ", " and ": " separators
    old = (
        '{"ao3": {"w7": [{"ctx": "\U0001f600", "pos": "\\\\", "negs": ["n"]}]}, '
        '"pg19": {"b1": [{"ctx": "He said \\"no\\".\\n", "pos": "Then\\tit", "negs": ["x", "y\u2028"]}, '
        '{"ctx": "caf\u00e9 \\u0001", "pos": "g", "negs": []}]}}'
    )
    assert text == old


def test_a_writer_for_one_kind_and_length_skips_other_rows():
    writer = ReleasedWriter("cause", 512)
    other = {"boundary": "chapter", "prefix_length": 512}
    assert writer.add(other) is None
