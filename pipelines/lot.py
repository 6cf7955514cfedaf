"""`python -m pipelines.lot`: stories in, the four LOT datasets out (LOT paper section 3).

Wiring only (the steps are annotators.lot.steps): `ParseStories` (parse -> dedup (text, id)
-> prepare: clean, sentences, jieba words) -> `BuildClozeTAndPlotCom` (from annotations),
`BuildSenPos` (+ `ReviewSenPos`), `BuildOutGen` -> parquet tables, `<task>/<split>.jsonl` in
LongLM's original fields, annotation/review tasks, rejects, stats.json (Table 3 +
accounting) and CARD.md (annotators.lot.card).
"""
from __future__ import annotations

import argparse
import dataclasses

import apache_beam as beam

from annotators.lot import outline, steps
from annotators.lot.card import lot_card
from annotators.lot.clozet import ClozeTConfig, annotation_task, parse_annotation
from annotators.lot.config import LotRunConfig, proportions_problem
from annotators.lot.senpos import SenPosConfig, review_task
from annotators.lot.stats import Table3Accumulator
from annotators.lot.story import StoryConfig, parse_story_record, prepare_story
from annotators.text import zh_tokens
from pipelines.engine import (ExportJsonlFromTable, JobReport, Stage, MatchInputs, ReadLines, ReadParquetRows, WriteJsonlGroups, WriteTable,
                              add_config_flags, config_from_args, expand_input, is_local_path, join,
                              make_pipeline, parse_job_args, run_pipeline, staging_path)
from schemas.lot import SCHEMAS, SPLITS, TASKS, to_jsonl


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m pipelines.lot", description=__doc__)
    ap.add_argument("--stories", required=True, help="JSON lines / parquet file, glob or folder")
    ap.add_argument("--output", required=True)
    ap.add_argument("--annotations", help="ClozeT annotations (JSON lines)")
    ap.add_argument("--senpos-reviews", help="completed SenPos review tasks (JSON lines)")
    add_config_flags(ap, LotRunConfig)
    add_config_flags(ap, StoryConfig, exclude=[f.name for f in dataclasses.fields(StoryConfig)
                                               if f.name != "normalize"])
    return ap


def parse_args(argv=None):
    """(job args, LotRunConfig, StoryConfig, PipelineOptions); bad split weights are a usage error."""
    parser = build_parser()
    args, options = parse_job_args(parser, argv)
    run_cfg = config_from_args(args, LotRunConfig)
    for task, weights in run_cfg.splits().items():
        problem = proportions_problem(weights)
        if problem:
            parser.error(f"argument --{task}-splits: {problem}")
    return args, run_cfg, config_from_args(args, StoryConfig), options


class _Table3(beam.CombineFn):
    def create_accumulator(self):
        return Table3Accumulator()

    def add_input(self, acc, stats):
        return acc.add(stats)

    def merge_accumulators(self, accs):
        first, *rest = list(accs)
        for acc in rest:
            first.merge(acc)
        return first

    def extract_output(self, acc):
        return acc


class _Table3Merge(_Table3):
    """Merges the per-producer Table3Accumulators of one (task, split)."""

    def add_input(self, acc, other):
        return acc.merge(other)


class ParseStories(beam.PTransform):
    """(input_id, raw line | parquet row) -> PreparedStory: parse, keep the earliest of equal
    texts then of equal ids, prepare.

    The dedup shuffles carry only small keys (StoryKey: text hash, input id, story id), never
    the stories: the stories are read a second time (`reread`, else the same input again) and
    those that lost a dedup are left out there, so no shuffle or buffer ever holds the corpus.
    """

    def __init__(self, report, config: StoryConfig, reread=None, outline_method: str = "posrake"):
        super().__init__()
        self._report, self._config, self._reread = report, config, reread
        self._outline_method = outline_method

    def expand(self, raw):
        report, cfg = self._report, self._config
        parsed = raw | report.stage("parse", lambda e: steps.one(steps.story_key(parse_story_record(*e), cfg)))
        by_text = parsed | "KeyText" >> beam.Map(lambda k: (k.text_key, k)) | "GroupText" >> beam.GroupByKey()
        unique, text_dups = by_text | Stage("dedup_text", steps.dedup_step("text", "exact_duplicate"), grouped=True,
                                            report=report, with_rejects=True)
        by_id = unique | "KeyId" >> beam.Map(lambda k: (k.story_id, k)) | "GroupId" >> beam.GroupByKey()
        _, id_dups = by_id | Stage("dedup_id", steps.dedup_step("story_id", "duplicate_id"), grouped=True,
                                   report=report, with_rejects=True)
        dropped = beam.pvalue.AsDict((text_dups, id_dups) | "Dropped" >> beam.Flatten()
                                     | "DroppedIds" >> beam.Map(lambda r: (r["input_id"], True)))
        again = self._reread() if self._reread else raw
        kept = again | "Reparse" >> beam.FlatMap(steps.kept_records, dropped)
        method = self._outline_method
        return kept | report.stage("prepare", lambda r: steps.one(prepare_story(r, cfg, outline_method=method)),
                                   input_id=lambda r: r["input_id"], setup=zh_tokens.load)


