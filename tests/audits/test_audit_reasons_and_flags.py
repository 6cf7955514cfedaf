"""The audits' reject codes are catalogued and listed on their cards; their flags keep their defaults."""

from __future__ import annotations

import re

from conftest import ROOT

from annotators.audits.reasons import BIAS_REASONS, JOB_REASONS, OVERLAP_REASONS, REASONS
from annotators.core.reasons import SHARED, catalogue
from pipelines import bias, overlap
from pipelines.engine import config_from_args, parse_job_args

SOURCES = [
    *sorted((ROOT / "annotators" / "audits").glob("*.py")),
    ROOT / "pipelines" / "overlap.py",
    ROOT / "pipelines" / "bias.py",
    ROOT / "pipelines" / "engine" / "records.py",
    ROOT / "annotators" / "core" / "jsonl.py",
]


def test_every_drop_code_is_catalogued_and_on_a_card():
    codes = {c for path in SOURCES for c in re.findall(r'Drop\(\s*"([a-z0-9_]+)"', path.read_text(encoding="utf-8"))}
    assert {"malformed_json", "unreadable_file", "empty_split", "bad_label"} <= codes
    assert codes <= set(catalogue()) and codes <= set(JOB_REASONS)
    assert set(REASONS) <= codes and not set(REASONS) & set(SHARED)
    assert set(OVERLAP_REASONS) | set(BIAS_REASONS) == set(JOB_REASONS)


def test_flags_keep_their_defaults_and_both_spellings():
    args, _ = parse_job_args(overlap.build_parser(), ["--lot", "x", "--output", "o"])
    assert (args.n, args.tokenizer) == (8, "jieba")
    args, _ = parse_job_args(
        overlap.build_parser(),
        ["--lot", "x", "--output", "o", "--n", "4", "--tokenizer", "regex", "--test_fields", "a"],
    )
    assert (args.n, args.tokenizer, args.test_fields) == (4, "regex", "a")
    args, _ = parse_job_args(bias.build_parser(), ["--lot", "x", "--output", "o", "--seed", "3"])
    assert config_from_args(args, bias.bb.BiasConfig).seed == 3
