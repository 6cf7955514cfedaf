"""The LOT job's stories and task builders (wired by `pipelines.lot`).

`BuildStories` prepares each kept story and runs every task step over it in one stage (on the
pool's workers in a local run): a story goes to a worker once, as its record, and comes back
as its examples. The task stages (`BuildClozeTAndPlotCom`, `BuildSenPos`, `BuildOutGen`) then
account for those outcomes in the job's process, each under its own name, exactly as when
each ran its own step; ClozeT (annotations joined with the stories they name) and the SenPos
reviews (`ReviewSenPos`) are grouped steps of their own. The rules are annotators.lot.steps.

Stories and what they give travel in blocks: an element of `BuildStories`' input is a list of
kept story records (`pipelines.lot.ParseStories`), and an element of its output and of the
task stages' outputs is a tuple of what a block's stories gave (BuiltStories, TaskRows,
SenPosOutputs, OutGenOutputs), so Beam's per-element work (a few microseconds a step) is
paid once per block. Every stage still accounts for each story, and the tables sort every
row, so which stories share a block changes no output.
"""

from __future__ import annotations

import functools
import operator

import apache_beam as beam

from annotators.lot import steps
from annotators.lot.clozet import ClozeTConfig
from annotators.lot.config import LotRunConfig
from annotators.lot.outline import ZhSetup
from annotators.lot.senpos import SenPosConfig
from annotators.lot.splits import SplitPlan
from annotators.lot.story import StoryConfig
from pipelines.engine import JsonlGroups, join
from pipelines.engine.pool_worker import one_block, outcome


def task_steps(plan: SplitPlan, run_cfg: LotRunConfig, limits: StoryConfig) -> tuple:
    """(stage name, step) of every task built from one story and the split side inputs."""
    return (
        ("plotcom", steps.plotcom_step(plan, ClozeTConfig(), limits)),
        ("senpos", steps.senpos_step(plan, SenPosConfig())),
        (
            "outgen",
            steps.outgen_step(
                plan,
                run_cfg.outline_from,
                run_cfg.outline_method,
                limits,
                run_cfg.title_from,
                run_cfg.outline_fill,
                run_cfg.outline_opening,
            ),
        ),
    )


class BuildStories(beam.PTransform):
    """Blocks (lists) of kept story records -> a tuple of their BuiltStories per block (the
    `prepare` stage: clean, sentences, jieba words, then every task's outcome, with the split
    side inputs), each story accounted for on its own."""

    def __init__(self, report, plan: SplitPlan, run_cfg: LotRunConfig, limits: StoryConfig, split_inputs, zh_backend):
        super().__init__()
        self._report, self._side = report, split_inputs
        self._step = steps.build_step(
            steps.prepare_step(limits, run_cfg.outline_method), task_steps(plan, run_cfg, limits), limits, outcome
        )
        self._zh = ZhSetup(zh_backend, run_cfg.outline_method)

    def expand(self, kept):
        return kept | self._report.stage(
            "prepare",
            self._step,
            input_id=operator.itemgetter("input_id"),
            side_inputs=self._side,
            setup=self._zh,
            blocks=True,
            merge=one_block,
        )


def task_stage(report, name: str):
    """The Stage of one LOT task over blocks of BuiltStories: each story's outcome already made
    for it, accounted in the job's process (nothing is left to compute, so nothing goes to a
    pool worker); a block's outputs leave as one tuple."""
    return report.stage(
        name,
        functools.partial(steps.built_outcome, name),
        input_id=operator.attrgetter("input_id"),
        pooled=False,
        blocks=True,
        merge=one_block,
    )


def each_in(fn, block) -> list:
    """The outputs `fn(item)` of every item of a block, in order (a FlatMap over blocks)."""
    return [value for item in block for value in fn(item)]


def kept_in(keep, block) -> list:
    """The items of a block that `keep`, one element each (a FlatMap over blocks)."""
    return [item for item in block if keep(item)]


class BuildClozeT(beam.PTransform):
    """{"stories" (blocks of BuiltStories), "annotations"} -> ClozeT TaskRows (+ PlotCom
    val/test TaskRows), one per element (they are few).

    Only the stories that annotations name are joined with them (the shuffle carries those few
    stories, not the corpus).
    """

    def __init__(self, report, step, split_inputs: dict, zh: ZhSetup):
        super().__init__()
        self._report, self._step, self._side, self._zh = report, step, split_inputs, zh

    def expand(self, inputs):
        # a BuiltStory keeps its PreparedStory only when annotations name it
        named = inputs["stories"] | "Annotated" >> beam.FlatMap(
            functools.partial(kept_in, lambda b: b.story is not None)
        )
        joined = {
            "story": named | "KeyStory" >> beam.Map(lambda b: (b.story_id, b.story)),
            "ann": inputs["annotations"] | "KeyAnn" >> beam.Map(lambda a: (a["story_id"], a)),
        } | "JoinAnn" >> beam.CoGroupByKey()
        return joined | self._report.stage("clozet", self._step, grouped=True, side_inputs=self._side, setup=self._zh)


class BuildClozeTAndPlotCom(beam.PTransform):
    """{"stories", "annotations"} -> (ClozeT TaskRows (+ PlotCom val/test), blocks of PlotCom
    train TaskRows); without "annotations" (none given) the ClozeT step is not built: (None,
    blocks of PlotCom train TaskRows).

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

    def expand(self, inputs):
        if inputs.get("annotations") is None:  # no annotations: no ClozeT step to build
            self._report.declare("clozet")
            clozet = None
        else:
            clozet = inputs | "ClozeT" >> BuildClozeT(self._report, self._clozet, self._side, self._zh)
        plotcom = inputs["stories"] | "PlotComTrain" >> task_stage(self._report, "plotcom")
        return clozet, plotcom


class BuildSenPos(beam.PTransform):
    """Blocks of BuiltStories -> blocks of their SenPosOutputs, one per window (example before
    review, Table 3 stats)."""

    def __init__(self, report):
        super().__init__()
        self._report = report

    def expand(self, stories):
        return stories | task_stage(self._report, "senpos")


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
    """Blocks of BuiltStories -> blocks of their OutGenOutputs (TaskRow, agreement with the
    input's outline)."""

    def __init__(self, report):
        super().__init__()
        self._report = report

    def expand(self, stories):
        return stories | task_stage(self._report, "outgen")


def human_tasks(stories, senpos_evals, out: str) -> tuple[tuple, list]:
    """The JSON-lines entries of ClozeT annotation tasks (every story ClozeT can take:
    BuiltStory.clozet_tasks, from blocks of BuiltStories) and SenPos review tasks (val/test
    SenPosOutputs, one per element), and their groups: written beside the task tables, in the
    tables' write step (`pipelines.lot._write_tasks`)."""
    entries = (
        stories | "Tasks" >> beam.FlatMap(functools.partial(each_in, operator.attrgetter("clozet_tasks"))),
        senpos_evals | "ReviewRows" >> beam.Map(steps.review_task_entry),
    )
    groups = [
        JsonlGroups(lambda g: join(out, "annotation_tasks", f"{g}.jsonl"), ["clozet"], "annotation_tasks"),
        JsonlGroups(lambda s: join(out, "review", f"senpos_{s}.jsonl"), ["val", "test"], "review"),
    ]
    return entries, groups
