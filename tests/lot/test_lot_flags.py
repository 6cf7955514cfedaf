"""The lot job's flags, generated from LotRunConfig and StoryConfig: spellings, defaults, and
the per-task split flags that one split per story retired."""

from __future__ import annotations

import pytest

from annotators.lot.config import LotRunConfig, config_record
from annotators.lot.story import StoryConfig
from pipelines.lot import LOT_NEAR_DUP, parse_args

BASE = ["--stories", "s.jsonl", "--output", "out"]
# stats.json `config` of a default run.
DEFAULT_CONFIG = {
    "story": {
        "normalize": "whitespace",
        "min_han_ratio": 0.5,
        "min_sentences": 3,
        "max_story_chars": 20000,
        "min_sentence_han": 10,
    },
    "clozet": {"min_length_ratio": 0.5, "max_length_ratio": 2.0},
    "senpos": {"max_words": 500, "min_removed_han": 10, "min_candidates": 2, "max_candidates": 99},
    "splits": {"stories": [21456.0, 1042.0, 1592.0], "clozet_stories": [644.0, 294.0, 294.0]},
    "plotcom_eval": "leak-free",
    "title_from": "none",
    "near_duplicates": {"threshold": 0.8, "num_perm": 128, "shingle": 5, "seed": 1, "sketch": "oph"},
    "outline_from": "rake",
    "outline_method": "posrake",
    "outline_fill": "longest",
    "outline_opening": "last",
    "senpos_reviewed_only": False,
    "official_outgen": "",
}


def test_defaults_are_the_papers_and_the_config_record_is_unchanged():
    args, run_cfg, story_cfg, _ = parse_args(BASE)
    assert run_cfg == LotRunConfig() and story_cfg == StoryConfig()
    assert (args.annotations, args.senpos_reviews, run_cfg.seed) == (None, None, 0)
    record = config_record(run_cfg, story_cfg, LOT_NEAR_DUP)
    assert record == DEFAULT_CONFIG and list(record) == list(DEFAULT_CONFIG)


@pytest.mark.parametrize(
    "flags",
    [
        [
            "--splits",
            "8,1,1",
            "--outline-from",
            "input",
            "--senpos-reviewed-only",
            "--normalize",
            "full",
            "--seed",
            "3",
            "--senpos-reviews",
            "r.jsonl",
            "--plotcom-eval",
            "paper",
            "--title-from",
            "first-sentence",
            "--max-story-chars",
            "0",
        ],
        [
            "--splits=8,1,1",
            "--outline_from=input",
            "--senpos_reviewed_only",
            "--normalize=full",
            "--seed=3",
            "--senpos_reviews=r.jsonl",
            "--plotcom_eval=paper",
            "--title_from=first-sentence",
            "--max_story_chars=0",
        ],
    ],
)
def test_dash_and_underscore_spellings(flags):
    args, run_cfg, story_cfg, _ = parse_args(BASE + flags)
    assert run_cfg.splits == (8.0, 1.0, 1.0) and run_cfg.clozet_splits == (644.0, 294.0, 294.0)
    assert (run_cfg.plotcom_eval, run_cfg.title_from, story_cfg.max_story_chars) == ("paper", "first-sentence", 0)
    assert (run_cfg.outline_from, run_cfg.senpos_reviewed_only, run_cfg.seed) == ("input", True, 3)
    assert parse_args(BASE + ["--outline-method", "rake"])[1].outline_method == "rake"
    earlier = parse_args(BASE + ["--outline-fill", "none", "--outline-opening", "scored"])[1]
    assert (earlier.outline_fill, earlier.outline_opening) == ("none", "scored")
    assert story_cfg.normalize == "full" and args.senpos_reviews == "r.jsonl"


@pytest.mark.parametrize(
    "flags",
    [
        ["--clozet-splits", "1,2"],
        ["--splits", "1,-1,1"],
        ["--splits", "0,0,0"],
        ["--outline-from", "llm"],
        ["--normalize", "none"],
        ["--plotcom-eval", "all"],
        ["--title-from", "url"],
    ],
)
def test_bad_values_are_usage_errors(flags):
    with pytest.raises(SystemExit):
        parse_args(BASE + flags)


@pytest.mark.parametrize("flag", ["--senpos-splits", "--outgen-splits", "--senpos_splits"])
def test_retired_per_task_split_flags_say_what_replaced_them(flag, capsys):
    with pytest.raises(SystemExit):
        parse_args(BASE + [flag, "8,1,1"])
    err = capsys.readouterr().err
    assert "one split per story" in err and err.rstrip().endswith("use --splits")


def test_beam_flags_go_to_pipeline_options():
    _, _, _, options = parse_args(BASE + ["--direct_running_mode=multi_processing", "--direct_num_workers=2"])
    assert options.get_all_options()["direct_num_workers"] == 2
