"""The lot job's flags, generated from LotRunConfig and StoryConfig, keep every old spelling and default."""
from __future__ import annotations

import pytest

from annotators.lot.config import LotRunConfig
from annotators.lot.story import StoryConfig
from pipelines.lot import _config_record, parse_args

BASE = ["--stories", "s.jsonl", "--output", "out"]
# stats.json `config` of a default run before the flags were generated (plus the outline method,
# added when posrake became the default).
OLD_DEFAULT_CONFIG = {
    "story": {"normalize": "whitespace", "min_han_ratio": 0.5, "min_sentences": 3, "max_chars": 20000,
              "min_sentence_han": 10},
    "clozet": {"min_length_ratio": 0.5, "max_length_ratio": 2.0},
    "senpos": {"max_words": 500, "min_removed_han": 10, "min_candidates": 2},
    "splits": {"clozet": [644.0, 294.0, 294.0], "senpos": [20000.0, 800.0, 863.0],
               "outgen": [1456.0, 242.0, 729.0]},
    "outline_from": "rake", "outline_method": "posrake", "senpos_reviewed_only": False,
}


def test_defaults_are_the_papers_and_the_config_record_is_unchanged():
    args, run_cfg, story_cfg, _ = parse_args(BASE)
    assert run_cfg == LotRunConfig() and story_cfg == StoryConfig()
    assert (args.annotations, args.senpos_reviews, run_cfg.seed) == (None, None, 0)
    record = _config_record(run_cfg, story_cfg)
    assert record == OLD_DEFAULT_CONFIG and list(record) == list(OLD_DEFAULT_CONFIG)


@pytest.mark.parametrize("flags", [
    ["--senpos-splits", "8,1,1", "--outline-from", "input", "--senpos-reviewed-only", "--normalize", "full",
     "--seed", "3", "--senpos-reviews", "r.jsonl"],
    ["--senpos_splits=8,1,1", "--outline_from=input", "--senpos_reviewed_only", "--normalize=full",
     "--seed=3", "--senpos_reviews=r.jsonl"],
])
def test_dash_and_underscore_spellings(flags):
    args, run_cfg, story_cfg, _ = parse_args(BASE + flags)
    assert run_cfg.senpos_splits == (8.0, 1.0, 1.0) and run_cfg.clozet_splits == (644.0, 294.0, 294.0)
    assert (run_cfg.outline_from, run_cfg.senpos_reviewed_only, run_cfg.seed) == ("input", True, 3)
    assert parse_args(BASE + ["--outline-method", "rake"])[1].outline_method == "rake"
    assert story_cfg.normalize == "full" and args.senpos_reviews == "r.jsonl"


@pytest.mark.parametrize("flags", [["--clozet-splits", "1,2"], ["--outgen-splits", "1,-1,1"],
                                   ["--senpos-splits", "0,0,0"], ["--outline-from", "llm"],
                                   ["--normalize", "none"]])
def test_bad_values_are_usage_errors(flags):
    with pytest.raises(SystemExit):
        parse_args(BASE + flags)


def test_beam_flags_go_to_pipeline_options():
    _, _, _, options = parse_args(BASE + ["--direct_running_mode=multi_processing", "--direct_num_workers=2"])
    assert options.get_all_options()["direct_num_workers"] == 2
