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

from annotators.core.compact import CompactMap
from annotators.core import longlm
from annotators.lot import outline, steps
from annotators.lot.card import FIGURES as LOT_FIGURES, lot_card
from annotators.lot.clozet import ClozeTConfig, annotation_task, parse_annotation
from annotators.lot.config import RETIRED_FLAGS, LotRunConfig, proportions_problem
from annotators.lot.senpos import SenPosConfig, review_task
from annotators.lot.stats import Table3Accumulator
from annotators.lot import splits
from annotators.lot.splits import SplitPlan
from annotators.lot.story import StoryConfig, parse_story_record, prepare_story, whole_story_problem
from annotators.core.near_dup import NearDupConfig, id_components, member_clusters

from annotators.text import zh_tokens
from pipelines.engine import (ExportLinesFromTable, Gather, JobReport, Stage, MatchInputs, ReadLines, ReadParquetRows, WriteJsonlGroups, WriteTable,
                              add_config_flags, config_from_args, expand_input, is_local_path, join,
                              jsonl_line, make_pipeline, parse_job_args, run_pipeline, staging_path)
from schemas.lot import SCHEMAS, TASKS, to_jsonl

# LOT's near-duplicate groups: the stories job's defaults (Jaccard 0.8 of 5-character
# shingles) with its fast one-permutation sketch (about 60 us per story).
LOT_NEAR_DUP = NearDupConfig(sketch="oph")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m pipelines.lot", description=__doc__)
    ap.add_argument("--stories", required=True, help="JSON lines / parquet file, glob or folder")
    ap.add_argument("--output", required=True)
    ap.add_argument("--annotations", help="ClozeT annotations (JSON lines)")
    ap.add_argument("--senpos-reviews", help="completed SenPos review tasks (JSON lines)")
    add_config_flags(ap, LotRunConfig)
    add_config_flags(ap, StoryConfig, exclude=[f.name for f in dataclasses.fields(StoryConfig)
                                               if f.name not in ("normalize", "max_story_chars")])
    for name in RETIRED_FLAGS:
        ap.add_argument(f"--{name.replace('_', '-')}", dest=f"retired_{name}", help=argparse.SUPPRESS)
    return ap


def parse_args(argv=None):
    """(job args, LotRunConfig, StoryConfig, PipelineOptions); bad split weights are a usage error."""
    parser = build_parser()
    args, options = parse_job_args(parser, argv)
    for name, instead in RETIRED_FLAGS.items():
        if getattr(args, f"retired_{name}", None) is not None:
            parser.error(f"--{name.replace('_', '-')} is gone: every task now shares one split per story "
                         f"(no story, window or near-duplicate in two splits); use {instead}")
    run_cfg = config_from_args(args, LotRunConfig)
    for flag, weights in run_cfg.split_weights().items():
        problem = proportions_problem(weights)
        if problem:
            parser.error(f"argument --{flag}: {problem}")
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


def _compact_map(pairs, label: str):
    """(key, value) pairs -> a one-element PCollection of their CompactMap (read it with
    `_as_compact`)."""
    return pairs | f"{label}List" >> Gather() | f"{label}Map" >> beam.Map(lambda kv: CompactMap(dict(kv)))


def _as_compact(compact_map):
    """A `_compact_map` as an AsSingleton side input: every bundle that reads it decodes and
    weighs one blob instead of a dict of every entry (annotators.core.compact)."""
    return beam.pvalue.AsSingleton(compact_map, default_value=CompactMap())


def _compact_side_input(pairs, label: str):
    """(key, value) pairs -> an AsSingleton CompactMap side input (`_compact_map`)."""
    return _as_compact(_compact_map(pairs, label))


