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
from apache_beam.transforms.window import GlobalWindows

from annotators.core.compact import CompactMap
from annotators.core import longlm
from annotators.lot import outline, steps
from annotators.lot.card import FIGURES as LOT_FIGURES, lot_card
from annotators.lot.clozet import ClozeTConfig, annotation_task, parse_annotation
from annotators.lot.config import RETIRED_FLAGS, LotRunConfig, proportions_problem
from annotators.lot.senpos import SenPosConfig, review_task
from annotators.lot.records import OutGenOutput
from annotators.lot.stats import Table3Accumulator
from annotators.lot import splits
from annotators.harness import lot as harness_tasks
from annotators.lot.splits import SplitPlan
from annotators.lot.story import StoryConfig, parse_story_record, prepare_story, whole_story_problem
from annotators.core.near_dup import NearDupConfig, id_components, member_clusters

from annotators.text import zh_tokens
from pipelines.engine.usage import main
from pipelines.engine import (ExportLinesFromTable, ExportTables, Gather, once, JobReport, Stage, MatchInputs, ReadLines, ReadParquetRows, TableSpec, WriteJsonlGroups, WriteTables,
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
    ap.add_argument("--zh-backend", choices=zh_tokens.BACKENDS, default=None,
                    help="jieba backend: auto (rjieba if it passes its self-check), jieba or rjieba; "
                         "the same tokens either way (default: $STORYBENCH_ZH_BACKEND, else auto)")
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


class _BandBlocks(beam.DoFn):
    """(StoryKey, its LSH band keys) -> (partition, [(band, input id), ...]) blocks: a bundle's
    pairs gathered per partition of the band keys (steps.band_part), so the band shuffle
    carries a block per partition and bundle instead of one element per story and band.
    At most FLUSH pairs are held before they go out."""

    FLUSH = 1 << 18

    def start_bundle(self):
        self._parts: dict[int, list] = {}
        self._held = 0

    def process(self, key_bands):
        key, bands = key_bands
        parts = self._parts
        for band in bands:
            parts.setdefault(steps.band_part(band), []).append((band, key.input_id))
        self._held += len(bands)
        if self._held >= self.FLUSH:
            yield from self._blocks()

    def _blocks(self):
        parts, self._parts, self._held = self._parts, {}, 0
        return sorted(parts.items())

    def finish_bundle(self):
        for block in self._blocks():
            yield GlobalWindows.windowed_value(block)


class ZhSetup:
    """A stage's setup in every worker process: this job's jieba backend (`--zh-backend`; None:
    the worker's default), then the dictionaries (and, with `outline_method`, the outline's)."""

    def __init__(self, backend: str | None, outline_method: str | None = None):
        self.backend, self.outline_method = backend, outline_method

    def __call__(self) -> None:
        if self.backend:
            zh_tokens.configure(self.backend)
        if self.outline_method:
            outline.load(self.outline_method)
        else:
            zh_tokens.load()


class ParseStories(beam.PTransform):
    """(input_id, raw line | parquet row) -> (PreparedStory, near-duplicate inputs): parse,
    keep the earliest of equal texts then of equal ids, prepare.

    The dedup shuffles carry only small keys (StoryKey: text hash, input id, story id), never
    the stories: the stories are read a second time (`reread`, else the same input again) and
    those that lost a dedup are left out there, so no shuffle or buffer ever holds the corpus.
    The near-duplicate groups come from {"bands": (LSH band, input id) of every parsed story,
    made where it is first parsed, in blocks per band partition and bundle (`_BandBlocks`); "dropped": the CompactMap of the input ids a dedup
    dropped; "texts": the kept records, read once more}: every prepared story's step takes
    those groups as a side input, so they must not come out of the same fused stage as the
    prepared stories (NearDuplicateGroups says why the texts are read apart).
    """

    def __init__(self, report, config: StoryConfig, reread=None, outline_method: str = "posrake",
                 near_dup: NearDupConfig | None = None, zh_backend: str | None = None):
        super().__init__()
        self._report, self._config, self._reread, self._zh = report, config, reread, ZhSetup(zh_backend)
        self._outline_method = outline_method
        self._near_dup = near_dup or LOT_NEAR_DUP

    def expand(self, raw):
        report, cfg, near = self._report, self._config, self._near_dup
        keyed = raw | report.stage("parse", lambda e: steps.one(steps.story_key_bands(parse_story_record(*e), cfg, near)))
        parsed = keyed | "Keys" >> beam.Map(lambda kb: kb[0])
        bands = keyed | "BandBlocks" >> beam.ParDo(_BandBlocks())
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
                                       input_id=lambda r: r["input_id"], setup=self._zh)
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
    input id) pairs, made where the story was first parsed, as (band partition, pairs)
    blocks (each partition's candidate sets are found where its blocks meet); the CompactMap of the input ids
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
            | "CandidateSets" >> beam.FlatMap(lambda part, dropped: steps.partition_candidate_sets(part[1], dropped),
                                              _as_compact(reads["dropped"]))
            | "AllSets" >> Gather()
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

    def __init__(self, report, step, split_inputs: dict, zh_backend: str | None = None):
        super().__init__()
        self._report, self._step, self._side, self._zh = report, step, split_inputs, ZhSetup(zh_backend)

    def expand(self, inputs):
        named = inputs["stories"] | "Annotated" >> beam.Filter(
            lambda s, annotated: s.story_id in annotated, annotated=self._side["annotated"])
        joined = ({"story": named | "KeyStory" >> beam.Map(lambda s: (s.story_id, s)),
                   "ann": inputs["annotations"] | "KeyAnn" >> beam.Map(lambda a: (a["story_id"], a))}
                  | "JoinAnn" >> beam.CoGroupByKey())
        return joined | self._report.stage("clozet", self._step, grouped=True, side_inputs=self._side,
                                           setup=self._zh)


class BuildClozeTAndPlotCom(beam.PTransform):
    """{"stories", "annotations"} -> (ClozeT TaskRows (+ PlotCom val/test), PlotCom train TaskRows);
    without "annotations" (none given) the ClozeT step is not built: (None, PlotCom train TaskRows).

    story_id -> its annotations is a small side input (annotations are few), so the corpus
    itself is never shuffled to find the ClozeT stories; the split side inputs
    (`split_inputs`: near-duplicate groups, annotated ids) give every story its one split.
    """

    def __init__(self, report, plan: SplitPlan, config: ClozeTConfig, limits: StoryConfig,
                 plotcom_eval: str, split_inputs: dict, zh_backend: str | None = None):
        super().__init__()
        self._report, self._side, self._zh_backend = report, split_inputs, zh_backend
        self._clozet = steps.clozet_step(plan, config, limits, plotcom_eval)
        self._plotcom = steps.plotcom_step(plan, config, limits)

    def expand(self, inputs):
        if inputs.get("annotations") is None:  # no annotations: no ClozeT step to build
            self._report.declare("clozet")
            clozet = None
        else:
            clozet = inputs | "ClozeT" >> BuildClozeT(self._report, self._clozet, self._side, self._zh_backend)
        plotcom = inputs["stories"] | "PlotComTrain" >> self._report.stage(
            "plotcom", self._plotcom, input_id=lambda s: s.input_id, side_inputs=self._side,
            setup=ZhSetup(self._zh_backend))
        return clozet, plotcom


class BuildSenPos(beam.PTransform):
    """PreparedStory -> SenPosOutput per window (example before review, Table 3 stats)."""

    def __init__(self, report, plan: SplitPlan, config: SenPosConfig, split_inputs: dict,
                 zh_backend: str | None = None):
        super().__init__()
        self._report, self._step, self._side = report, steps.senpos_step(plan, config), split_inputs
        self._zh = ZhSetup(zh_backend)

    def expand(self, stories):
        return stories | self._report.stage("senpos", self._step, input_id=lambda s: s.input_id,
                                            side_inputs=self._side, setup=self._zh)


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

    def __init__(self, report, plan: SplitPlan, run_cfg: LotRunConfig, limits: StoryConfig, split_inputs: dict,
                 zh_backend: str | None = None):
        super().__init__()
        self._report, self._side = report, split_inputs
        self._step = steps.outgen_step(plan, run_cfg.outline_from, run_cfg.outline_method, limits,
                                       run_cfg.title_from, run_cfg.outline_fill, run_cfg.outline_opening)
        self._zh = ZhSetup(zh_backend, run_cfg.outline_method)

    def expand(self, stories):
        return stories | self._report.stage("outgen", self._step, input_id=lambda s: s.input_id,
                                            side_inputs=self._side, setup=self._zh)


class _GatherTriples(beam.CombineFn):
    """A group's (task, story, split) triples, from the lists each producer's bundles gathered
    (`_TallyExamples`), so the shuffle carries a list per group and bundle instead of one
    element per written example."""

    def create_accumulator(self):
        return []

    def add_input(self, acc, triples):
        acc.extend(triples)
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


class _Summary(beam.CombineFn):
    """The job's summaries of its written examples, in one accumulator combined where the rows
    are made (only accumulators are shuffled): LOT Table 3 per (task, split) from the TaskRows'
    stats; from the OutGenOutputs also the outline agreement sums (shared, predicted, input
    phrases; stories with an input outline) and the count of each title source."""

    def create_accumulator(self):
        return {}, {}, [0, 0, 0, 0]

    def add_input(self, acc, item):
        table3, titles, agreement = acc
        if isinstance(item, OutGenOutput):
            counts, item = item.agreement, item.task_row
            agreement[0] += counts.shared
            agreement[1] += counts.predicted
            agreement[2] += counts.official
            agreement[3] += 1 if counts.official else 0
            source = item.row["title_source"]
            titles[source] = titles.get(source, 0) + 1
        key = (item.task, item.row["split"])
        part = table3.get(key)
        if part is None:
            part = table3[key] = Table3Accumulator()
        part.add(item.stats)
        return acc

    def merge_accumulators(self, accs):
        table3, titles, agreement = self.create_accumulator()
        for t3, ts, ag in accs:
            for key, part in t3.items():
                if key in table3:
                    table3[key].merge(part)
                else:
                    table3[key] = part
            for source, n in ts.items():
                titles[source] = titles.get(source, 0) + n
            agreement = [a + b for a, b in zip(agreement, ag)]
        return table3, titles, agreement

    def extract_output(self, acc):
        table3, titles, agreement = acc
        return {"table3": steps.table3(table3.items(), TASKS), "outgen_titles": dict(sorted(titles.items())),
                "outline_agreement": steps.agreement_from_sums(*agreement)}


class _OfficialTable3(beam.CombineFn):
    """Official OutGen lines' Table 3 numbers -> {"outgen": Table 3 column -> value} ({} if none)."""

    def create_accumulator(self):
        return Table3Accumulator()

    def add_input(self, acc, stats):
        return acc.add(stats)

    def merge_accumulators(self, accs):
        out = Table3Accumulator()
        for acc in accs:
            out.merge(acc)
        return out

    def extract_output(self, acc):
        return {"outgen": acc.result("outgen")} if acc.n else {}


def _official_table3(p, pattern: str, report):
    """The card's Table 3 official-data column, measured on `--official-outgen` lines."""
    return (_read_lines(p, "Official", pattern) | report.stage("official_outgen", steps.official_outgen_step)
            | "OfficialTable3" >> beam.CombineGlobally(_OfficialTable3()))


class _TallyExamples(beam.DoFn):
    """One producer's examples, tallied per bundle where they are made: the bundle's `_Summary`
    accumulator (main output) and, per leak key (annotators.lot.splits.group_key), the
    (task, story, split) triples of its examples (output "triples"). Only these few
    accumulators and lists leave the producer's stage, never the rows."""

    def __init__(self):
        self._fn = _Summary()

    def start_bundle(self):
        self._acc, self._triples = self._fn.create_accumulator(), {}

    def process(self, item, groups):
        self._fn.add_input(self._acc, item)
        row = (item.task_row if isinstance(item, OutGenOutput) else item)
        task, story_id, split = row.task, row.row["story_id"], row.row["split"]
        self._triples.setdefault(splits.group_key(story_id, groups), []).append((task, story_id, split))
        return ()

    def finish_bundle(self):
        yield GlobalWindows.windowed_value(self._acc)
        for key, triples in self._triples.items():
            yield beam.pvalue.TaggedOutput("triples", GlobalWindows.windowed_value((key, triples)))


class Tallies(beam.PTransform):
    """The producers' TaskRows (OutGenOutputs for OutGen) -> {"summary": one `_Summary` dict
    (LOT Table 3, title sources, outline agreement), "leaks": one leak report
    (annotators.lot.splits.group_leaks summed)}; either is empty when nothing was written
    (`EMPTY` holds what they stand for then). The leak check groups the written examples'
    (task, story, split) by near-duplicate group, so it reads what was written rather than
    trusting how splits were drawn."""

    EMPTY = {**_Summary().extract_output(_Summary().create_accumulator()),
             "leaks": splits.group_leaks("", [], False)}

    def __init__(self, groups):
        super().__init__()
        self._groups = groups

    def expand(self, producers):
        parts = [rows | f"Tally{i}" >> beam.ParDo(_TallyExamples(), groups=self._groups).with_outputs(
                     "triples", main="summary") for i, rows in enumerate(producers)]
        summary = ([part.summary for part in parts] | "Summaries" >> beam.Flatten()
                   | "Summary" >> beam.CombineGlobally(_MergeSummaries()).without_defaults())
        leaks = ([part.triples for part in parts] | "LeakTriples" >> beam.Flatten()
                 | "LeakGroups" >> beam.CombinePerKey(_GatherTriples())
                 | "GroupLeaks" >> beam.Map(lambda kv, groups: splits.keyed_group_leaks(*kv, groups),
                                            groups=self._groups)
                 | "SumLeaks" >> beam.CombineGlobally(_SumLeaks()).without_defaults())
        return {"summary": summary, "leaks": leaks}


class _MergeSummaries(_Summary):
    """Merges the bundles' `_Summary` accumulators."""

    def add_input(self, acc, other):
        return self.merge_accumulators([acc, other])


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
    senpos = stories | "BuildSenPos" >> BuildSenPos(report, plan, SenPosConfig(), split_inputs, args.zh_backend)
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


def _task_rows(item) -> tuple:
    """The (table, row) of a producer's element: a TaskRow, or the OutGenOutput holding one."""
    row = item.task_row if isinstance(item, OutGenOutput) else item
    return ((row.task, row.row),)


def _write_tasks(producers: tuple, out: str, report: JobReport) -> None:
    """Each task's parquet table, its LongLM-format `<group>.jsonl` files and (ClozeT, SenPos,
    OutGen) the baselines' `<group>.source`/`.target` (annotators.core.longlm), from the
    PCollections of TaskRows (OutGenOutputs) that make them: the four tables are written
    together (rows become plain dicts where they are made) and exported in one step. A group
    is a split; SenPos val/test not yet reviewed go to `<split>.unreviewed.*`."""
    order = lambda r: (r["split"], r["example_id"])  # noqa: E731 (the tables' and every export's order)
    tables = {task: TableSpec(join(out, task), SCHEMAS[task], order) for task in TASKS}
    written = producers | "Tables" >> WriteTables(tables, [_task_rows] * len(producers),
                                                  spill=join(out, "_spill-tables"))
    report.tally(written)
    exports = []
    for task in TASKS:
        groups = longlm.export_groups(task)
        files = [f"{g}.jsonl" for g in groups]
        if task in longlm.SOURCE_TARGET_TASKS:
            files += [f"{g}.{end}" for g in groups for end in ("source", "target")]
        # one pass over the written table gives every file: `<group>.jsonl` (a line per
        # example, newline-ended) and the baselines' `.source`/`.target` (newline-separated)
        exports.append(ExportLinesFromTable(
            join(out, task), files, order, lambda r, task=task: _export_lines(task, r),
            lambda f, task=task: join(out, task, f), task, newline_at_end=lambda f: f.endswith(".jsonl")))
    report.tally(written | "Exports" >> ExportTables(exports))


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
            "outline_method": run_cfg.outline_method, "outline_fill": run_cfg.outline_fill,
            "outline_opening": run_cfg.outline_opening,
            "senpos_reviewed_only": run_cfg.senpos_reviewed_only, "official_outgen": run_cfg.official_outgen}


