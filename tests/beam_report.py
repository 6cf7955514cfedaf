"""Helpers of the Beam-tier tests: an in-process TestPipeline and a JobReport stand-in.

`RecordingReport` has the JobReport methods the composite transforms call (`stage`, `extra`)
and keeps each stage's rejects, so a test can assert on the main AND rejects outputs of a
transform without writing any file.
"""

from __future__ import annotations

import apache_beam as beam
from apache_beam.runners.portability.fn_api_runner import FnApiRunner
from apache_beam.testing.test_pipeline import TestPipeline

from pipelines.engine import REJECTS, Stage
from schemas.common import detail_message


def pipeline() -> TestPipeline:
    """The in-process FnApiRunner, as `pipelines.engine.make_pipeline` maps DirectRunner (no Prism)."""
    return TestPipeline(runner=FnApiRunner())


class RecordingReport:
    """Stands in for JobReport: registers stages and keeps their rejects and the extras."""

    def __init__(self):
        self.stages: list[str] = []
        self.extras: dict = {}
        self.by_stage: dict = {}  # stage name -> its rejects PCollection
        self._rejects: list = []

    def stage(self, name, fn, **kwargs) -> Stage:
        return Stage(name, fn, report=self, **kwargs)

    def add(self, stage, result):
        self.stages.append(stage)
        self.by_stage[stage] = result[REJECTS]
        self._rejects.append(result[REJECTS])
        return result["main"]

    def extra(self, name, pcoll) -> None:
        self.extras[name] = pcoll

    def rejects(self, p):
        """Every rejects row of every registered stage, as (stage, input_id, reason, detail)."""
        return (
            (self._rejects or [p | "NoRejects" >> beam.Create([])])
            | "AllRejects" >> beam.Flatten()
            | "RejectTuples"
            >> beam.Map(lambda r: (r["stage"], r["input_id"], r["reason"], detail_message(r["detail"])))
        )