class ParseStories(beam.PTransform):
    """(input_id, raw line | parquet row) -> (PreparedStory, near-duplicate inputs): parse,
    keep the earliest of equal texts then of equal ids, prepare.

    The dedup shuffles carry only small keys (StoryKey: text hash, input id, story id), never
    the stories: the stories are read a second time (`reread`, else the same input again) and
    those that lost a dedup are left out there, so no shuffle or buffer ever holds the corpus.
    The near-duplicate groups come from {"bands": (LSH band, input id) of every parsed story,
    made where it is first parsed; "dropped": the CompactMap of the input ids a dedup
    dropped; "texts": the kept records, read once more}: every prepared story's step takes
    those groups as a side input, so they must not come out of the same fused stage as the
    prepared stories (NearDuplicateGroups says why the texts are read apart).
    """

    def __init__(self, report, config: StoryConfig, reread=None, outline_method: str = "posrake",
                 near_dup: NearDupConfig | None = None):
        super().__init__()
        self._report, self._config, self._reread = report, config, reread
        self._outline_method = outline_method
        self._near_dup = near_dup or LOT_NEAR_DUP

    def expand(self, raw):
        report, cfg, near = self._report, self._config, self._near_dup
        keyed = raw | report.stage("parse", lambda e: steps.one(steps.story_key_bands(parse_story_record(*e), cfg, near)))
        parsed = keyed | "Keys" >> beam.Map(lambda kb: kb[0])
        bands = keyed | "BandIds" >> beam.FlatMap(lambda kb: [(band, kb[0].input_id) for band in kb[1]])
        by_text = parsed | "KeyText" >> beam.Map(lambda k: (k.text_key, k)) | "GroupText" >> beam.GroupByKey()
        unique, text_dups = by_text | Stage("dedup_text", steps.dedup_step("text", "exact_duplicate"), grouped=True,
                                            report=report, with_rejects=True)
        by_id = unique | "KeyId" >> beam.Map(lambda k: (k.story_id, k)) | "GroupId" >> beam.GroupByKey()
        _, id_dups = by_id | Stage("dedup_id", steps.dedup_step("story_id", "duplicate_id"), grouped=True,
                                   report=report, with_rejects=True)
        dropped_map = _compact_map((text_dups, id_dups) | "Dropped" >> beam.Flatten()
                                   | "DroppedIds" >> beam.Map(lambda r: (r["input_id"], True)), "Dropped")
        dropped = _as_compact(dropped_map)
        again = self._reread("Again") if self._reread else raw
        kept = again | "Reparse" >> beam.FlatMap(steps.kept_records, dropped)
        method = self._outline_method
        prepared = kept | report.stage("prepare", lambda r: steps.one(prepare_story(r, cfg, outline_method=method)),
                                       input_id=lambda r: r["input_id"], setup=zh_tokens.load)
        again = self._reread("Duptexts") if self._reread else raw
        texts = (again | "Reparse[texts]" >> beam.FlatMap(steps.kept_records, dropped)
                 | "DupText[texts]" >> beam.Map(steps.near_dup_record, cfg))
        return prepared, {"bands": bands, "dropped": dropped_map, "texts": texts}


class ParseAnnotations(beam.PTransform):
    """(input_id, raw JSON line) -> ClozeT annotation dict."""

    def __init__(self, report):
        super().__init__()
        self._report = report

    def expand(self, raw):
        return raw | self._report.stage("annotations", lambda e: steps.one(parse_annotation(*e)))


def annotations_by_story(anns):
    """story_id -> [its parsed ClozeT annotations], a small side input (annotations are few)."""
    return beam.pvalue.AsDict(
        anns | "AnnById" >> beam.Map(lambda a: (a["story_id"], a))
        | "AnnGroups" >> beam.GroupByKey() | "AnnLists" >> beam.MapTuple(lambda k, v: (k, list(v))))


class NearDuplicateGroups(beam.PTransform):
    """NearDupRecord -> story_id -> StoryGroup (AsSingleton CompactMap side input) of every
    group of two or more near-duplicate stories, with the stories job's near-duplicate code
    (annotators.core.near_dup): MinHash LSH band keys (its fast one-permutation sketch);
    stories sharing a band are candidates; candidate sets sharing a story are joined into
    components in one global step over input ids only; each candidate's text goes once to
    its component, where its band keys are made again, stories sharing a band are verified
    by exact shingle Jaccard (skipping pairs already joined) and clustered. Only candidates' texts are
    shuffled, never the corpus.

    The inputs (`{"bands", "dropped", "texts"}`, ParseStories): every parsed story's (band,
    input id) pairs, made where the story was first parsed; the CompactMap of the input ids
    a dedup dropped (left out of every candidate set); the kept stories' records from a read
    of their own: the texts are matched with the component side input as they are read,
    which a PCollection that also fed that side input could only do after the runner had
    buffered all of it."""

    def __init__(self, config: NearDupConfig):
        super().__init__()
        self._config = config

    def expand(self, reads):
        config = self._config
        component_of = _compact_side_input(
            reads["bands"] | "GroupBands" >> beam.GroupByKey()
            | "CandidateSets" >> beam.FlatMap(steps.candidate_set, _as_compact(reads["dropped"]))
            | "DistinctSets" >> beam.Distinct() | "AllSets" >> Gather()
            | "Components" >> beam.FlatMap(lambda sets: sorted(id_components(sets).items())), "ComponentOf")
        return (reads["texts"] | "CandidateTexts" >> beam.FlatMap(
                    lambda r, comp: [(comp[r.node.input_id], (r.node, r.text))]
                    if r.node.input_id in comp else [], comp=component_of)
                | "GroupComponents" >> beam.GroupByKey()
                | "Clusters" >> beam.FlatMap(lambda kv: member_clusters(kv[1], config))
                | "ClusterList" >> Gather()
                | "Groups" >> beam.Map(splits.groups_from))


