"""The LOT job's four task builders (wired by `pipelines.lot`): ClozeT and PlotCom from the
annotations (`BuildClozeTAndPlotCom`), SenPos windows and their reviews (`BuildSenPos`,
`ReviewSenPos`) and OutGen (`BuildOutGen`), each one Stage over the prepared stories with the
split side inputs; the rules are annotators.lot.steps.
"""

from __future__ import annotations

import operator

import apache_beam as beam

from annotators.lot import steps
from annotators.lot.clozet import ClozeTConfig
from annotators.lot.config import LotRunConfig
from annotators.lot.outline import ZhSetup
from annotators.lot.senpos import SenPosConfig
from annotators.lot.splits import SplitPlan
from annotators.lot.story import StoryConfig
from pipelines.engine import JobReport, WriteJsonlGroups, join


def task_stage(report, name: str, step, side_inputs: dict, zh):
    """The Stage of one LOT task over PreparedStories, run in the job's process (a prepared
    story is more to send to a pool worker than to work on)."""
    return report.stage(
        name, step, input_id=operator.attrgetter("input_id"), side_inputs=side_inputs, setup=zh, pooled=False
    )


class BuildClozeT(beam.PTransform):
    """{"stories", "annotations"} -> ClozeT TaskRows (+ PlotCom val/test TaskRows).

    Only the stories that annotations name are joined with them (the shuffle carries those few
    stories, not the corpus).
    """

    def __init__(self, report, step, split_inputs: dict, zh: ZhSetup):
        super().__init__()
        self._report, self._step, self._side, self._zh = report, step, split_inputs, zh

    def expand(self, inputs):
        named = inputs["stories"] | "Annotated" >> beam.Filter(
            lambda s, annotated: s.story_id in annotated, annotated=self._side["annotated"]
        )
        joined = {
            "story": named | "KeyStory" >> beam.Map(lambda s: (s.story_id, s)),
            "ann": inputs["annotations"] | "KeyAnn" >> beam.Map(lambda a: (a["story_id"], a)),
        } | "JoinAnn" >> beam.CoGroupByKey()
        return joined | self._report.stage("clozet", self._step, grouped=True, side_inputs=self._side, setup=self._zh)


class BuildClozeTAndPlotCom(beam.PTransform):
    """{"stories", "annotations"} -> (ClozeT TaskRows (+ PlotCom val/test), PlotCom train TaskRows);
    without "annotations" (none given) the ClozeT step is not built: (None, PlotCom train TaskRows).

    story_id -> its annotations is a small side input (annotations are few), so the corpus
    itself is never shuffled to find the ClozeT stories; the split side inputs
    (`split_inputs`: near-duplicate groups, annotated ids) give every story its one split.
    """

    def __init__(
        self,
        report,
        plan: SplitPlan,
        config: ClozeTConfig,
        limits: StoryConfig,
        plotcom_eval: str,
        split_inputs: dict,
        zh_backend: str | None = None,
    ):
        super().__init__()
        self._report, self._side, self._zh = report, split_inputs, ZhSetup(zh_backend)
        self._clozet = steps.clozet_step(plan, config, limits, plotcom_eval)
        self._plotcom = steps.plotcom_step(plan, config, limits)

    def expand(self, inputs):
        if inputs.get("annotations") is None:  # no annotations: no ClozeT step to build
            self._report.declare("clozet")
            clozet = None
        else:
            clozet = inputs | "ClozeT" >> BuildClozeT(self._report, self._clozet, self._side, self._zh)
        plotcom = inputs["stories"] | "PlotComTrain" >> task_stage(
            self._report, "plotcom", self._plotcom, self._side, self._zh
        )
        return clozet, plotcom


class BuildSenPos(beam.PTransform):
    """PreparedStory -> SenPosOutput per window (example before review, Table 3 stats)."""

    def __init__(
        self, report, plan: SplitPlan, config: SenPosConfig, split_inputs: dict, zh_backend: str | None = None
    ):
        super().__init__()
        self._report, self._step, self._side = report, steps.senpos_step(plan, config), split_inputs
        self._zh = ZhSetup(zh_backend)

    def expand(self, stories):
        return stories | task_stage(self._report, "senpos", self._step, self._side, self._zh)


class ReviewSenPos(beam.PTransform):
    """{"examples": val/test SenPosOutputs, "reviews": ReviewRecords} -> the examples, reviewed."""

    def __init__(self, report, reviewed_only: bool):
        super().__init__()
        self._report, self._reviewed_only = report, reviewed_only

    def expand(self, inputs):
        grouped = {
            "example": inputs["examples"] | "KeyEx" >> beam.Map(lambda o: (o.example.example_id, o)),
            "review": inputs["reviews"] | "KeyRev" >> beam.Map(lambda r: (r.review["example_id"], r)),
        } | "JoinReviews" >> beam.CoGroupByKey()
        return grouped | self._report.stage("senpos_review", steps.review_step(self._reviewed_only), grouped=True)


class BuildOutGen(beam.PTransform):
    """PreparedStory -> OutGenOutput (TaskRow, agreement with the input's outline)."""

    def __init__(
        self,
        report,
        plan: SplitPlan,
        run_cfg: LotRunConfig,
        limits: StoryConfig,
        split_inputs: dict,
        zh_backend: str | None = None,
    ):
        super().__init__()
        self._report, self._side = report, split_inputs
        self._step = steps.outgen_step(
            plan,
            run_cfg.outline_from,
            run_cfg.outline_method,
            limits,
            run_cfg.title_from,
            run_cfg.outline_fill,
            run_cfg.outline_opening,
        )
        self._zh = ZhSetup(zh_backend, run_cfg.outline_method)

    def expand(self, stories):
        return stories | task_stage(self._report, "outgen", self._step, self._side, self._zh)


def write_human_tasks(stories, senpos_evals, out: str, report: JobReport, limits: StoryConfig) -> None:
    """ClozeT annotation tasks (every story ClozeT can take) and SenPos review tasks (val/test)."""
    report.tally(
        stories
        | "Tasks" >> beam.FlatMap(steps.clozet_task_entry, limits)
        | "WriteTasks"
        >> WriteJsonlGroups(lambda g: join(out, "annotation_tasks", f"{g}.jsonl"), ["clozet"], "annotation_tasks")
    )
    report.tally(
        senpos_evals
        | "ReviewRows" >> beam.Map(steps.review_task_entry)
        | "WriteReview"
        >> WriteJsonlGroups(lambda s: join(out, "review", f"senpos_{s}.jsonl"), ["val", "test"], "review")
    )
