"""Job flags and runners: one command runs locally or on Dataflow.

- `parse_job_args`: the job's own flags via argparse (`-` and `_` alike), the rest to
  `PipelineOptions` (as Beam's wordcount does).
- `make_pipeline`: `DirectRunner` (the default) is mapped to the in-process `FnApiRunner`,
  which never downloads a Prism binary and still honours
  `--direct_running_mode=multi_processing --direct_num_workers=N`.
"""
from __future__ import annotations

import argparse
from typing import Any, Sequence

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions

from pipelines.engine.report import LOCAL_RUNNERS


def _alias_separators(parser: argparse.ArgumentParser) -> None:
    """Accept `--prefix-lengths` and `--prefix_lengths` alike for every job flag."""
    for action in list(parser._actions):
        for opt in list(action.option_strings):
            if not opt.startswith("--"):
                continue
            for alt in ("--" + opt[2:].replace("_", "-"), "--" + opt[2:].replace("-", "_")):
                if alt not in parser._option_string_actions:
                    action.option_strings.append(alt)
                    parser._option_string_actions[alt] = action


def parse_job_args(parser: argparse.ArgumentParser, argv: Sequence[str] | None):
    """Split argv into (job args, PipelineOptions); job flags take `-` or `_` alike."""
    _alias_separators(parser)
    args, beam_argv = parser.parse_known_args(argv)
    return args, PipelineOptions(beam_argv)


def make_pipeline(options: PipelineOptions) -> beam.Pipeline:
    """A Pipeline on the in-process FnApiRunner for local runs, else the named runner."""
    if options.view_as(StandardOptions).runner in LOCAL_RUNNERS:
        from apache_beam.runners.portability.fn_api_runner import FnApiRunner

        return beam.Pipeline(runner=FnApiRunner(), options=options)
    return beam.Pipeline(options=options)


def run_pipeline(p: beam.Pipeline) -> Any:
    """Run and wait; returns the PipelineResult."""
    result = p.run()
    result.wait_until_finish()
    return result