def run(argv=None):
    args, run_cfg, story_cfg, options = parse_args(argv)
    if args.zh_backend:  # this process; every stage's setup sets it in the workers (ZhSetup)
        zh_tokens.configure(args.zh_backend)
    out, seed = staging_path(args.output), run_cfg.seed
    plan = SplitPlan(seed, run_cfg.splits, run_cfg.clozet_splits)
    inputs = [x for x in (args.stories, args.annotations, args.senpos_reviews, run_cfg.official_outgen) if x]
    p = make_pipeline(options)
    report = JobReport(out, "lot", config=_config_record(run_cfg, story_cfg), seed=seed, inputs=inputs,
                       options=options, card=lot_card, figures=LOT_FIGURES, attachments=harness_tasks.attachments)

    stories, records = _read_stories(p, args.stories) | "ParseStories" >> ParseStories(
        report, story_cfg, reread=lambda label: _read_stories(p, args.stories, label),
        outline_method=run_cfg.outline_method, zh_backend=args.zh_backend)
    if args.annotations:
        anns = _read_lines(p, "Annotations", args.annotations) | "ParseAnnotations" >> ParseAnnotations(report)
        annotated = annotations_by_story(anns)
    else:  # nothing is annotated: ClozeT has no step, every split side input is empty
        anns = None
        annotated = beam.pvalue.AsDict(once(p, "NoAnnotations") | "NoAnnotated" >> beam.FlatMap(lambda _: []))
    groups = beam.pvalue.AsSingleton(records | "NearDuplicates" >> NearDuplicateGroups(LOT_NEAR_DUP),
                                     default_value=CompactMap())
    split_inputs = {"groups": groups, "annotated": annotated}

    story_inputs = {"stories": stories, **({"annotations": anns} if anns is not None else {})}
    from_clozet, plotcom = story_inputs | "ClozeTAndPlotCom" >> BuildClozeTAndPlotCom(
        report, plan, ClozeTConfig(), story_cfg, run_cfg.plotcom_eval, split_inputs, args.zh_backend)
    senpos, senpos_evals = _senpos(p, args, run_cfg, report, stories, plan, split_inputs)
    outgen = stories | "BuildOutGen" >> BuildOutGen(report, plan, run_cfg, story_cfg, split_inputs, args.zh_backend)

    senpos_rows = senpos | "SenPosRows" >> beam.Map(lambda o: o.as_task_row())
    # TaskRows; OutGenOutputs for OutGen
    produced = tuple(pc for pc in (from_clozet, plotcom, senpos_rows, outgen) if pc is not None)
    _write_tasks(produced, out, report)
    _write_human_tasks(stories, senpos_evals, out, report, story_cfg)
    report.record_jieba_backend(p, args.zh_backend)
    tallies = produced | "Tallies" >> Tallies(groups)
    report.extras(tallies["summary"], {k: v for k, v in Tallies.EMPTY.items() if k != "leaks"})
    report.extra("leaks", tallies["leaks"], Tallies.EMPTY["leaks"])
    if run_cfg.official_outgen:
        report.extra("table3_official", _official_table3(p, run_cfg.official_outgen, report))
    report.finish(p)
    return run_pipeline(p, commit_to=args.output)


if __name__ == "__main__":
    main(run, "lot")