class ParseAnnotations(beam.PTransform):
    """(input_id, raw JSON line) -> ClozeT annotation dict."""

    def __init__(self, report):
        super().__init__()
        self._report = report

    def expand(self, raw):
        return raw | self._report.stage("annotations", lambda e: steps.one(parse_annotation(*e)))


class BuildClozeT(beam.PTransform):
    """{"stories", "annotations"} -> ClozeT TaskRows (+ PlotCom val/test TaskRows).

    Only the stories that annotations name are joined with them (the shuffle carries those few
    stories, not the corpus).
    """

    def __init__(self, report, seed: int, splits, config: ClozeTConfig, annotated):
        super().__init__()
        self._report, self._seed, self._splits, self._config = report, seed, splits, config
        self._annotated = annotated

    def expand(self, inputs):
        named = inputs["stories"] | "Annotated" >> beam.Filter(
            lambda s, annotated: s.story_id in annotated, annotated=self._annotated)
        joined = ({"story": named | "KeyStory" >> beam.Map(lambda s: (s.story_id, s)),
                   "ann": inputs["annotations"] | "KeyAnn" >> beam.Map(lambda a: (a["story_id"], a))}
                  | "JoinAnn" >> beam.CoGroupByKey())
        return joined | self._report.stage("clozet", steps.clozet_step(self._seed, self._splits, self._config),
                                           grouped=True, setup=zh_tokens.load)


class BuildPlotComTrain(beam.PTransform):
    """PreparedStory -> PlotCom training TaskRow, unless an annotation makes it a ClozeT story."""

    def __init__(self, report, seed: int, config: ClozeTConfig, annotated):
        super().__init__()
        self._report, self._step, self._annotated = report, steps.plotcom_step(seed, config), annotated

    def expand(self, stories):
        return stories | self._report.stage("plotcom", self._step, input_id=lambda s: s.input_id,
                                            side_inputs={"annotated": self._annotated}, setup=zh_tokens.load)


class BuildClozeTAndPlotCom(beam.PTransform):
    """{"stories", "annotations"} -> (ClozeT TaskRows (+ PlotCom val/test), PlotCom train TaskRows).

    story_id -> its annotations is a small side input (annotations are few), so the corpus
    itself is never shuffled to find the ClozeT stories.
    """

    def __init__(self, report, seed: int, splits, config: ClozeTConfig):
        super().__init__()
        self._report, self._seed, self._splits, self._config = report, seed, splits, config

    def expand(self, inputs):
        annotated = beam.pvalue.AsDict(
            inputs["annotations"] | "AnnById" >> beam.Map(lambda a: (a["story_id"], a))
            | "AnnGroups" >> beam.GroupByKey() | "AnnLists" >> beam.MapTuple(lambda k, v: (k, list(v))))
        clozet = inputs | "ClozeT" >> BuildClozeT(self._report, self._seed, self._splits, self._config, annotated)
        plotcom = inputs["stories"] | "PlotComTrain" >> BuildPlotComTrain(
            self._report, self._seed, self._config, annotated)
        return clozet, plotcom


class BuildSenPos(beam.PTransform):
    """PreparedStory -> SenPosOutput (example before review, Table 3 stats)."""

    def __init__(self, report, seed: int, splits, config: SenPosConfig):
        super().__init__()
        self._report, self._step = report, steps.senpos_step(seed, splits, config)

    def expand(self, stories):
        return stories | self._report.stage("senpos", self._step, input_id=lambda s: s.input_id,
                                            setup=zh_tokens.load)


class ParseReviews(beam.PTransform):
    """(input_id, raw JSON line) -> ReviewRecord of a completed SenPos review task."""

    def __init__(self, report):
        super().__init__()
        self._report = report

    def expand(self, raw):
        return raw | self._report.stage("senpos_review_parse", lambda e: steps.one(steps.parse_review_line(*e)))


