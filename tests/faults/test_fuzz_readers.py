"""Hypothesis fuzzing of every reader and parser (issue 28): any bytes give records or a
catalogued Drop, never an exception, and a broken archive says how far reading got.

The bytes are built from the classes of fault the jobs meet: JSON of every shape and type,
invalid UTF-8, BOMs, NULs, UTF-16, GBK and Big5, control bytes, huge numbers, deep nesting.
"""

import bz2
import functools
import gzip
import json
import pathlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotators.audits import records as audit_records
from annotators.chapterbreak import ao3, gutenberg
from annotators.core.outcome import Drop
from annotators.core.reasons import catalogue
from annotators.core.sniff import legacy_file_reason, not_text_reason
from annotators.evaluate import steps as eval_steps
from annotators.evaluate.config import EvalConfig
from annotators.lot import story as lot_story
from annotators.lot.steps import parse_review_line
from annotators.stories import steps as story_steps
from annotators.storium.edits import parse_edit_line
from annotators.storium.games import parse_game
from pipelines.engine.compressed import ReadBreak, open_checked

KNOWN = set(catalogue())
FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
FIELDS = [
    "id",
    "example_id",
    "work_id",
    "title",
    "story",
    "text",
    "chapters",
    "generated",
    "published",
    "game_pid",
    "characters",
    "scenes",
    "outline",
    "label",
    "scores",
    "negatives",
    "split",
    "review",
]
records = st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=6)


def _encodings(text: str) -> st.SearchStrategy:
    return st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "gbk", "big5", "latin-1"]).map(
        lambda codec: text.encode(codec, errors="replace")
    )


raw_lines = st.one_of(
    st.binary(max_size=200),
    records.map(lambda r: json.dumps(r, ensure_ascii=False).encode("utf-8")),
    json_values.map(lambda v: json.dumps(v).encode("utf-8")),
    records.map(lambda r: json.dumps(r, ensure_ascii=False)).flatmap(_encodings),
    st.text(max_size=80).flatmap(_encodings),
    st.just(b"[" * 5000),
    st.just(b'{"id": 1e999999}'),
    st.just(b"\x00\x01\x02"),
)


def _checked(result, allowed=(list, tuple, dict)):
    if isinstance(result, Drop):
        assert result.reason in KNOWN, result.reason
    else:
        assert isinstance(result, allowed) or result is not None


PARSERS = {
    "edits": parse_edit_line,
    "storium_game": lambda raw: parse_game("g.json", raw),
    "audit_jsonl": lambda raw: audit_records.parse_record("jsonl", raw),
    "audit_text": lambda raw: audit_records.parse_record("text", raw),
    "lot_story": lambda raw: lot_story.parse_story_record("s.jsonl:1", raw),
    "lot_review": lambda raw: parse_review_line("r.jsonl:1", raw),
    "ao3_json_line": lambda raw: ao3.parse_json_line("w.jsonl:1", raw),
    "ao3_html": lambda raw: ao3.parse_ao3_html("w.html", raw),
    "gutenberg_book": gutenberg.clean_book,
    "stories_dump_line": lambda raw: story_steps.dump_line_story("d.jsonl:1", raw, source="s", license="l"),
    "stories_dump_file": lambda raw: story_steps.dump_file_story("d.txt", raw, source="s", license="l"),
    "eval_prediction_outgen": lambda raw: eval_steps.parse_prediction(("p.jsonl:1", raw), EvalConfig()),
    "eval_prediction_chapterbreak": lambda raw: eval_steps.parse_prediction(
        ("p.jsonl:1", raw), EvalConfig(task="chapterbreak")
    ),
    "eval_gold_clozet": lambda raw: eval_steps.parse_gold_line(("g.jsonl:1", raw), EvalConfig(task="clozet")),
    "not_text_reason": not_text_reason,
    "legacy_file_reason": lambda raw: legacy_file_reason(raw) or [],
    "audit_sniff": lambda raw: audit_records.sniff_text(raw) or [],
}


@pytest.mark.slow
@FUZZ
@given(st.sampled_from(sorted(PARSERS)), raw_lines)
def test_every_parser_gives_records_or_a_catalogued_reason(parser, raw):
    _checked(PARSERS[parser](raw), allowed=object)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(st.text(alphabet="ab 中\n", max_size=30), min_size=1, max_size=200),
    st.sampled_from(["gz", "bz2"]),
    st.floats(0.0, 1.0),
    st.booleans(),
)
def test_a_broken_archive_is_an_error_saying_how_far_reading_got(tmp_path_factory, lines, kind, cut, corrupt):
    data = "\n".join(lines).encode("utf-8")
    packed = gzip.compress(data, mtime=0) if kind == "gz" else bz2.compress(data)
    at = int(len(packed) * cut)
    broken = bytearray(packed)
    if corrupt and at < len(broken):
        broken[at] ^= 0xFF
    else:
        broken = broken[:at]
    path = pathlib.Path(tmp_path_factory.mktemp("z")) / f"f.txt.{kind}"
    path.write_bytes(bytes(broken))
    got = b""
    try:
        with open_checked(str(path)) as f:
            for chunk in iter(functools.partial(f.read, 4096), b""):
                got += chunk
    except ReadBreak as exc:
        assert exc.read_out >= len(got) and exc.reason == "truncated_file" and str(path) in str(exc)
        if not corrupt:  # a cut file: what came out before the break is the file's beginning
            assert data.startswith(got)
        return
    assert got == data  # no error: every byte came out (a flipped bit a checksum would catch raises)
