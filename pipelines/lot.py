"""`python -m pipelines.lot`: stories in, the four LOT datasets out (LOT paper section 3).

Wiring only: parse -> dedup (text, id) -> prepare (clean, sentences, jieba words) ->
{ClozeT + PlotCom val/test from annotations, PlotCom train, SenPos (+ reviews), OutGen}
-> parquet tables, `<task>/<split>.jsonl` in LongLM's original fields, annotation/review
tasks, rejects, stats.json (Table 3 + accounting) and CARD.md.
"""
from __future__ import annotations

import argparse
import json

import apache_beam as beam

from annotators import zh_tokens
from annotators.lot_clozet import (ClozeTConfig, annotation_task, build_clozet, build_plotcom_train,
                                   check_annotation, parse_annotation, plotcom_from_clozet)
from annotators.lot_outgen import agreement_counts, build_outgen
from annotators.lot_senpos import SenPosConfig, apply_review, build_senpos, parse_review, review_task
from annotators.lot_stats import Table3Accumulator, example_stats
from annotators.lot_story import (StoryConfig, normalize_text, parse_story_record, prepare_story, split_of,
                                  text_key)
from annotators.outcome import Drop
from pipelines.common import (JobReport, ReadLines, ReadParquetRows, Stage, WriteJsonlGroups, WriteTable,
                              expand_input, input_names, join, make_pipeline, parse_job_args,
                              run_pipeline)
from pipelines.lot_card import lot_card
from schemas.lot import SCHEMAS, SPLITS, TASKS, to_jsonl

# LOT Table 3 sizes (train, val, test): default split proportions per task.
PAPER_SPLITS = {"clozet": "644,294,294", "senpos": "20000,800,863", "outgen": "1456,242,729"}


def _one(result):
    return result if isinstance(result, Drop) else [result]


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
                         "normalise punctuation (annotators.zh_clean)")
    ap.add_argument("--outline-from", choices=("rake", "input"), default="rake")
    for task, default in PAPER_SPLITS.items():
        ap.add_argument(f"--{task}-splits", type=_proportions, default=_proportions(default),
                        help=f"train,val,test weights (default: LOT Table 3, {default})")
    return ap


def input_order(input_id: str) -> tuple:
    """Sort key for "file:line" ids: file name, then line number as a number."""
    name, _, line = input_id.rpartition(":")
    return (name, int(line)) if line.isdigit() else (input_id, -1)


def _dedup(key_name: str, reason: str):
    """Grouped stage fn: keep the earliest record in input order (file, line); reject the rest."""
    def fn(element):
        _, records = element
        ordered = sorted(records, key=lambda r: (input_order(r["input_id"]), r["story_id"], r["story"]))
        kept = ordered[0]
        return [(kept["input_id"], [kept])] + [
            (r["input_id"], Drop(reason, f"same {key_name} as {kept['input_id']}")) for r in ordered[1:]]
    return fn


def _clozet_fn(seed: int, splits, config: ClozeTConfig):
    def fn(element):
        story_id, group = element
        stories, anns = list(group["story"]), sorted(group["ann"], key=lambda a: input_order(a["input_id"]))
        if not stories:
            return [(a["input_id"], Drop("unknown_story", f"no story with id {story_id!r}")) for a in anns]
        story, split = stories[0], split_of(seed, story_id, splits)
        outcomes, seen, plotted = [], set(), set()
        for ann in anns:
            ex = build_clozet(story, ann, split, seed=seed, config=config)
            if not isinstance(ex, Drop) and ex.example_id in seen:
                ex = Drop("duplicate_annotation", f"same as an earlier annotation of {story_id}")
            if isinstance(ex, Drop):
                outcomes.append((ann["input_id"], ex))
                continue
            seen.add(ex.example_id)
            outs = [("clozet", ex.to_row(), example_stats(
                "clozet", story, removed=ex.right_index, extra_texts=(ex.plot0, ex.plot1)))]
            if split != "train" and ex.right_index not in plotted:
                plotted.add(ex.right_index)
                pc = plotcom_from_clozet(story, ex)
                outs.append(("plotcom", pc.to_row(), example_stats("plotcom", story, removed=pc.removed_index)))
            outcomes.append((ann["input_id"], outs))
        return outcomes
    return fn


def _plotcom_fn(seed: int, config: ClozeTConfig):
    def fn(element):
        _, group = element
        stories = list(group["story"])
        if not stories:
            return []
        story = stories[0]
        if any(check_annotation(story, a, config) is None for a in group["ann"]):
            return [(story.input_id, Drop("clozet_story", "held out: PlotCom train excludes ClozeT stories"))]
        ex = build_plotcom_train(story, seed=seed)
        return [(story.input_id, [("plotcom", ex.to_row(), example_stats("plotcom", story, removed=ex.removed_index))])]
    return fn


def _senpos_fn(seed: int, splits, config: SenPosConfig):
    def fn(story):
        built = build_senpos(story, split_of(seed, story.story_id, splits), seed=seed, config=config)
        if isinstance(built, Drop):
            return built
        return [(ex, example_stats("senpos", s, removed=r, candidates=ex.n_candidates)) for ex, s, r in built]
    return fn