class BuildClozeT(beam.PTransform):
    """{"stories", "annotations"} -> ClozeT TaskRows (+ PlotCom val/test TaskRows).

    Only the stories that annotations name are joined with them (the shuffle carries those few
    stories, not the corpus).
    """

    def __init__(self, report, step, split_inputs: dict):
        super().__init__()
        self._report, self._step, self._side = report, step, split_inputs

    def expand(self, inputs):
        named = inputs["stories"] | "Annotated" >> beam.Filter(
            lambda s, annotated: s.story_id in annotated, annotated=self._side["annotated"])
        joined = ({"story": named | "KeyStory" >> beam.Map(lambda s: (s.story_id, s)),
                   "ann": inputs["annotations"] | "KeyAnn" >> beam.Map(lambda a: (a["story_id"], a))}
                  | "JoinAnn" >> beam.CoGroupByKey())
        return joined | self._report.stage("clozet", self._step, grouped=True, side_inputs=self._side,
                                           setup=zh_tokens.load)


class BuildClozeTAndPlotCom(beam.PTransform):
    """{"stories", "annotations"} -> (ClozeT TaskRows (+ PlotCom val/test), PlotCom train TaskRows).

    story_id -> its annotations is a small side input (annotations are few), so the corpus
    itself is never shuffled to find the ClozeT stories; the split side inputs
    (`split_inputs`: near-duplicate groups, annotated ids) give every story its one split.
    """

    def __init__(self, report, plan: SplitPlan, config: ClozeTConfig, limits: StoryConfig,
                 plotcom_eval: str, split_inputs: dict):
        super().__init__()
        self._report, self._side = report, split_inputs
        self._clozet = steps.clozet_step(plan, config, limits, plotcom_eval)
        self._plotcom = steps.plotcom_step(plan, config, limits)

    def expand(self, inputs):
        clozet = inputs | "ClozeT" >> BuildClozeT(self._report, self._clozet, self._side)
        plotcom = inputs["stories"] | "PlotComTrain" >> self._report.stage(
            "plotcom", self._plotcom, input_id=lambda s: s.input_id, side_inputs=self._side, setup=zh_tokens.load)
        return clozet, plotcom


class BuildSenPos(beam.PTransform):
    """PreparedStory -> SenPosOutput per window (example before review, Table 3 stats)."""

    def __init__(self, report, plan: SplitPlan, config: SenPosConfig, split_inputs: dict):
        super().__init__()
        self._report, self._step, self._side = report, steps.senpos_step(plan, config), split_inputs

    def expand(self, stories):
        return stories | self._report.stage("senpos", self._step, input_id=lambda s: s.input_id,
                                            side_inputs=self._side, setup=zh_tokens.load)


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

    def __init__(self, report, plan: SplitPlan, run_cfg: LotRunConfig, limits: StoryConfig, split_inputs: dict):
        super().__init__()
        self._report, self._side = report, split_inputs
        self._step = steps.outgen_step(plan, run_cfg.outline_from, run_cfg.outline_method, limits,
                                       run_cfg.title_from)
        self._method = run_cfg.outline_method

    def expand(self, stories):
        method = self._method
        return stories | self._report.stage("outgen", self._step, input_id=lambda s: s.input_id,
                                            side_inputs=self._side, setup=lambda: outline.load(method))


class Leaks(beam.PTransform):
    """TaskRow PCollections -> one leak report (annotators.lot.splits.group_leaks summed): the
    written examples' (task, story, split) grouped by near-duplicate group, so the check
    reads what was written rather than trusting how splits were drawn."""

    def __init__(self, groups):
        super().__init__()
        self._groups = groups

    def expand(self, producers):
        triples = [rows | f"LeakTriple{i}" >> beam.Map(
            lambda r, groups: (splits.group_key(r.row["story_id"], groups), (r.task, r.row["story_id"], r.row["split"])),
            groups=self._groups) for i, rows in enumerate(producers)]
        return (triples | "LeakTriples" >> beam.Flatten() | "LeakGroups" >> beam.CombinePerKey(_GatherTriples())
                | "GroupLeaks" >> beam.Map(lambda kv, groups: splits.keyed_group_leaks(*kv, groups), groups=self._groups)
                | "SumLeaks" >> beam.CombineGlobally(_SumLeaks()))


