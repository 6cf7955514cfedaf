"""Reject reasons, flags and page decoding of the chapterbreak job (issue 10 items 3, 5, 6)."""

from __future__ import annotations

import dataclasses
import pathlib
import re

import pytest

from annotators.chapterbreak.ao3 import Ao3Config, parse_json_line
from annotators.chapterbreak.ao3_html import decode_page
from annotators.chapterbreak.chapters import ChapterConfig
from annotators.chapterbreak.examples import ExampleConfig
from annotators.chapterbreak.reasons import JOB_REASONS, REASONS
from annotators.core.outcome import Drop
from annotators.core.reasons import SHARED, catalogue
from pipelines.chapterbreak import build_parser, configs

ROOT = pathlib.Path(__file__).parents[2]
SOURCES = sorted((ROOT / "annotators" / "chapterbreak").glob("*.py")) + [ROOT / "pipelines" / "chapterbreak.py"]
# Drop("code", ...), filter reasons appended before becoming a Drop, and chapters.py's chosen code
CODE_PATTERNS = (r'Drop\(\s*"(\w+)"', r'reasons\.append\(\s*"(\w+)"', r'reason = "(\w+)" if .* else "(\w+)"')


def emitted_codes() -> set[str]:
    codes = set()
    for path in SOURCES:
        text = path.read_text()
        for pattern in CODE_PATTERNS:
            for match in re.finditer(pattern, text):
                codes.update(g for g in match.groups() if g)
    return codes


def test_every_emitted_code_is_catalogued_and_listed():
    codes = emitted_codes()
    assert {"empty_file", "fewer_than_two_chapters", "ten_or_fewer_chapters", "not_an_object"} <= codes
    known = catalogue()
    assert sorted(c for c in codes if c not in known) == []
    assert sorted(c for c in codes if c not in JOB_REASONS) == []


def test_own_codes_are_not_shared_and_job_codes_are_known():
    assert not set(REASONS) & set(SHARED)
    assert set(JOB_REASONS) <= set(catalogue()) and len(JOB_REASONS) == len(set(JOB_REASONS))
    assert "too_few_chapters" not in catalogue()


def test_json_line_that_is_not_an_object():
    assert parse_json_line("x:1", b"[1, 2]") == Drop("not_an_object", "a line must hold a JSON object")
    assert parse_json_line("x:2", b"{oops").reason == "malformed_json"


def test_ao3_page_honours_meta_charset():
    page = '<html><head><meta charset="windows-1251"></head><p>Привет</p></html>'.encode("cp1251")
    assert "Привет" in decode_page(page)
    assert "caf\u00e9" in decode_page('<meta charset="utf-8"><p>caf\u00e9</p>\r\n'.encode("utf-8"))
    assert decode_page(b"  \n") == Drop("empty_file", "3 bytes")
    assert decode_page(b"\x00\x01<p>").reason == "binary_file"


def _configs(argv):
    return configs(build_parser().parse_args(["--output", "o"] + argv))


def test_default_flags_give_the_papers_configs():
    assert _configs([]) == (ChapterConfig(), ExampleConfig(), Ao3Config())


@pytest.mark.parametrize("sep", ["_", "-"])
def test_every_existing_flag_and_spelling(sep):
    def flag(name):
        return "--" + name.replace("_", sep)

    argv = [
        flag("prefix_lengths"),
        "8192,256,256",
        flag("suffix_tokens"),
        "64",
        flag("negatives"),
        "out_of_book",
        flag("subsets"),
        "cause",
        flag("headings"),
        "keep",
        flag("subset_per_book"),
        "7",
        flag("duplicate_threshold"),
        "0.9",
        flag("heading_styles"),
        "chapter,numeral",
        flag("strict_numbering"),
        flag("tokenizer"),
        "whitespace_v1",
        flag("ao3_language"),
        "",
        flag("ao3_rating"),
        "Teen",
        flag("ao3_min_words"),
        "5",
        flag("ao3_more_than_chapters"),
        "3",
    ]
    parser = build_parser()
    from pipelines.engine.options import parse_job_args

    args, _ = parse_job_args(parser, ["--output", "o", flag("shards"), "2", flag("seed"), "3"] + argv)
    chapters, examples, ao3 = configs(args)
    assert (args.shards, args.seed) == (2, 3)
    assert chapters == ChapterConfig(heading_styles=("chapter", "numeral"), strict_numbering=True)
    assert examples == ExampleConfig(
        prefix_lengths=(256, 8192),
        suffix_tokens=64,
        negatives_from="out_of_book",
        subsets=("cause",),
        headings="keep",
        subset_per_book="7",
        tokenizer="whitespace_v1",
    )
    assert args.duplicate_threshold == 0.9
    assert ao3 == Ao3Config(language=None, rating="Teen", min_words=5, more_than_chapters=3)


def test_config_fields_have_help():
    for cls in (ChapterConfig, ExampleConfig, Ao3Config):
        assert all(f.metadata.get("help") for f in dataclasses.fields(cls)), cls


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--keep_headings"], "--keep_headings is gone; use --headings keep"),
        (["--keep-headings"], "--keep_headings is gone; use --headings keep"),
        (["--subset_per_chapter", "2"], "--subset_per_chapter is gone; use --subset_per_book"),
        (["--subsets", "cause,plot"], "unknown ['plot']"),
        (["--subset_per_book", "many"], "'paper' or a count >= 0"),
        (["--tokenizer", "gpt2:/no/such/folder"], "no GPT-2 vocabulary"),
        (["--tokenizer", "hf:/no/such/tokenizer.json"], "no such file or folder"),
        (["--tokenizer", "hf:/"], "holds no tokenizer.json"),
        (["--tokenizer", "hf:" + __file__], "not a tokenizers tokenizer.json"),
        (["--tokenizer", "hf"], "unknown tokenizer 'hf'"),
    ],
)
def test_retired_and_bad_flags_are_usage_errors(argv, message, capsys):
    from pipelines.chapterbreak import run

    with pytest.raises(SystemExit) as exc:
        run(["--gutenberg", "x.txt", "--output", "o"] + argv)
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_subsets_none_builds_chapter_breaks_only():
    assert _configs(["--subsets", "none"])[1].subsets == ()
    assert _configs([])[1].subsets == ("cause", "dialogue")
