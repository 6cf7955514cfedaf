"""Job flags generated from *Config dataclasses: one default, both spellings, typed values."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from pipelines.engine import JobArgumentParser, add_config_flags, config_from_args, parse_job_args


@dataclasses.dataclass(frozen=True)
class ToyConfig:
    max_words: int = dataclasses.field(default=500, metadata={"help": "SenPos paragraphs under this many words"})
    prefix_lengths: tuple[int, ...] = (256, 8192)
    negatives: str = dataclasses.field(default="future", metadata={"choices": ("future", "out_of_book")})
    keep_headings: bool = False
    threshold: float | None = None


def _parse(argv, prefix=""):
    parser = JobArgumentParser()
    add_config_flags(parser, ToyConfig, prefix=prefix)
    args, options = parse_job_args(parser, argv)
    return config_from_args(args, ToyConfig, prefix=prefix), options, parser


def test_defaults_come_from_the_dataclass():
    config, _, parser = _parse([])
    assert config == ToyConfig()
    assert "SenPos paragraphs under this many words (default: 500)" in " ".join(parser.format_help().split())


def test_both_spellings_typed_values_and_beam_flags_left_over():
    config, options, _ = _parse(
        [
            "--max_words",
            "300",
            "--prefix-lengths",
            "128,512",
            "--negatives",
            "out_of_book",
            "--keep-headings",
            "--threshold",
            "0.5",
            "--runner",
            "FnApiRunner",
        ]
    )
    assert config == ToyConfig(300, (128, 512), "out_of_book", True, 0.5)
    assert options.get_all_options()["runner"] == "FnApiRunner"


def test_prefix_and_choices():
    config, _, _ = _parse(["--toy-max-words", "7"], prefix="toy_")
    assert config.max_words == 7
    with pytest.raises(SystemExit):
        _parse(["--negatives", "past"])


@pytest.mark.parametrize(
    "flag,expected",
    [
        ("--keep-headings", True),
        ("--keep_headings", True),
        ("--no-keep-headings", False),
        ("--no_keep_headings", False),
    ],
)
def test_boolean_flags_both_spellings(flag, expected):
    config, _, _ = _parse([flag])
    assert config.keep_headings is expected


@pytest.mark.parametrize("value", ["128,,512", "128,x", ","])
def test_a_bad_comma_list_is_a_usage_error(value, capsys):
    with pytest.raises(SystemExit):
        _parse(["--prefix-lengths", value])
    assert "--prefix-lengths" in capsys.readouterr().err


def test_a_pipelines_options_make_each_view_once_and_share_their_values():
    import copy

    from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, TypeOptions

    from pipelines.engine import make_pipeline
    from pipelines.engine.options import ViewsOnce

    given = PipelineOptions(["--direct_num_workers=3"])
    views = given.view_as(ViewsOnce)
    assert views.view_as(TypeOptions) is views.view_as(TypeOptions)
    assert views.view_as(DirectOptions).direct_num_workers == 3
    views.view_as(DirectOptions).direct_num_workers = 1  # a cached view writes the shared values
    assert given.view_as(DirectOptions).direct_num_workers == 1
    given.view_as(DirectOptions).direct_num_workers = 2  # and reads what another view wrote
    assert views.view_as(DirectOptions).direct_num_workers == 2
    copied = copy.deepcopy(views)  # what beam.Pipeline keeps: its own values, views included
    copied.view_as(DirectOptions).direct_num_workers = 5
    assert views.view_as(DirectOptions).direct_num_workers == 2
    assert copied.view_as(DirectOptions).direct_num_workers == 5
    assert copied.get_all_options()["direct_num_workers"] == 5

    p = make_pipeline(PipelineOptions(["--direct_num_workers=1"]))
    assert p.options.view_as(TypeOptions) is p.options.view_as(TypeOptions)
    assert p.options.view_as(TypeOptions).pipeline_type_check is False
    assert p.options.get_all_options()["direct_num_workers"] == 1


def test_a_jobs_options_know_the_flags_given_even_at_their_default_value():
    """`--direct_num_workers 1` is Beam's default value, yet it asks for this process alone:
    parse_job_args's options keep the names of the flags given, and so does the copy a
    pipeline keeps."""

    from apache_beam.options.pipeline_options import DirectOptions

    from pipelines.engine import make_pipeline, parse_job_args
    from pipelines.engine.options import JobOptions, _given_flags

    args, options = parse_job_args(
        argparse.ArgumentParser(), ["--direct_num_workers", "1", "--direct_running_mode=in_memory"]
    )
    assert isinstance(options, JobOptions)
    assert options.given_flags == {"direct_num_workers", "direct_running_mode"}
    assert options.view_as(DirectOptions).direct_num_workers == 1
    p = make_pipeline(options)
    assert p.options is not options and p.options.given_flags == options.given_flags
    given = _given_flags(p.options)  # with what make_pipeline sets in code (pipeline_type_check)
    assert given >= {"direct_num_workers", "direct_running_mode", "pipeline_type_check"} and "runner" not in given
    assert _given_flags(JobOptions([])) == set()
    in_code = JobOptions([])
    in_code.view_as(DirectOptions).direct_num_workers = 4  # a value set in code counts too
    assert _given_flags(in_code) == {"direct_num_workers"}


@pytest.mark.parametrize(
    "argv,words",
    [
        (["--max-word", "300"], None),  # a unique prefix of --max-words, as argparse takes it
        (["--bogus"], "unrecognized arguments: --bogus"),
        (["--threshhold", "0.5"], "unrecognized arguments: --threshhold 0.5 (did you mean --threshold?)"),
        (["--max-words", "3", "stray.jsonl"], "unrecognized arguments: stray.jsonl"),
        (["--direct_num_worker=1"], "(did you mean --direct_num_workers?)"),
        (["--direct_num_workers=abc"], "argument --direct_num_workers: invalid int value: 'abc'"),
    ],
)
def test_a_flag_or_value_nobody_takes_is_a_usage_error_on_the_local_runner(argv, words, capsys):
    """Beam drops flags it does not know with a warning, so a mistyped flag would run the job
    without it: on a local runner (where nothing else reads them) it is argparse's error."""
    if words is None:
        assert _parse(argv)[0].max_words == 300
        return
    with pytest.raises(SystemExit) as exc:
        _parse(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and words in err
    assert len([line for line in err.splitlines() if "error:" in line]) == 1 and len(err.splitlines()) < 12


def test_a_remote_runner_gets_the_flags_beam_does_not_know():
    """Beam passes unknown options on to a remote runner's service (Dataflow, Flink, Spark), so
    they are left to it there, as Beam leaves them."""
    _, options, _ = _parse(["--runner", "DataflowRunner", "--some_service_option", "7"])
    assert options.get_all_options(retain_unknown_options=True)["some_service_option"] == "7"


def test_a_flag_given_twice_is_said_not_taken_silently(capsys):
    """`--gutenberg A --gutenberg B` read B only, without a word (argparse keeps the last value
    of a flag); scripts that append an override (`--seed 4` after `--seed 3`) still run."""
    from pipelines.chapterbreak import build_parser

    args, _ = parse_job_args(build_parser(), ["--gutenberg", "a", "--gutenberg=b", "--output", "o"])
    err = capsys.readouterr().err
    assert args.gutenberg == "b" and "warning: --gutenberg is given more than once: only the last one counts" in err
    args, _ = parse_job_args(build_parser(), ["--gutenberg", "a", "--output", "o", "--subsets", "cause,dialogue"])
    assert args.gutenberg == "a" and "more than once" not in capsys.readouterr().err