class ReviewSenPos(beam.PTransform):
    """{"examples": val/test SenPosOutputs, "reviews": ReviewRecords} -> the examples, reviewed."""

    def __init__(self, report, reviewed_only: bool):
        super().__init__()
        self._report, self._reviewed_only = report, reviewed_only

    def expand(self, inputs):
        grouped = ({"example": inputs["examples"] | "KeyEx" >> beam.Map(lambda o: (o.example.example_id, o)),
                    "review": inputs["reviews"] | "KeyRev" >> beam.Map(lambda r: (r.review["example_id"], r))}
                   | "JoinReviews" >> beam.CoGroupByKey())
        return grouped | self._report.stage("senpos_review", steps.review_step(self._reviewed_only), grouped=True)


class BuildOutGen(beam.PTransform):
    """PreparedStory -> OutGenOutput (TaskRow, agreement with the input's outline)."""

    def __init__(self, report, seed: int, splits, outline_from: str, outline_method: str = "posrake"):
        super().__init__()
        self._report, self._step = report, steps.outgen_step(seed, splits, outline_from, outline_method)
        self._method = outline_method

    def expand(self, stories):
        method = self._method
        return stories | self._report.stage("outgen", self._step, input_id=lambda s: s.input_id,
                                            setup=lambda: outline.load(method))


class Table3(beam.PTransform):
    """TaskRow PCollections -> one {task: {split: Table 3 column -> value}} dict (LOT Table 3).

    Each PCollection is combined where it is made (only accumulators are shuffled)."""

    def expand(self, producers):
        partial = [rows | f"StatKey{i}" >> beam.Map(lambda r: ((r.task, r.row["split"]), r.stats))
                   | f"Table3Part{i}" >> beam.CombinePerKey(_Table3()) for i, rows in enumerate(producers)]
        return (partial | "Table3Parts" >> beam.Flatten() | "Table3" >> beam.CombinePerKey(_Table3Merge())
                | "Table3List" >> beam.combiners.ToList() | "Table3Dict" >> beam.Map(steps.table3, TASKS))


class OutlineAgreement(beam.PTransform):
    """OutGenOutputs -> one micro P/R/F1 dict of built against input outlines."""

    def expand(self, outgen):
        return (outgen | "Agree" >> beam.Map(lambda o: o.agreement)
                | "AgreeList" >> beam.combiners.ToList() | "AgreeSum" >> beam.Map(steps.agreement))


def _read_lines(p, label: str, pattern: str):
    return p | f"Match{label}" >> MatchInputs(pattern, (".jsonl", ".json")) | f"Read{label}" >> ReadLines()


def _read_stories(p, pattern: str, label: str = ""):
    """(input_id, raw line bytes | parquet row dict) for every input story record, matched when
    the job runs and routed by extension (a local pattern is listed now only to leave out a
    kind it has no file of)."""
    exts = (".parquet", ".jsonl", ".json")
    kinds = ({x.endswith(".parquet") for x in expand_input(pattern, exts)} if is_local_path(pattern)
             else {True, False})
    sources = p | f"MatchStories{label}" >> MatchInputs(pattern, exts)
    parts = []
    if False in kinds:
        parts.append(sources | f"StoryLineFiles{label}" >> beam.Filter(lambda s: not s.path.endswith(".parquet"))
                     | f"ReadStoryLines{label}" >> ReadLines())
    if True in kinds:
        parts.append(sources | f"StoryParquetFiles{label}" >> beam.Filter(lambda s: s.path.endswith(".parquet"))
                     | f"ReadStoryParquet{label}" >> ReadParquetRows())
    return parts[0] if len(parts) == 1 else parts | f"AllStories{label}" >> beam.Flatten()


def _senpos(p, args, run_cfg: LotRunConfig, report, stories):
    """(all SenPos outputs after reviews, the automatic val/test ones for review)."""
    senpos = stories | "BuildSenPos" >> BuildSenPos(report, run_cfg.seed, run_cfg.senpos_splits, SenPosConfig())
    evals = senpos | "SenPosEval" >> beam.Filter(lambda o: o.example.split != "train")
    if not (args.senpos_reviews or run_cfg.senpos_reviewed_only):
        return senpos, evals
    if args.senpos_reviews:
        reviews = _read_lines(p, "Reviews", args.senpos_reviews) | "ParseReviews" >> ParseReviews(report)
    else:
        reviews = p | "NoReviews" >> beam.Create([])
    reviewed = {"examples": evals, "reviews": reviews} | "ReviewSenPos" >> ReviewSenPos(
        report, run_cfg.senpos_reviewed_only)
    train = senpos | "SenPosTrain" >> beam.Filter(lambda o: o.example.split == "train")
    return (train, reviewed) | "SenPosAll" >> beam.Flatten(), evals