class _GatherTriples(beam.CombineFn):
    """A group's (task, story, split) triples, gathered where they are made first (the rows
    of one story's tasks, and of its near-duplicates, often share a bundle), so the shuffle
    carries a list per group and bundle instead of one element per written example."""

    def create_accumulator(self):
        return []

    def add_input(self, acc, triple):
        acc.append(triple)
        return acc

    def merge_accumulators(self, accs):
        out = []
        for acc in accs:
            out.extend(acc)
        return out

    def extract_output(self, acc):
        return acc


class _SumLeaks(beam.CombineFn):
    def create_accumulator(self):
        return None

    def add_input(self, acc, leaks):
        return splits.add_leaks(acc, leaks)

    def merge_accumulators(self, accs):
        out = None
        for acc in accs:
            if acc:
                out = splits.add_leaks(out, acc)
        return out

    def extract_output(self, acc):
        return acc or splits.group_leaks("", [], False)


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
                | "AgreeSum" >> beam.CombineGlobally(_SumAgreement()) | "AgreeDict" >> beam.Map(lambda acc: steps.agreement_from_sums(*acc)))


class _SumAgreement(beam.CombineFn):
    """AgreementCounts summed field by field, and the stories that had an input outline (one
    small accumulator instead of a list per story); the output is what steps.agreement_from_sums reads."""

    def create_accumulator(self):
        return (0, 0, 0, 0)

    def add_input(self, acc, counts):
        return (acc[0] + counts.shared, acc[1] + counts.predicted, acc[2] + counts.official,
                acc[3] + (1 if counts.official else 0))

    def merge_accumulators(self, accs):
        return tuple(sum(parts) for parts in zip(*accs))

    def extract_output(self, acc):
        return acc


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


def _senpos(p, args, run_cfg: LotRunConfig, report, stories, plan: SplitPlan, split_inputs: dict):
    """(all SenPos outputs after reviews, the automatic val/test ones for review)."""
    senpos = stories | "BuildSenPos" >> BuildSenPos(report, plan, SenPosConfig(), split_inputs)
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
    """Each task's parquet table, its LongLM-format `<group>.jsonl` files and (ClozeT, SenPos,
    OutGen) the baselines' `<group>.source`/`.target` (annotators.core.longlm), from the
    PCollections of TaskRows that make it (rows become plain dicts where they are made). A
    group is a split; SenPos val/test not yet reviewed go to `<split>.unreviewed.*`."""
    for task in TASKS:
        parts = [pc | f"Row[{task}]{i}" >> beam.Map(lambda r: r.row) for i, pc in enumerate(rows[task])]
        task_rows = parts[0] if len(parts) == 1 else parts | f"Rows[{task}]" >> beam.Flatten()
        order = lambda r: (r["split"], r["example_id"])  # noqa: E731 (the table's and every export's order)
        written = task_rows | f"Table[{task}]" >> WriteTable(join(out, task), SCHEMAS[task], order, name=task)
        report.tally(written)
        groups = longlm.export_groups(task)
        files = [f"{g}.jsonl" for g in groups]
        if task in longlm.SOURCE_TARGET_TASKS:
            files += [f"{g}.{end}" for g in groups for end in ("source", "target")]
        # one pass over the written table gives every file: `<group>.jsonl` (a line per
        # example, newline-ended) and the baselines' `.source`/`.target` (newline-separated)
        report.tally(written | f"Exports[{task}]" >> ExportLinesFromTable(
            join(out, task), files, order, lambda r, task=task: _export_lines(task, r),
            lambda f, task=task: join(out, task, f), task, newline_at_end=lambda f: f.endswith(".jsonl")))


def _export_lines(task: str, row: dict) -> list[tuple[str, str]]:
    """(file, line) of one written row: its LongLM JSON line and, for the tasks the
    baselines read as `.source`/`.target`, those lines."""
    group = longlm.export_group(task, row)
    lines = [(f"{group}.jsonl", jsonl_line(to_jsonl(task, row))[:-1])]
    if task in longlm.SOURCE_TARGET_TASKS:
        source, target = longlm.source_target(task, row)
        lines += [(f"{group}.source", source), (f"{group}.target", target)]
    return lines


