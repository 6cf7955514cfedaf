"""`python -m pipelines.lot`: stories in, the four LOT datasets out (LOT paper section 3).

Wiring only (the steps are annotators.lot.steps): parse -> dedup (text, id) -> prepare
(clean, sentences, jieba words) -> {ClozeT + PlotCom val/test from annotations, PlotCom train,
SenPos (+ reviews), OutGen} -> parquet tables, `<task>/<split>.jsonl` in LongLM's original
fields, annotation/review tasks, rejects, stats.json (Table 3 + accounting) and CARD.md.
"""
from __future__ import annotations

import argparse

import apache_beam as beam

from annotators.text import zh_tokens
from annotators.lot import steps
from annotators.lot.clozet import ClozeTConfig, annotation_task, parse_annotation
from annotators.lot.senpos import SenPosConfig, review_task
from annotators.lot.stats import Table3Accumulator
from annotators.lot.story import StoryConfig, normalize_text, parse_story_record, prepare_story, text_key
from pipelines.engine import (JobReport, ReadLines, ReadParquetRows, Stage, WriteJsonlGroups, WriteTable,
                              expand_input, input_names, join, make_pipeline, parse_job_args, run_pipeline)
from annotators.lot.card import lot_card
from schemas.lot import SCHEMAS, SPLITS, TASKS, to_jsonl

# LOT Table 3 sizes (train, val, test): default split proportions per task.
PAPER_SPLITS = {"clozet": "644,294,294", "senpos": "20000,800,863", "outgen": "1456,242,729"}


def _proportions(text: str) -> tuple[float, float, float]:
    parts = [float(x) for x in text.split(",")]
    if len(parts) != 3 or min(parts) < 0 or sum(parts) <= 0:
        raise argparse.ArgumentTypeError(f"expected three non-negative weights, got {text!r}")
    return tuple(parts)  # type: ignore[return-value]


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m pipelines.lot", description=__doc__)
    ap.add_argument("--stories", required=True, help="JSON lines / parquet file, glob or folder")
    ap.add_argument("--output", required=True)
    ap.add_argument("--annotations", help="ClozeT annotations (JSON lines)")
    ap.add_argument("--senpos-reviews", help="completed SenPos review tasks (JSON lines)")
    ap.add_argument("--senpos-reviewed-only", action="store_true",
                    help="drop SenPos val/test examples that have no review")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--normalize", choices=("whitespace", "full"), default="whitespace",
                    help="whitespace: only delete spaces (text kept verbatim); full: also "
                         "normalise punctuation (annotators.text.zh_clean)")
    ap.add_argument("--outline-from", choices=("rake", "input"), default="rake")
    for task, default in PAPER_SPLITS.items():
        ap.add_argument(f"--{task}-splits", type=_proportions, default=_proportions(default),
                        help=f"train,val,test weights (default: LOT Table 3, {default})")
    return ap


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


def _read_lines(p, label: str, pattern: str):
    paths = expand_input(pattern, (".jsonl", ".json"))
    return p | f"Read{label}" >> ReadLines(paths, input_names(paths, pattern))


def _read_stories(p, pattern: str):
    """(input_id, raw line bytes | parquet row dict) for every input story record."""
    paths = expand_input(pattern, (".parquet", ".jsonl", ".json"))
    names = input_names(paths, pattern)
    parquet = [x for x in paths if x.endswith(".parquet")]
    lines = [x for x in paths if not x.endswith(".parquet")]
    parts = ([p | "ReadStoryLines" >> ReadLines(lines, names)] if lines else []) + (
        [p | "ReadStoryParquet" >> ReadParquetRows(parquet, names)] if parquet else [])
    return parts | "AllStories" >> beam.Flatten()


def _stories(p, args, report: JobReport, cfg: StoryConfig):
    """Parsed, deduplicated (before tokenising, so shuffles carry small dicts) and prepared."""
    parsed = report.add("parse", _read_stories(p, args.stories)
                        | Stage("parse", lambda e: steps.one(parse_story_record(*e))))
    by_text = (parsed | "KeyText" >> beam.Map(lambda r: (text_key(normalize_text(r["story"], cfg.normalize)), r))
               | "GroupText" >> beam.GroupByKey())
    unique = report.add("dedup_text", by_text | Stage(
        "dedup_text", steps.dedup_step("text", "duplicate_text"), grouped=True))
    by_id = unique | "KeyId" >> beam.Map(lambda r: (r["story_id"], r)) | "GroupId" >> beam.GroupByKey()
    distinct = report.add("dedup_id", by_id | Stage(
        "dedup_id", steps.dedup_step("story_id", "duplicate_story_id"), grouped=True))
    return report.add("prepare", distinct | Stage(
        "prepare", lambda r: steps.one(prepare_story(r, cfg)), input_id=lambda r: r["input_id"],
        setup=zh_tokens.load))


def _clozet_and_plotcom(p, args, report, stories, splits, cfg: ClozeTConfig):
    if args.annotations:
        anns = report.add("annotations", _read_lines(p, "Annotations", args.annotations)
                          | Stage("annotations", lambda e: steps.one(parse_annotation(*e))))
    else:
        anns = p | "NoAnnotations" >> beam.Create([])
    joined = ({"story": stories | "KeyStory" >> beam.Map(lambda s: (s.story_id, s)),
               "ann": anns | "KeyAnn" >> beam.Map(lambda a: (a["story_id"], a))} | "JoinAnn" >> beam.CoGroupByKey())
    clozet = report.add("clozet", joined | Stage(
        "clozet", steps.clozet_step(args.seed, splits["clozet"], cfg), grouped=True, setup=zh_tokens.load))
    plotcom = report.add("plotcom", joined | Stage(
        "plotcom", steps.plotcom_step(args.seed, cfg), grouped=True, setup=zh_tokens.load))
    return clozet, plotcom


