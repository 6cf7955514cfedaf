"""The glge job's reject reasons are catalogued, and its flags keep every old spelling and default."""

from __future__ import annotations

import ast
import dataclasses
import pathlib

import pytest

from annotators.core.reasons import catalogue
from annotators.glge.card import glge_card
from annotators.glge.levels import GlgeConfig
from annotators.glge.reasons import JOB_REASONS, REASONS
from pipelines.engine import parse_job_args
from pipelines.glge import build_parser, glge_config

ROOT = pathlib.Path(__file__).parents[2]
SOURCES = sorted((ROOT / "annotators" / "glge").glob("*.py")) + [ROOT / "pipelines" / "glge.py"]


def drop_codes(path: pathlib.Path) -> set[str]:
    """Every string literal in the first argument of a `Drop(...)` call (both arms of an `if`)."""
    codes = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Drop" and node.args:
            codes |= {
                n.value for n in ast.walk(node.args[0]) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            }
    return codes


def test_every_drop_code_is_catalogued_and_listed_for_the_job():
    codes = set().union(*(drop_codes(p) for p in SOURCES))
    assert {"line_count_mismatch", "unreadable_file", "unknown_split"} <= codes  # the scan works
    known = catalogue()
    assert codes <= set(known) and codes <= set(JOB_REASONS)
    assert set(JOB_REASONS) == codes | {"internal_error"}  # the Stage's own code, nothing more
    assert set(REASONS) <= set(JOB_REASONS) and all(REASONS[c] == known[c] for c in REASONS)


def test_card_ends_with_the_reasons_section():
    stats = {"job": "glge", "schema_version": 1, "stages": {}, "tables": {}, "glge": {}}
    card = glge_card(stats)
    section = card[card.index("## Reject reasons this job can give") :]
    assert [line.split("`")[1] for line in section.splitlines() if line.startswith("| `")] == sorted(JOB_REASONS)


def parse(*argv: str):
    return parse_job_args(build_parser(), ["--output", "o", *argv])[0]


def test_flag_defaults_are_the_config_defaults():
    args = parse()
    assert (args.seed, args.shards, args.tasks, args.input, args.lot) == (0, None, None, None, None)
    assert glge_config(args) == GlgeConfig()
    assert dataclasses.asdict(glge_config(args)) == {
        "medium_fraction": 0.5,
        "hard_fraction": 0.25,
        "medium_plus_fraction": 0.5,
        "en": {"tokenizer": "whitespace", "stop_words": "spacy_en", "lowercase": True},
        "zh": {"tokenizer": "jieba", "stop_words": "spacy_zh", "lowercase": True},
    }


@pytest.mark.parametrize(
    "argv",
    [
        ("--stop_words", "none", "--lot_tokenizer", "whitespace", "--lot_stop_words", "spacy_en"),
        ("--stop-words", "none", "--lot-tokenizer", "whitespace", "--lot-stop-words", "spacy_en"),
    ],
)
def test_both_spellings_of_the_tokenizer_flags(argv):
    config = glge_config(parse("--tokenizer", "jieba", *argv))
    assert (config.en.tokenizer, config.en.stop_words) == ("jieba", "none")
    assert (config.zh.tokenizer, config.zh.stop_words) == ("whitespace", "spacy_en")


def test_unknown_tokenizer_is_refused():
    with pytest.raises(SystemExit):
        parse("--lot_tokenizer", "bert")


@pytest.mark.parametrize(
    "argv, langs",
    [
        (("--input", "g"), ["en"]),
        (("--lot", "l"), ["zh"]),
        (("--input", "g", "--lot", "l"), ["en", "zh"]),
        (("--input", "g", "--lot", "l", "--tasks", "lot_outgen"), ["zh"]),
        (("--input", "g", "--lot", "l", "--tasks", "tiny"), ["en"]),
    ],
)
def test_preloaded_tokenizer_profiles_follow_the_flags(argv, langs):
    from pipelines.glge import job_langs

    assert job_langs(parse(*argv)) == langs
