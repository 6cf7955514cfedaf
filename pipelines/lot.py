"""`python -m pipelines.lot`: stories in, the four LOT datasets out (LOT paper section 3).

Wiring only (the steps are annotators.lot.steps; the task builders are pipelines.lot_tasks):
`ParseStories` (parse -> dedup (text, id)) and `NearDuplicateGroups` (the split side inputs)
-> `BuildStories` (prepare: clean, sentences, jieba words, outline; then every task's
outcome, in one pooled stage) -> `BuildClozeTAndPlotCom` (from annotations),
`BuildSenPos` (+ `ReviewSenPos`), `BuildOutGen` -> parquet tables, `<task>/<split>.jsonl` in
LongLM's original fields, annotation/review tasks, rejects, stats.json (Table 3 +
accounting) and CARD.md (annotators.lot.card).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import operator

import apache_beam as beam

from annotators.core import longlm
from annotators.core.compact import CompactMap
from annotators.core.near_dup import NearDupConfig
from annotators.harness import lot as harness_tasks
from annotators.lot import splits, steps, tallies
from annotators.lot.card import FIGURES as LOT_FIGURES
from annotators.lot.card import lot_card
from annotators.lot.clozet import ClozeTConfig, effective_annotations, moved_targets, retarget_annotation
from annotators.lot.config import RETIRED_FLAGS, LotRunConfig, config_record, proportions_problem
from annotators.lot.records import SenPosOutput
from annotators.lot.splits import SplitPlan
from annotators.lot.story import StoryConfig
from annotators.text import zh_tokens
from pipelines.engine import (
    ExportLinesFromTable,
    ExportTables,
    Gather,
    JobArgumentParser,
    JobReport,
    MatchInputs,
    ReadLines,
    Stage,
    TableSpec,
    WriteTables,
    add_config_flags,
    config_from_args,
    join,
    make_pipeline,
    once,
    parse_job_args,
    run_pipeline,
    staging_path,
)
from pipelines.engine.folds import (
    BlocksPerBundle,
    CombineFold,
    EachOf,
    FoldPerBundle,
    ListsPerBundle,
    MergeFold,
    unpack,
    unpacked,
)
from pipelines.engine.gather import after_all, as_compact, compact_map
from pipelines.engine.jsontext import json_text_of
from pipelines.engine.paths import delete_folder
from pipelines.engine.readers import read_lines_or_rows
from pipelines.engine.spill import SpillRecords, read_records
from pipelines.engine.stage import PooledFlatMap
from pipelines.engine.usage import main
from pipelines.lot_tasks import (
    BuildClozeTAndPlotCom,
    BuildOutGen,
    BuildSenPos,
    BuildStories,
    ReviewSenPos,
    each_in,
    human_tasks,
    kept_in,
)
from schemas.lot import SCHEMAS, TASKS, example_order

# LOT's near-duplicate groups: the stories job's defaults (Jaccard 0.8 of 5-character
# shingles) with its fast one-permutation sketch (about 60 us per story).
LOT_NEAR_DUP = NearDupConfig(sketch="oph")
STORY_EXTS = (".parquet", ".jsonl", ".json")  # story files: parquet rows or JSON lines
# kept stories per element from the second read on (ListsPerBundle): Beam's per-element work
# in the steps after it is paid once per this many stories
STORY_BLOCK = 64


def build_parser() -> argparse.ArgumentParser:
    ap = JobArgumentParser(
        prog="python -m pipelines.lot",
        description="Stories in, the four LOT datasets out (ClozeT, SenPos, PlotCom, OutGen; LOT paper "
        "section 3), with their rejects, stats.json (Table 3) and a dataset card.",
    )
    ap.add_argument("--stories", required=True, help="JSON lines / parquet file, glob or folder")
    ap.add_argument("--output", required=True)
    ap.add_argument("--annotations", help="ClozeT annotations (JSON lines)")
    ap.add_argument("--senpos-reviews", help="completed SenPos review tasks (JSON lines)")
    ap.add_argument(
        "--zh-backend",
        choices=zh_tokens.BACKENDS,
        default=None,
        help="jieba backend: auto (rjieba if it passes its self-check), jieba or rjieba; "
        "the same tokens either way (default: $STORYBENCH_ZH_BACKEND, else auto)",
    )
    add_config_flags(ap, LotRunConfig)
    add_config_flags(
        ap,
        StoryConfig,
        exclude=[f.name for f in dataclasses.fields(StoryConfig) if f.name not in ("normalize", "max_story_chars")],
    )
    for name in RETIRED_FLAGS:
        ap.add_argument(f"--{name.replace('_', '-')}", dest=f"retired_{name}", help=argparse.SUPPRESS)
    return ap


def parse_args(argv=None):
    """(job args, LotRunConfig, StoryConfig, PipelineOptions); bad split weights are a usage error."""
    parser = build_parser()
    args, options = parse_job_args(parser, argv)
    for name, instead in RETIRED_FLAGS.items():
        if getattr(args, f"retired_{name}", None) is not None:
            parser.error(
                f"--{name.replace('_', '-')} is gone: every task now shares one split per story "
                f"(no story, window or near-duplicate in two splits); use {instead}"
            )
    run_cfg = config_from_args(args, LotRunConfig)
    for flag, weights in run_cfg.split_weights().items():
        problem = proportions_problem(weights)
        if problem:
            parser.error(f"argument --{flag}: {problem}")
    return args, run_cfg, config_from_args(args, StoryConfig), options


class ParseStories(beam.PTransform):
    """(input_id, raw line | parquet row) -> (blocks of kept story records, near-duplicate
    inputs): parse, keep the earliest of equal texts then of equal ids (`BuildStories`
    prepares them; a block is a list of up to about STORY_BLOCK records).

    The dedup shuffles carry only small keys (StoryKey: text hash, input id, story id), never
    the stories, as one packed block per partition of the keys and bundle (`_dedup_parts`):
    the stories are read a second time (`reread`, else the same input again) and those that
    lost a dedup are left out there, so no shuffle or buffer ever holds the corpus.
    The near-duplicate groups come from {"bands": (LSH band, input id) of every parsed story,
    made where it is first parsed, in packed blocks per band partition and bundle
    (tallies.band_entries); "dropped": the CompactMap of the input ids a dedup dropped;
    "texts": the input read once more, unparsed (NearDuplicateGroups parses the candidates
    only)}: every story's task steps take those groups as a side input, so they must not
    come out of the same fused stage as the kept records (NearDuplicateGroups says why the
    texts are read apart). "text_groups" and "id_groups", the two dedups' grouped keys, tell
    MoveAnnotations which removed exact duplicates annotations name.
    """

    def __init__(self, report, config: StoryConfig, reread=None, near_dup: NearDupConfig | None = None):
        super().__init__()
        self._report, self._config, self._reread = report, config, reread
        self._near_dup = near_dup or LOT_NEAR_DUP

    def expand(self, raw):
        report, cfg, near = self._report, self._config, self._near_dup
        keyed = raw | report.stage("parse", steps.parse_step(cfg, near))
        parsed = keyed | "Keys" >> beam.Map(operator.attrgetter("key"))
        bands = keyed | "BandBlocks" >> beam.ParDo(BlocksPerBundle(tallies.band_entries, packed=True))
        by_text = _dedup_parts(parsed, "text")
        unique, text_dups = by_text | Stage(
            "dedup_text", steps.dedup_step("text", "exact_duplicate"), grouped=True, report=report, with_rejects=True
        )
        by_id = _dedup_parts(unique, "story_id")
        _, id_dups = by_id | Stage(
            "dedup_id", steps.dedup_step("story_id", "duplicate_id"), grouped=True, report=report, with_rejects=True
        )
        dropped_map = compact_map(
            (text_dups, id_dups)
            | "Dropped" >> beam.Flatten()
            | "DroppedIds" >> beam.Map(lambda r: (r["input_id"], True)),
            "Dropped",
        )
        dropped = as_compact(dropped_map)
        again = self._reread("Again") if self._reread else raw
        kept = again | "Reparse" >> beam.ParDo(ListsPerBundle(steps.kept_records, STORY_BLOCK), dropped)
        texts = self._reread("Duptexts") if self._reread else raw
        reads = {"bands": bands, "dropped": dropped_map, "texts": texts, "text_groups": by_text, "id_groups": by_id}
        return kept, reads


def _dedup_parts(keys, key_name: str):
    """StoryKeys -> (partition, its StoryKeys) for one dedup (steps.dedup_step): each bundle's
    keys of a partition cross the shuffle as one packed block, not a key at a time."""
    label = "Text" if key_name == "text" else "Id"
    return (
        keys
        | f"{label}Blocks" >> beam.ParDo(BlocksPerBundle(functools.partial(steps.dedup_entry, key_name), packed=True))
        | f"Group{label}" >> beam.GroupByKey()
        | f"Unpack{label}" >> beam.MapTuple(unpacked)
    )


def annotations_by_story(anns):
    """story_id -> [its parsed ClozeT annotations], a small side input (annotations are few);
    one moved from a removed exact duplicate is left out where the story has its own."""
    return beam.pvalue.AsDict(
        anns
        | "AnnById" >> beam.Map(lambda a: (a["story_id"], a))
        | "AnnGroups" >> beam.GroupByKey()
        | "AnnLists" >> beam.MapTuple(lambda k, v: (k, effective_annotations(list(v))))
    )


class MoveAnnotations(beam.PTransform):
    """Parsed ClozeT annotations -> the same, each that names a story the build removed as an
    exact duplicate naming the copy that keeps its text (clozet.retarget_annotation): a human
    annotation is not lost to the dedup. Only the ids annotations name are looked for in the
    dedups' grouped keys (ParseStories' "text_groups", "id_groups"), so what travels to the
    side inputs is as small as the annotations."""

    def __init__(self, reads: dict):
        super().__init__()
        self._reads = reads

    def expand(self, anns):
        reads = self._reads
        named = beam.pvalue.AsSingleton(
            anns
            | "NamedIds" >> beam.Map(lambda a: a["story_id"])
            | "NamedList" >> Gather()
            | "NamedSet" >> beam.Map(frozenset),
            default_value=frozenset(),
        )
        links = reads["text_groups"] | "DuplicateLinks" >> beam.FlatMap(steps.duplicate_links, named)
        held = reads["id_groups"] | "HeldIds" >> beam.FlatMap(steps.held_ids, named)
        moved = once(anns.pipeline, "MovedOnce") | "Moved" >> beam.Map(
            lambda _, links, held, dropped: moved_targets(links, held, dropped),
            beam.pvalue.AsList(links),
            beam.pvalue.AsList(held),
            as_compact(reads["dropped"]),
        )
        return anns | "Retarget" >> beam.Map(retarget_annotation, beam.pvalue.AsSingleton(moved))


class NearDuplicateGroups(beam.PTransform):
    """ParseStories' near-duplicate inputs -> story_id -> StoryGroup (AsSingleton CompactMap
    side input) of every group of two or more near-duplicate stories, with the stories job's
    near-duplicate code (annotators.core.near_dup): MinHash LSH band keys (its fast one-permutation sketch);
    stories sharing a band are candidates; candidate sets sharing a story are joined into
    components in one global step over input ids only; each candidate's text is parked in a
    spill file (`spill`, deleted once the groups are made: pipelines.engine.spill) and only
    its location goes to its component (a packed block of them per component and bundle),
    with the component's own candidate sets (`steps.components_and_sets`: its band groups,
    so no MinHash is made twice), where the texts are read back, stories sharing a band
    verified by exact shingle Jaccard (skipping pairs already joined) and clustered (on the
    pool's workers in a local run that has them). No shuffle or runner buffer holds the
    texts, however many stories are candidates.

    The inputs (`{"bands", "dropped", "texts"}`, ParseStories): every parsed story's (band,
    input id) pairs, made where the story was first parsed, as (band partition, pairs)
    blocks (each partition's candidate sets are found where its blocks meet); the CompactMap of the input ids
    a dedup dropped (left out of every candidate set); the input from a read of its own: the
    texts are matched with the component side input as they are read, which a PCollection
    that also fed that side input could only do after the runner had buffered all of it,
    and only the candidates among them are parsed (`steps.candidate_text`, with
    `story_config`'s normalisation)."""

    def __init__(self, config: NearDupConfig, spill: str, story_config: StoryConfig = StoryConfig()):
        super().__init__()
        self._config, self._spill, self._story_config = config, spill, story_config

    def expand(self, reads):
        config, dropped = self._config, as_compact(reads["dropped"])
        found = (
            reads["bands"]
            | "GroupBands" >> beam.GroupByKey()
            | "UnpackBands" >> beam.MapTuple(lambda part, blocks: (part, [unpack(b) for b in blocks]))
            | "CandidateSets" >> beam.FlatMap(steps.grouped_candidate_sets, dropped)
            | "AllSets" >> Gather()
            | "Components" >> beam.FlatMap(_components_and_sets).with_outputs(SETS, main="ids")
        )
        component_of = as_compact(compact_map(found.ids, "ComponentOf"))
        locations = (
            reads["texts"]
            | "CandidateTexts" >> beam.FlatMap(steps.candidate_text, component_of, dropped, self._story_config)
            | "SpillTexts" >> beam.ParDo(SpillRecords(self._spill, operator.itemgetter(0), pooled=False))
            | "LocationBlocks" >> beam.ParDo(BlocksPerBundle(_as_pair, packed=True))
        )
        groups = (
            (locations, found[SETS])
            | "WithSets" >> beam.Flatten()
            | "GroupComponents" >> beam.GroupByKey()
            | "ComponentTexts" >> beam.MapTuple(_component_members)
            | "Clusters"
            >> beam.ParDo(PooledFlatMap("clusters", functools.partial(steps.component_clusters, config=config)))
            | "ClusterList" >> Gather()
            | "Groups" >> beam.Map(splits.groups_from)
        )
        _ = after_all(groups, "DeleteNearDupSpill", delete_folder, self._spill)
        return groups


def _as_pair(pair: tuple) -> list[tuple]:
    """A (component id, spill location) pair as itself: its component's block of locations
    (BlocksPerBundle) then crosses the shuffle as one pickle, not a location at a time."""
    return [pair]


SETS = "sets"  # the Components step's second output: (component id, its ComponentSets)


def _components_and_sets(sets):
    """(input id, component id) pairs, and (component id, ComponentSets) as the SETS output."""
    ids, per_component = steps.components_and_sets(sets)
    yield from ids
    for pair in per_component:
        yield beam.pvalue.TaggedOutput(SETS, pair)


def _component_members(component: str, values) -> tuple[str, tuple[list, tuple | None]]:
    """(component id, (its (node, text) members read back from the spill files, in file
    order, its candidate sets)), from the packed blocks of their spill locations and the
    component's ComponentSets."""
    blocks, sets = [], None
    for value in values:
        if isinstance(value, steps.ComponentSets):
            sets = value.sets
        else:
            blocks.append(value)
    records = read_records(unpacked(component, blocks)[1])
    return component, ([records[loc][1] for loc in sorted(records)], sets)


def _official_table3(p, pattern: str, report):
    """The card's Table 3 official-data column, measured on `--official-outgen` lines."""
    return (
        _read_lines(p, "Official", pattern)
        | report.stage("official_outgen", steps.official_outgen_step)
        | "OfficialTable3" >> beam.CombineGlobally(CombineFold(tallies.OfficialTable3()))
    )


class Tallies(beam.PTransform):
    """The producers' blocks of TaskRows (OutGenOutputs for OutGen) -> {"summary": one tallies.Summary
    dict (LOT Table 3, title sources, outline agreement), "leaks": one leak report
    (annotators.lot.splits.group_leaks summed)}; either is empty when nothing was written
    (tallies.EMPTY_SUMMARY / EMPTY_LEAKS stand for them then). Both are tallied per bundle
    where the rows are made (only accumulators and packed blocks per partition of the leak
    keys are shuffled: tallies.leak_entry). The leak check groups the written examples'
    LeakTriples by near-duplicate group (a report per partition, `tallies.partition_leaks`),
    so it reads what was written rather than trusting how splits were drawn."""

    def __init__(self, groups):
        super().__init__()
        self._groups = groups

    def expand(self, producers):
        summary_fold, groups = tallies.Summary(), self._groups
        summaries = [
            rows | f"Tally{i}" >> beam.ParDo(FoldPerBundle(EachOf(summary_fold))) for i, rows in enumerate(producers)
        ]
        # each bundle's triples of a leak-key partition travel as one packed block (a pickle), not as
        # NamedTuples the runner's coder would pickle one by one in the job's process
        triples = [
            rows | f"LeakTriples{i}" >> beam.ParDo(BlocksPerBundle(tallies.leak_entries, packed=True), groups=groups)
            for i, rows in enumerate(producers)
        ]
        summary = (
            summaries
            | "Summaries" >> beam.Flatten()
            | "Summary" >> beam.CombineGlobally(MergeFold(summary_fold)).without_defaults()
        )
        leaks = (
            triples
            | "LeakTriples" >> beam.Flatten()
            | "LeakGroups" >> beam.GroupByKey()
            | "Unpack" >> beam.MapTuple(unpacked)
            | "PartitionLeaks" >> beam.Map(tallies.partition_leaks, groups=groups)
            | "SumLeaks" >> beam.CombineGlobally(CombineFold(tallies.LeakSum())).without_defaults()
        )
        return {"summary": summary, "leaks": leaks}


def _read_lines(p, label: str, pattern: str):
    return p | f"Match{label}" >> MatchInputs(pattern, (".jsonl", ".json")) | f"Read{label}" >> ReadLines()


def _senpos(p, args, run_cfg: LotRunConfig, report, stories):
    """(blocks of all SenPos outputs after reviews, the automatic val/test ones for review,
    one per element)."""
    senpos = stories | "BuildSenPos" >> BuildSenPos(report)
    evals = senpos | "SenPosEval" >> beam.FlatMap(functools.partial(kept_in, lambda o: o.example.split != "train"))
    if not (args.senpos_reviews or run_cfg.senpos_reviewed_only):
        return senpos, evals
    if args.senpos_reviews:
        reviews = _read_lines(p, "Reviews", args.senpos_reviews) | "ParseReviews" >> report.stage(
            "senpos_review_parse", steps.review_line_step
        )
    else:
        reviews = p | "NoReviews" >> beam.Create([])
    reviewed = {"examples": evals, "reviews": reviews} | "ReviewSenPos" >> ReviewSenPos(
        report, run_cfg.senpos_reviewed_only
    )
    train = senpos | "SenPosTrain" >> beam.Map(lambda block: tuple(o for o in block if o.example.split == "train"))
    reviewed_blocks = reviewed | "ReviewedBlocks" >> beam.Map(lambda o: (o,))
    return (train, reviewed_blocks) | "SenPosAll" >> beam.Flatten(), evals


def _write_tasks(producers: tuple, human: tuple[tuple, list], out: str, report: JobReport) -> None:
    """Each task's parquet table, its LongLM-format `<group>.jsonl` files and (ClozeT, SenPos,
    OutGen) the baselines' `<group>.source`/`.target` (annotators.core.longlm), from the
    PCollections of blocks of TaskRows (OutGenOutputs) that make them: the four tables are written
    together (rows become plain dicts where they are made), with the annotation and review
    tasks (`human`: lot_tasks.human_tasks) in the same write step, and exported in one step. A
    group is a split; SenPos val/test not yet reviewed go to `<split>.unreviewed.*`."""
    order = example_order  # the tables' and every export's order
    tables = {task: TableSpec(join(out, task), SCHEMAS[task], order) for task in TASKS}
    entries, groups = human
    written = (*producers, *entries) | "Tables" >> WriteTables(
        tables,
        [functools.partial(each_in, tallies.table_row)] * len(producers),
        spill=join(out, "_spill-tables"),
        jsonl=groups,
    )
    report.tally(written)
    # one pass over each written table gives every file: `<group>.jsonl` (a line per example,
    # newline-ended) and the baselines' `.source`/`.target` (newline-separated)
    exports = [
        ExportLinesFromTable(
            join(out, task),
            longlm.export_files(task),
            order,
            functools.partial(longlm.export_lines, task, encode=json_text_of),
            functools.partial(join, out, task),
            task,
            newline_at_end=operator.methodcaller("endswith", ".jsonl"),
        )
        for task in TASKS
    ]
    report.tally(written | "Exports" >> ExportTables(exports))


def run(argv=None):
    args, run_cfg, story_cfg, options = parse_args(argv)
    out, seed = staging_path(args.output), run_cfg.seed
    plan = SplitPlan(seed, run_cfg.splits, run_cfg.clozet_splits)
    inputs = [x for x in (args.stories, args.annotations, args.senpos_reviews, run_cfg.official_outgen) if x]
    p = make_pipeline(options)
    report = JobReport(
        out,
        "lot",
        config=config_record(run_cfg, story_cfg, LOT_NEAR_DUP),
        seed=seed,
        inputs=inputs,
        options=options,
        card=lot_card,
        figures=LOT_FIGURES,
        attachments=harness_tasks.attachments,
    )

    # a --stories folder gives every story file in it, parquet and JSON lines alike (its JSON
    # lines were skipped when it also held parquet)
    kept, records = read_lines_or_rows(p, args.stories, STORY_EXTS, mixed=True) | "ParseStories" >> ParseStories(
        report, story_cfg, reread=functools.partial(read_lines_or_rows, p, args.stories, STORY_EXTS, mixed=True)
    )
    report.declare("prepare")  # stats.json lists the stages in the order a story meets them
    if args.annotations:
        anns = (
            _read_lines(p, "Annotations", args.annotations)
            | "ParseAnnotations" >> report.stage("annotations", steps.annotation_step)
            | "MoveAnnotations" >> MoveAnnotations(records)
        )
        annotated = annotations_by_story(anns)
    else:  # nothing is annotated: ClozeT has no step, every split side input is empty
        anns = None
        annotated = beam.pvalue.AsDict(once(p, "NoAnnotations") | "NoAnnotated" >> beam.FlatMap(lambda _: []))
    groups = beam.pvalue.AsSingleton(
        records | "NearDuplicates" >> NearDuplicateGroups(LOT_NEAR_DUP, join(out, "_spill-near-dup"), story_cfg),
        default_value=CompactMap(),
    )
    split_inputs = {"groups": groups, "annotated": annotated}
    stories = kept | "BuildStories" >> BuildStories(report, plan, run_cfg, story_cfg, split_inputs, args.zh_backend)

    story_inputs = {"stories": stories, **({"annotations": anns} if anns is not None else {})}
    from_clozet, plotcom = story_inputs | "ClozeTAndPlotCom" >> BuildClozeTAndPlotCom(
        report, plan, ClozeTConfig(), story_cfg, run_cfg.plotcom_eval, split_inputs, args.zh_backend
    )
    senpos, senpos_evals = _senpos(p, args, run_cfg, report, stories)
    outgen = stories | "BuildOutGen" >> BuildOutGen(report)

    senpos_rows = senpos | "SenPosRows" >> beam.Map(lambda block: tuple(map(SenPosOutput.as_task_row, block)))
    if from_clozet is not None:  # ClozeT's few TaskRows come one per element
        from_clozet = from_clozet | "ClozeTBlocks" >> beam.Map(lambda row: (row,))
    # blocks of TaskRows; of OutGenOutputs for OutGen
    produced = tuple(pc for pc in (from_clozet, plotcom, senpos_rows, outgen) if pc is not None)
    _write_tasks(produced, human_tasks(stories, senpos_evals, out), out, report)
    report.record_jieba_backend(p, args.zh_backend)
    tallied = produced | "Tallies" >> Tallies(groups)
    report.extras(tallied["summary"], tallies.EMPTY_SUMMARY)
    report.extra("leaks", tallied["leaks"], tallies.EMPTY_LEAKS)
    if run_cfg.official_outgen:
        report.extra("table3_official", _official_table3(p, run_cfg.official_outgen, report))
    report.finish(p)
    return run_pipeline(p, commit_to=args.output)


if __name__ == "__main__":
    main(run, "lot")