def _review_fn(reviewed_only: bool):
    def fn(element):
        example_id, group = element
        examples, reviews = list(group["example"]), sorted(group["review"], key=lambda r: input_order(r[0]))
        if not examples:
            return [(rid, Drop("unknown_example", f"no SenPos val/test example {example_id}")) for rid, _ in reviews]
        (ex, stats), out = examples[0], []
        final: object = (ex, stats)
        if reviews:
            applied = apply_review(ex, reviews[0][1])
            final = applied if isinstance(applied, Drop) else (applied, dict(stats, candidates=applied.n_candidates))
            out = [(reviews[0][0], [])] + [(rid, Drop("duplicate_review", "an earlier review counts"))
                                          for rid, _ in reviews[1:]]
        elif reviewed_only:
            final = Drop("not_reviewed", "val/test example without a review (--senpos-reviewed-only)")
        return [(ex.example_id, final if isinstance(final, Drop) else [final])] + out
    return fn


def _outgen_fn(seed: int, splits, outline_from: str):
    def fn(story):
        ex = build_outgen(story, split_of(seed, story.story_id, splits), seed=seed, outline_from=outline_from)
        if isinstance(ex, Drop):
            return ex
        stats = example_stats("outgen", story, title=ex.title, phrases=ex.outline)
        return [("outgen", ex.to_row(), stats, agreement_counts(ex.outline, story.outline))]
    return fn


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


def _table3(results) -> dict:
    table: dict = {task: {} for task in TASKS}
    for (task, split), acc in sorted(results, key=lambda kv: kv[0]):
        table[task][split] = acc.result(task)
    return table


def _agreement(triples) -> dict:
    tp, n_pred, n_gold = (sum(t[i] for t in triples) for i in range(3))
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gold if n_gold else 0.0
    return {"stories_with_input_outline": sum(1 for t in triples if t[2]), "shared_phrases": tp,
            "predicted_phrases": n_pred, "input_phrases": n_gold, "precision": round(p, 4),
            "recall": round(r, 4), "f1": round(2 * p * r / (p + r), 4) if p + r else 0.0}


def _read_records(p, label: str, pattern: str, exts):
    paths = expand_input(pattern, exts)
    names = input_names(paths, pattern)
    jsonl = [x for x in paths if not x.endswith(".parquet")]
    parquet = [x for x in paths if x.endswith(".parquet")]
    parts = []
    if jsonl:
        parts.append(p | f"Read{label}Lines" >> ReadLines(jsonl, names))
    if parquet:
        parts.append(p | f"Read{label}Parquet" >> ReadParquetRows(parquet, names))
    return parts | f"All{label}" >> beam.Flatten(), paths