def _write_human_tasks(stories, senpos_evals, out: str, report: JobReport, limits: StoryConfig) -> None:
    """ClozeT annotation tasks (every story ClozeT can take) and SenPos review tasks (val/test)."""
    report.tally(stories | "Tasks" >> beam.FlatMap(
        lambda s: [] if whole_story_problem(s, limits, "ClozeT") else [("clozet", s.story_id, annotation_task(s))])
                 | "WriteTasks" >> WriteJsonlGroups(lambda g: join(out, "annotation_tasks", f"{g}.jsonl"),
                                                    ["clozet"], "annotation_tasks"))
    report.tally(senpos_evals
                 | "ReviewRows" >> beam.Map(lambda o: (o.example.split, o.example.example_id, review_task(o.example)))
                 | "WriteReview" >> WriteJsonlGroups(lambda s: join(out, "review", f"senpos_{s}.jsonl"),
                                                     ["val", "test"], "review"))


def _config_record(run_cfg: LotRunConfig, story_cfg: StoryConfig) -> dict:
    """The stats.json / CARD.md `config` (keys and order as before the flags were generated)."""
    return {"story": vars(story_cfg), "clozet": vars(ClozeTConfig()), "senpos": vars(SenPosConfig()),
            "splits": {"stories": list(run_cfg.splits), "clozet_stories": list(run_cfg.clozet_splits)},
            "plotcom_eval": run_cfg.plotcom_eval, "title_from": run_cfg.title_from,
            "near_duplicates": vars(LOT_NEAR_DUP), "outline_from": run_cfg.outline_from,
            "outline_method": run_cfg.outline_method,
            "senpos_reviewed_only": run_cfg.senpos_reviewed_only}


def run(argv=None):
    args, run_cfg, story_cfg, options = parse_args(argv)
    out, seed = staging_path(args.output), run_cfg.seed
    plan = SplitPlan(seed, run_cfg.splits, run_cfg.clozet_splits)
    inputs = [x for x in (args.stories, args.annotations, args.senpos_reviews) if x]
    p = make_pipeline(options)
    report = JobReport(out, "lot", config=_config_record(run_cfg, story_cfg), seed=seed, inputs=inputs,
                       options=options, card=lot_card, figures=LOT_FIGURES)

    stories, records = _read_stories(p, args.stories) | "ParseStories" >> ParseStories(
        report, story_cfg, reread=lambda label: _read_stories(p, args.stories, label),
        outline_method=run_cfg.outline_method)
    anns = (_read_lines(p, "Annotations", args.annotations) | "ParseAnnotations" >> ParseAnnotations(report)
            if args.annotations else p | "NoAnnotations" >> beam.Create([]))
    annotated = annotations_by_story(anns)
    groups = beam.pvalue.AsSingleton(records | "NearDuplicates" >> NearDuplicateGroups(LOT_NEAR_DUP),
                                     default_value=CompactMap())
    split_inputs = {"groups": groups, "annotated": annotated}

    from_clozet, plotcom = {"stories": stories, "annotations": anns} | "ClozeTAndPlotCom" >> BuildClozeTAndPlotCom(
        report, plan, ClozeTConfig(), story_cfg, run_cfg.plotcom_eval, split_inputs)
    clozet, clozet_plotcom = from_clozet | "ClozeTTasks" >> beam.Partition(
        lambda r, n: 0 if r.task == "clozet" else 1, 2)
    senpos, senpos_evals = _senpos(p, args, run_cfg, report, stories, plan, split_inputs)
    outgen = stories | "BuildOutGen" >> BuildOutGen(report, plan, run_cfg, story_cfg, split_inputs)

    senpos_rows = senpos | "SenPosRows" >> beam.Map(lambda o: o.as_task_row())
    outgen_rows = outgen | "OutGenRows" >> beam.Map(lambda o: o.task_row)
    _write_tasks({"clozet": [clozet], "plotcom": [plotcom, clozet_plotcom], "senpos": [senpos_rows],
                  "outgen": [outgen_rows]}, out, report)
    _write_human_tasks(stories, senpos_evals, out, report, story_cfg)
    report.record_jieba_backend(p)
    produced = (clozet, clozet_plotcom, plotcom, senpos_rows, outgen_rows)
    report.extra("table3", produced | "Table3" >> Table3())
    report.extra("leaks", produced | "Leaks" >> Leaks(groups))
    report.extra("outgen_titles", outgen_rows | "TitleSource" >> beam.Map(lambda r: r.row["title_source"])
                 | "TitleCounts" >> beam.combiners.Count.PerElement() | "TitleList" >> beam.combiners.ToList()
                 | "TitleDict" >> beam.Map(lambda kv: dict(sorted(kv))))
    report.extra("outline_agreement", outgen | "OutlineAgreement" >> OutlineAgreement())
    report.finish(p)
    return run_pipeline(p, commit_to=args.output)


if __name__ == "__main__":
    run()