def _write_tasks(rows: dict[str, list], out: str, report: JobReport) -> None:
    """Each task's parquet table and its LongLM-format `<split>.jsonl` files, from the
    PCollections of TaskRows that make it (rows become plain dicts where they are made)."""
    for task in TASKS:
        parts = [pc | f"Row[{task}]{i}" >> beam.Map(lambda r: r.row) for i, pc in enumerate(rows[task])]
        task_rows = parts[0] if len(parts) == 1 else parts | f"Rows[{task}]" >> beam.Flatten()
        written = task_rows | f"Table[{task}]" >> WriteTable(
            join(out, task), SCHEMAS[task], lambda r: (r["split"], r["example_id"]), name=task)
        report.tally(written)
        report.tally(written | f"Jsonl[{task}]" >> ExportJsonlFromTable(
            join(out, task), "split", SPLITS, lambda r: (r["split"], r["example_id"]),
            lambda r, task=task: to_jsonl(task, r), lambda s, task=task: join(out, task, f"{s}.jsonl"), task))


def _write_human_tasks(stories, senpos_evals, out: str, report: JobReport) -> None:
    """ClozeT annotation tasks (every story) and SenPos review tasks (val/test)."""
    report.tally(stories | "Tasks" >> beam.Map(lambda s: ("clozet", s.story_id, annotation_task(s)))
                 | "WriteTasks" >> WriteJsonlGroups(lambda g: join(out, "annotation_tasks", f"{g}.jsonl"),
                                                    ["clozet"], "annotation_tasks"))
    report.tally(senpos_evals
                 | "ReviewRows" >> beam.Map(lambda o: (o.example.split, o.example.example_id, review_task(o.example)))
                 | "WriteReview" >> WriteJsonlGroups(lambda s: join(out, "review", f"senpos_{s}.jsonl"),
                                                     ["val", "test"], "review"))


def _config_record(run_cfg: LotRunConfig, story_cfg: StoryConfig) -> dict:
    """The stats.json / CARD.md `config` (keys and order as before the flags were generated)."""
    return {"story": vars(story_cfg), "clozet": vars(ClozeTConfig()), "senpos": vars(SenPosConfig()),
            "splits": {t: list(v) for t, v in run_cfg.splits().items()}, "outline_from": run_cfg.outline_from,
            "outline_method": run_cfg.outline_method,
            "senpos_reviewed_only": run_cfg.senpos_reviewed_only}


def run(argv=None):
    args, run_cfg, story_cfg, options = parse_args(argv)
    out, seed, splits = staging_path(args.output), run_cfg.seed, run_cfg.splits()
    inputs = [x for x in (args.stories, args.annotations, args.senpos_reviews) if x]
    p = make_pipeline(options)
    report = JobReport(out, "lot", config=_config_record(run_cfg, story_cfg), seed=seed, inputs=inputs,
                       options=options, card=lot_card)

    stories = _read_stories(p, args.stories) | "ParseStories" >> ParseStories(
        report, story_cfg, reread=lambda: _read_stories(p, args.stories, "Again"),
        outline_method=run_cfg.outline_method)
    anns = (_read_lines(p, "Annotations", args.annotations) | "ParseAnnotations" >> ParseAnnotations(report)
            if args.annotations else p | "NoAnnotations" >> beam.Create([]))
    from_clozet, plotcom = {"stories": stories, "annotations": anns} | "ClozeTAndPlotCom" >> BuildClozeTAndPlotCom(
        report, seed, splits["clozet"], ClozeTConfig())
    clozet, clozet_plotcom = from_clozet | "ClozeTTasks" >> beam.Partition(
        lambda r, n: 0 if r.task == "clozet" else 1, 2)
    senpos, senpos_evals = _senpos(p, args, run_cfg, report, stories)
    outgen = stories | "BuildOutGen" >> BuildOutGen(report, seed, splits["outgen"], run_cfg.outline_from,
                                                          run_cfg.outline_method)

    senpos_rows = senpos | "SenPosRows" >> beam.Map(lambda o: o.as_task_row())
    outgen_rows = outgen | "OutGenRows" >> beam.Map(lambda o: o.task_row)
    _write_tasks({"clozet": [clozet], "plotcom": [plotcom, clozet_plotcom], "senpos": [senpos_rows],
                  "outgen": [outgen_rows]}, out, report)
    _write_human_tasks(stories, senpos_evals, out, report)
    report.record_jieba_backend(p)
    report.extra("table3", (clozet, clozet_plotcom, plotcom, senpos_rows, outgen_rows) | "Table3" >> Table3())
    report.extra("outline_agreement", outgen | "OutlineAgreement" >> OutlineAgreement())
    report.finish(p)
    return run_pipeline(p, commit_to=args.output)


if __name__ == "__main__":
    run()
