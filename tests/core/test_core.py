"""annotators.core: keep-first dedup, P/R/F1, and the one catalogue of reject reasons."""

from __future__ import annotations

import ast
import pathlib

import pytest

from annotators.core.dedup import keep_first
from annotators.core.metrics import prf
from annotators.core.outcome import Drop
from annotators.core.reasons import SHARED, catalogue, meaning, reasons_markdown

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_keep_first_keeps_the_earliest_by_order_not_arrival():
    group = [{"id": "b.jsonl:3"}, {"id": "a.jsonl:9"}, {"id": "a.jsonl:2"}]
    out = keep_first(group, order=lambda r: r["id"], input_id=lambda r: r["id"], reason="exact_duplicate")
    assert out == [
        ("a.jsonl:2", [{"id": "a.jsonl:2"}]),
        ("a.jsonl:9", Drop("exact_duplicate", "same as a.jsonl:2")),
        ("b.jsonl:3", Drop("exact_duplicate", "same as a.jsonl:2")),
    ]
    assert (
        keep_first(list(reversed(group)), order=lambda r: r["id"], input_id=lambda r: r["id"], reason="exact_duplicate")
        == out
    )
    assert keep_first([], order=str, input_id=str, reason="duplicate_id") == []


@pytest.mark.parametrize(
    "hits,pred,gold,expected",
    [(3, 4, 6, (0.75, 0.5, 0.6)), (0, 0, 5, (0.0, 0.0, 0.0)), (0, 3, 0, (0.0, 0.0, 0.0)), (2, 2, 2, (1.0, 1.0, 1.0))],
)
def test_prf(hits, pred, gold, expected):
    assert prf(hits, pred, gold) == pytest.approx(expected)


def test_catalogue_has_one_meaning_per_code_and_renders_for_cards():
    codes = catalogue()
    assert set(SHARED) <= set(codes)
    assert all(isinstance(m, str) and m.strip() for m in codes.values())
    table = reasons_markdown(["malformed_json", "blank_line", "malformed_json"])
    assert table.count("`malformed_json`") == 1 and "| `blank_line` | an empty line" in table
    with pytest.raises(KeyError):
        meaning("no_such_reason")


def _drop_codes(path: pathlib.Path) -> set[str]:
    """Every string literal passed as the first argument of Drop(...) in a module."""
    codes = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Drop" and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                codes.add(first.value)
    return codes


def test_every_literal_drop_reason_in_the_project_is_in_the_catalogue():
    known = catalogue()
    missing = {}
    for path in sorted((ROOT / "annotators").rglob("*.py")) + sorted((ROOT / "pipelines").rglob("*.py")):
        unknown = {c for c in _drop_codes(path) if c not in known}
        if unknown:
            missing[str(path.relative_to(ROOT))] = sorted(unknown)
    assert missing == {}


def test_json_loads_refuses_a_lone_surrogate_and_keeps_pairs_and_literal_backslashes():
    import json

    from annotators.core.jsonl import json_object, loads

    assert loads('{"s": "\\ud83d\\ude00 ok"}') == {"s": "\U0001f600 ok"}  # a pair is one character
    assert loads('{"s": "\\\\ud800"}') == {"s": "\\ud800"}  # an escaped backslash, then text
    for text, column in (('{"id": "x\\udc00"}', 10), ('{"\\ud800k": 1}', 3), ('["\\ud83d\\ude00", "\\ud83d"]', 19)):
        with pytest.raises(json.JSONDecodeError) as err:
            loads(text)
        assert err.value.msg.startswith("lone surrogate \\u") and err.value.colno == column, (text, err.value)
    drop = json_object('{"id": "x\\udc00"}')
    assert drop.reason == "malformed_json" and "lone surrogate \\udc00" in drop.detail


@pytest.mark.parametrize(
    "line, pretty",
    [
        ("[", True),
        ("{", True),
        ("  {", True),
        ('    "story": "小猫在河边钓鱼。",', True),
        ('"id": "01",', True),  # json.dumps(indent=0)
        ("  },", True),
        ("]", True),
        ('{"id": "1", "story": "小猫"},', True),  # an array written an element a line
        ('{"id": "1", "story": "小猫', False),  # a truncated JSON line
        ("{oops", False),
        ("   ", False),
    ],
)
def test_lines_of_a_pretty_printed_document_are_told_from_broken_json_lines(line, pretty):
    from annotators.core.jsonl import PRETTY_HINT, looks_pretty_printed, malformed_detail

    assert looks_pretty_printed(line) is pretty and looks_pretty_printed(line.encode("utf-8")) is pretty
    detail = malformed_detail("Expecting value", line)
    assert detail == ("Expecting value; " + PRETTY_HINT if pretty else "Expecting value")


def _json_line_readers():
    """Every reader of a JSON-lines input, as `line bytes -> record | Drop`."""
    from annotators.audits.records import parse_record
    from annotators.chapterbreak.ao3 import parse_json_line
    from annotators.evaluate.steps import _json_object
    from annotators.lot.clozet import parse_annotation
    from annotators.lot.official import official_outgen_stats
    from annotators.lot.steps import parse_review_line
    from annotators.lot.story import parse_story_record
    from annotators.stories.sources import json_line_to_raw
    from annotators.storium.edits import parse_edit_line

    return {
        "stories": lambda raw: json_line_to_raw("f.json:2", raw, source="dump", license="x"),
        "lot stories": lambda raw: parse_story_record("f.json:2", raw),
        "lot annotations": lambda raw: parse_annotation("f.json:2", raw),
        "lot official": lambda raw: official_outgen_stats("f.json:2", raw),
        "lot reviews": lambda raw: parse_review_line("f.json:2", raw),
        "edits": parse_edit_line,
        "ao3": lambda raw: parse_json_line("f.json:2", raw),
        "audits": lambda raw: parse_record("json", raw),
        "evaluate": _json_object,
    }


@pytest.mark.parametrize("reader", sorted(_json_line_readers()))
def test_every_json_lines_reader_hints_at_a_pretty_printed_file(reader):
    from annotators.core.jsonl import PRETTY_HINT

    parse = _json_line_readers()[reader]
    for line in (b"[", b"  {", '    "story": "小猫在河边钓鱼。",'.encode()):
        drop = parse(line)
        assert drop.reason == "malformed_json" and drop.detail.endswith(PRETTY_HINT), (reader, line, drop)
    broken = parse(b'{"id": "1", "story": "x')
    assert broken.reason == "malformed_json" and PRETTY_HINT not in broken.detail