def run(argv=None):
    args, options = parse_job_args(build_parser(), argv)
    seed, out = args.seed, args.output.rstrip("/")
    story_cfg, clozet_cfg, senpos_cfg = StoryConfig(normalize=args.normalize), ClozeTConfig(), SenPosConfig()
    splits = {t: getattr(args, f"{t}_splits") for t in PAPER_SPLITS}
    config = {"story": vars(story_cfg), "clozet": vars(clozet_cfg), "senpos": vars(senpos_cfg),
              "splits": {t: list(v) for t, v in splits.items()}, "outline_from": args.outline_from,
              "senpos_reviewed_only": args.senpos_reviewed_only}
    p = make_pipeline(options)
    raw, inputs = _read_records(p, "Stories", args.stories, (".parquet", ".jsonl", ".json"))
    report = JobReport(out, "lot", config=config, seed=seed, inputs=[args.stories] + [
        x for x in (args.annotations, args.senpos_reviews) if x], options=options, card=lot_card)

    parsed = report.add("parse", raw | Stage("parse", lambda e: _one(parse_story_record(*e))))
    # Dedup before tokenising: the shuffles carry small dicts and jieba runs once per story.
    by_text = parsed | "KeyText" >> beam.Map(
        lambda r: (text_key(normalize_text(r["story"], story_cfg.normalize)), r)) | "GroupText" >> beam.GroupByKey()
    unique = report.add("dedup_text", by_text | Stage("dedup_text", _dedup("text", "duplicate_text"), grouped=True))
    by_id = unique | "KeyId" >> beam.Map(lambda r: (r["story_id"], r)) | "GroupId" >> beam.GroupByKey()
    distinct = report.add("dedup_id", by_id | Stage("dedup_id", _dedup("story_id", "duplicate_story_id"), grouped=True))
    stories = report.add("prepare", distinct | Stage(
        "prepare", lambda r: _one(prepare_story(r, story_cfg)), input_id=lambda r: r["input_id"],
        setup=zh_tokens.load))

    if args.annotations:
        ann_paths = expand_input(args.annotations, (".jsonl", ".json"))
        ann_raw = p | "ReadAnnotations" >> ReadLines(ann_paths, input_names(ann_paths, args.annotations))
        anns = report.add("annotations", ann_raw | Stage("annotations", lambda e: _one(parse_annotation(*e))))
    else:
        anns = p | "NoAnnotations" >> beam.Create([])
    joined = ({"story": stories | "KeyStory" >> beam.Map(lambda s: (s.story_id, s)),
               "ann": anns | "KeyAnn" >> beam.Map(lambda a: (a["story_id"], a))} | "JoinAnn" >> beam.CoGroupByKey())
    clozet = report.add("clozet", joined | Stage("clozet", _clozet_fn(seed, splits["clozet"], clozet_cfg),
                                                 grouped=True, setup=zh_tokens.load))
    plotcom = report.add("plotcom", joined | Stage("plotcom", _plotcom_fn(seed, clozet_cfg),
                                                   grouped=True, setup=zh_tokens.load))
    senpos = report.add("senpos", stories | Stage("senpos", _senpos_fn(seed, splits["senpos"], senpos_cfg),
                                                  input_id=lambda s: s.input_id, setup=zh_tokens.load))
    senpos_eval = senpos | "SenPosEval" >> beam.Filter(lambda t: t[0].split != "train")
    if args.senpos_reviews or args.senpos_reviewed_only:
        if args.senpos_reviews:
            rev_paths = expand_input(args.senpos_reviews, (".jsonl", ".json"))
            rev_raw = p | "ReadReviews" >> ReadLines(rev_paths, input_names(rev_paths, args.senpos_reviews))
            reviews = report.add("senpos_review_parse", rev_raw | Stage(
                "senpos_review_parse", lambda e: _one(_parse_review_line(*e))))
        else:
            reviews = p | "NoReviews" >> beam.Create([])
        grouped = ({"example": senpos_eval | "KeyEx" >> beam.Map(lambda t: (t[0].example_id, t)),
                    "review": reviews | "KeyRev" >> beam.Map(lambda r: (r[1]["example_id"], r))}
                   | "JoinReviews" >> beam.CoGroupByKey())
        reviewed = report.add("senpos_review", grouped | Stage("senpos_review", _review_fn(args.senpos_reviewed_only), grouped=True))
        senpos_final = (senpos | "SenPosTrain" >> beam.Filter(lambda t: t[0].split == "train"), reviewed) | "SenPosAll" >> beam.Flatten()
    else:
        senpos_final = senpos
    senpos_rows = senpos_final | "SenPosRows" >> beam.Map(lambda t: ("senpos", t[0].to_row(), t[1]))
    outgen = report.add("outgen", stories | Stage("outgen", _outgen_fn(seed, splits["outgen"], args.outline_from),
                                                  input_id=lambda s: s.input_id, setup=zh_tokens.load))

    rows = (clozet, plotcom, senpos_rows, outgen | "OutGenRows" >> beam.Map(lambda t: t[:3])) | "AllRows" >> beam.Flatten()
    for task in TASKS:
        task_rows = rows | f"Rows[{task}]" >> beam.Filter(lambda t, task=task: t[0] == task) | f"Row[{task}]" >> beam.Map(lambda t: t[1])
        report.tally(task_rows | f"Table[{task}]" >> WriteTable(join(out, task), SCHEMAS[task],
                                                                lambda r: (r["split"], r["example_id"]), name=task))
        report.tally(task_rows | f"Jsonl[{task}]" >> beam.Map(lambda r, task=task: (r["split"], r["example_id"], to_jsonl(task, r)))
                     | f"WriteJsonl[{task}]" >> WriteJsonlGroups(lambda s, task=task: join(out, task, f"{s}.jsonl"), SPLITS, task))
    table3 = (rows | "StatKey" >> beam.Map(lambda t: ((t[0], t[1]["split"]), t[2]))
              | "Table3" >> beam.CombinePerKey(_Table3()) | "Table3List" >> beam.combiners.ToList()
              | "Table3Dict" >> beam.Map(_table3))
    report.extra("table3", table3)
    report.extra("outline_agreement", outgen | "Agree" >> beam.Map(lambda t: t[3])
                 | "AgreeList" >> beam.combiners.ToList() | "AgreeSum" >> beam.Map(_agreement))

    report.tally(stories | "Tasks" >> beam.Map(lambda s: ("clozet", s.story_id, annotation_task(s)))
                 | "WriteTasks" >> WriteJsonlGroups(lambda g: join(out, "annotation_tasks", f"{g}.jsonl"), ["clozet"], "annotation_tasks"))
    report.tally(senpos | "ReviewTasks" >> beam.Filter(lambda t: t[0].split != "train")
                 | "ReviewRows" >> beam.Map(lambda t: (t[0].split, t[0].example_id, review_task(t[0])))
                 | "WriteReview" >> WriteJsonlGroups(lambda s: join(out, "review", f"senpos_{s}.jsonl"), ["val", "test"], "review"))
    report.finish(p)
    return run_pipeline(p)


def _parse_review_line(input_id: str, raw: bytes):
    try:
        obj = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return Drop("malformed_json", str(exc)[:200])
    review = parse_review(obj)
    return review if isinstance(review, Drop) else (input_id, review)


if __name__ == "__main__":
    run()