def _senpos(p, args, report, stories, splits, cfg: SenPosConfig):
    """(all SenPos (example, stats) after reviews, the automatic val/test ones for review)."""
    senpos = report.add("senpos", stories | Stage(
        "senpos", steps.senpos_step(args.seed, splits["senpos"], cfg), input_id=lambda s: s.input_id,
        setup=zh_tokens.load))
    evals = senpos | "SenPosEval" >> beam.Filter(lambda t: t[0].split != "train")
    if not (args.senpos_reviews or args.senpos_reviewed_only):
        return senpos, evals
    if args.senpos_reviews:
        reviews = report.add("senpos_review_parse", _read_lines(p, "Reviews", args.senpos_reviews)
                             | Stage("senpos_review_parse", lambda e: steps.one(steps.parse_review_line(*e))))
    else:
        reviews = p | "NoReviews" >> beam.Create([])
    grouped = ({"example": evals | "KeyEx" >> beam.Map(lambda t: (t[0].example_id, t)),
                "review": reviews | "KeyRev" >> beam.Map(lambda r: (r[1]["example_id"], r))}
               | "JoinReviews" >> beam.CoGroupByKey())
    reviewed = report.add("senpos_review", grouped | Stage(
        "senpos_review", steps.review_step(args.senpos_reviewed_only), grouped=True))
    train = senpos | "SenPosTrain" >> beam.Filter(lambda t: t[0].split == "train")
    return (train, reviewed) | "SenPosAll" >> beam.Flatten(), evals


def _write_tasks(rows, out: str, report: JobReport) -> None:
    """Each task's parquet table and its LongLM-format `<split>.jsonl` files."""
    for task in TASKS:
        task_rows = (rows | f"Rows[{task}]" >> beam.Filter(lambda t, task=task: t[0] == task)
                     | f"Row[{task}]" >> beam.Map(lambda t: t[1]))
        report.tally(task_rows | f"Table[{task}]" >> WriteTable(
            join(out, task), SCHEMAS[task], lambda r: (r["split"], r["example_id"]), name=task))
        report.tally(task_rows
                     | f"Jsonl[{task}]" >> beam.Map(lambda r, task=task: (r["split"], r["example_id"], to_jsonl(task, r)))
                     | f"WriteJsonl[{task}]" >> WriteJsonlGroups(
                         lambda s, task=task: join(out, task, f"{s}.jsonl"), SPLITS, task))


def _write_human_tasks(stories, senpos_evals, out: str, report: JobReport) -> None:
    """ClozeT annotation tasks (every story) and SenPos review tasks (val/test)."""
    report.tally(stories | "Tasks" >> beam.Map(lambda s: ("clozet", s.story_id, annotation_task(s)))
                 | "WriteTasks" >> WriteJsonlGroups(lambda g: join(out, "annotation_tasks", f"{g}.jsonl"),
                                                    ["clozet"], "annotation_tasks"))
    report.tally(senpos_evals | "ReviewRows" >> beam.Map(lambda t: (t[0].split, t[0].example_id, review_task(t[0])))
                 | "WriteReview" >> WriteJsonlGroups(lambda s: join(out, "review", f"senpos_{s}.jsonl"),
                                                     ["val", "test"], "review"))


def run(argv=None):
    args, options = parse_job_args(build_parser(), argv)
    out = args.output.rstrip("/")
    story_cfg, clozet_cfg, senpos_cfg = StoryConfig(normalize=args.normalize), ClozeTConfig(), SenPosConfig()
    splits = {t: getattr(args, f"{t}_splits") for t in PAPER_SPLITS}
    config = {"story": vars(story_cfg), "clozet": vars(clozet_cfg), "senpos": vars(senpos_cfg),
              "splits": {t: list(v) for t, v in splits.items()}, "outline_from": args.outline_from,
              "senpos_reviewed_only": args.senpos_reviewed_only}
    inputs = [x for x in (args.stories, args.annotations, args.senpos_reviews) if x]
    p = make_pipeline(options)
    report = JobReport(out, "lot", config=config, seed=args.seed, inputs=inputs, options=options, card=lot_card)

    stories = _stories(p, args, report, story_cfg)
    clozet, plotcom = _clozet_and_plotcom(p, args, report, stories, splits, clozet_cfg)
    senpos, senpos_evals = _senpos(p, args, report, stories, splits, senpos_cfg)
    outgen = report.add("outgen", stories | Stage(
        "outgen", steps.outgen_step(args.seed, splits["outgen"], args.outline_from),
        input_id=lambda s: s.input_id, setup=zh_tokens.load))

    rows = (clozet, plotcom, senpos | "SenPosRows" >> beam.Map(lambda t: ("senpos", t[0].to_row(), t[1])),
            outgen | "OutGenRows" >> beam.Map(lambda t: t[:3])) | "AllRows" >> beam.Flatten()
    _write_tasks(rows, out, report)
    _write_human_tasks(stories, senpos_evals, out, report)
    report.extra("table3", rows | "StatKey" >> beam.Map(lambda t: ((t[0], t[1]["split"]), t[2]))
                 | "Table3" >> beam.CombinePerKey(_Table3()) | "Table3List" >> beam.combiners.ToList()
                 | "Table3Dict" >> beam.Map(steps.table3, TASKS))
    report.extra("outline_agreement", outgen | "Agree" >> beam.Map(lambda t: t[3])
                 | "AgreeList" >> beam.combiners.ToList() | "AgreeSum" >> beam.Map(steps.agreement))
    report.finish(p)
    return run_pipeline(p)


if __name__ == "__main__":
    run()
