"""Score predictions against a benchmark's gold examples (issue 16): wiring only.

    python -m pipelines.evaluate --task TASK --predictions FILE --gold FILE_OR_TABLE --output DIR
        [--compat original|clean] [--align line|id] [--split test] [--source FILE]
        [--rouge-wordnet empty|rebuilt [--rouge-wordnet-exc PATH]]

TASK: clozet, senpos (accuracy), plotcom (bleu-1..4, distinct-1..4), outgen (those plus
coverage and order), chapterbreak (accuracy per source and prefix length from candidate
scores), or a GLGE task (cnndm, gigaword, xsum, msnews, squadqg, msqg, coqa, personachat;
predictions and gold are plain text, one example per line, as `{task}.{version}.test` and
`test.tgt`). Predictions: JSON lines in the gold's format with the model's answer in `label`,
`plot`, `story` or `scores`. Gold: a `.jsonl` file (the released LOT format, or the LOT
job's `<task>/<split>.jsonl`) or a storybench table folder (`lot/<task>`, rows of --split;
ChapterBreak's examples table). Output: `metrics/`, `scores/` (per example), `rejects/`,
`stats.json`, `CARD.md`, written through a staging folder and committed when the run ends.
A gold example without a prediction, a prediction without a gold example, a record that
cannot be read or an example that cannot be scored is a rejects row, and the job then exits
with status 2 naming them (unless --allow-partial): its metrics do not cover the gold.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import operator
import os
import sys
from collections.abc import Sequence

import apache_beam as beam

from annotators.evaluate import steps, wordnet_exc
from annotators.evaluate.card import evaluate_card
from annotators.evaluate.config import EvalConfig
from annotators.evaluate.glge_metrics import GLGE_TASKS, QG_TASKS
from annotators.text import zh_tokens
from pipelines.engine import (
    JobArgumentParser,
    JobReport,
    MatchInputs,
    ReadLines,
    ReadParquetRows,
    WriteTable,
    add_config_flags,
    config_from_args,
    join,
    make_pipeline,
    parse_job_args,
    run_pipeline,
    staging_path,
)
from pipelines.engine.options import is_dry_run
from pipelines.engine.usage import main
from schemas.evaluate import METRICS_SCHEMA, SCORES_SCHEMA

GOLD_LINE_EXTS = (".jsonl", ".json")


def build_parser() -> argparse.ArgumentParser:
    ap = JobArgumentParser(
        prog="python -m pipelines.evaluate",
        description="Score predictions against a LOT, ChapterBreak or GLGE task's gold examples: the "
        "official scripts' numbers (--compat original) or their corrected variants (clean).",
    )
    ap.add_argument("--predictions", required=True, help="predictions: a .jsonl file (or glob)")
    ap.add_argument("--gold", required=True, help="gold: a .jsonl file, or a table folder / parquet glob")
    ap.add_argument("--output", required=True)
    ap.add_argument(
        "--allow-partial",
        action="store_true",
        help="exit 0 even when gold examples lack predictions, predictions match no gold, or records "
        "could not be read or scored",
    )
    task = {f.name: f for f in dataclasses.fields(EvalConfig)}["task"]
    # required (once `outgen` by default: a GLGE text file was then read as JSON lines)
    ap.add_argument("--task", required=True, choices=task.metadata["choices"], help=task.metadata["help"])
    add_config_flags(ap, EvalConfig, exclude=("task",))
    return ap


def gold_is_lines(gold: str, task: str = "") -> bool:
    """A gold pattern naming JSON-lines files (else parquet table files); decided from the
    name alone, so building the graph lists no file. GLGE gold is always a text file."""
    return task in GLGE_TASKS or gold.rstrip("/").endswith(GOLD_LINE_EXTS)


# ----------------------------------------------------------------------------- transforms
class ParsePredictions(beam.PTransform):
    """(input_id, line bytes) -> (key, Prediction) (stage `parse_predictions`)."""

    def __init__(self, report, config: EvalConfig):
        super().__init__()
        self._report, self._config = report, config

    def expand(self, lines):
        parsed = lines | self._report.stage(
            "parse_predictions", functools.partial(steps.parse_prediction, config=self._config)
        )
        return parsed | "KeyPredictions" >> beam.Map(lambda p: (p.key, p))


class ParseGold(beam.PTransform):
    """Gold lines or table rows -> (key, Gold) (stage `parse_gold`); table rows aligned by
    line are numbered 1..n in example_id order."""

    def __init__(self, report, config: EvalConfig, lines: bool):
        super().__init__()
        self._report, self._config, self._lines = report, config, lines

    def expand(self, records):
        fn = steps.parse_gold_line if self._lines else steps.parse_gold_row
        golds = records | self._report.stage("parse_gold", functools.partial(fn, config=self._config))
        if not self._lines and self._config.effective_align() == "line":
            golds = (
                golds | "GoldList" >> beam.combiners.ToList() | "NumberGold" >> beam.FlatMap(steps.number_by_position)
            )
        return golds | "KeyGold" >> beam.Map(lambda g: (g.key, g))


class Align(beam.PTransform):
    """{"gold": (key, Gold), "pred": (key, Prediction)} -> Pair (stage `align`)."""

    def __init__(self, report):
        super().__init__()
        self._report = report

    def expand(self, keyed):
        return keyed | "Join" >> beam.CoGroupByKey() | self._report.stage("align", steps.align, grouped=True)


class Score(beam.PTransform):
    """Pair -> ExampleScore (stage `score`); `rouge_exceptions`: ROUGE-1.5.5's WordNet
    exception db, read when the job starts and shipped with the step (None: the empty one)."""

    def __init__(self, report, config: EvalConfig, rouge_exceptions=None):
        super().__init__()
        self._report, self._config, self._exceptions = report, config, rouge_exceptions

    def expand(self, pairs):
        setup = zh_tokens.load if self._config.task in ("plotcom", "outgen") else None
        fn = functools.partial(steps.score_pair, config=self._config, rouge_exceptions=self._exceptions)
        return pairs | self._report.stage("score", fn, input_id=operator.attrgetter("prediction_input_id"), setup=setup)


class Metrics(beam.PTransform):
    """ExampleScores -> the metrics table's rows (one global combine)."""

    def __init__(self, config: EvalConfig):
        super().__init__()
        self._config = config

    def expand(self, scores):
        return (
            scores
            | "ScoreList" >> beam.combiners.ToList()
            | "MetricRows" >> beam.FlatMap(steps.metric_rows, self._config)
        )


def build_graph(
    p: beam.Pipeline,
    report: JobReport,
    args: argparse.Namespace,
    config: EvalConfig,
    out: str,
    rouge_db: wordnet_exc.ExceptionDb | None = None,
) -> None:
    lines = gold_is_lines(args.gold, config.task)
    glge = config.task in GLGE_TASKS
    preds = (
        p
        | "MatchPredictions" >> MatchInputs(args.predictions, () if glge else (".jsonl", ".json"))
        | "ReadPredictions" >> ReadLines()
        | "ParsePredictions" >> ParsePredictions(report, config)
    )
    gold_exts = (".tgt",) if glge else GOLD_LINE_EXTS if lines else (".parquet",)
    gold_sources = p | "MatchGold" >> MatchInputs(args.gold, gold_exts)
    gold_records = gold_sources | "ReadGold" >> (ReadLines() if lines else ReadParquetRows())
    golds = gold_records | "ParseGold" >> ParseGold(report, config, lines)
    keyed = {"gold": golds, "pred": preds}
    if config.source:  # GLGE QG: {split}.src, line N beside gold line N
        keyed["src"] = (
            p
            | "MatchSource" >> MatchInputs(config.source, ())
            | "ReadSource" >> ReadLines()
            | "ParseSource" >> report.stage("parse_source", functools.partial(steps.parse_gold_line, config=config))
            | "KeySource" >> beam.Map(lambda g: (g.key, g))
        )
    pairs = keyed | "Align" >> Align(report)
    exceptions = dict(rouge_db.mapping) if rouge_db and rouge_db.mapping else None
    scores = pairs | "Score" >> Score(report, config, exceptions)
    report.tally(
        scores
        | "ScoreRows" >> beam.FlatMap(operator.methodcaller("rows"))
        | "WriteScores"
        >> WriteTable(join(out, "scores"), SCORES_SCHEMA, lambda r: (r["key"], r["metric"]), name="scores")
    )
    metrics = scores | "Metrics" >> Metrics(config)
    metric_order = operator.itemgetter("group", "metric")
    report.tally(
        metrics | "WriteMetrics" >> WriteTable(join(out, "metrics"), METRICS_SCHEMA, metric_order, name="metrics")
    )
    report.extra(
        "metrics",
        metrics | "MetricList" >> beam.combiners.ToList() | "SortMetrics" >> beam.Map(sorted, key=metric_order),
    )


def _nltk_version() -> str:
    from importlib.metadata import version

    return version("nltk")


def _meteor_info() -> dict:
    from annotators.evaluate import meteor

    return {
        "jar": str(meteor.meteor_jar()),
        "java": meteor.java(),
        "command": "java -jar -Xmx2G meteor-1.5.jar - - -stdio -l en -norm",
    }


# rejects that leave the metrics whole: the official scorer itself skips such an example, and a
# blank line holds no record (by line, the gold example at its number has no prediction: the
# align stage's missing_prediction counts it)
NOT_A_GAP = ("skipped_by_official_scorer", "blank_line")


def unmatched(output: str) -> dict[str, int]:
    """What the metrics leave out, from stats.json: gold examples without predictions and
    predictions without gold (the align stage), records that could not be read (a prediction
    or gold line, a source line) and examples that could not be scored (`stage/reason`:
    count; none when every gold example was scored)."""
    from apache_beam.io.filesystems import FileSystems

    with FileSystems.open(join(output, "stats.json")) as f:
        stats = json.loads(f.read().decode("utf-8"))
    stages = stats["stages"]
    reasons = stages.get("align", {}).get("rejected_by_reason", {})
    problems = {
        k: reasons[k]
        for k in ("missing_prediction", "unexpected_prediction", "duplicate_id", "missing_source", "unexpected_source")
        if reasons.get(k)
    }
    for stage, counts in stages.items():
        if stage == "align":
            continue
        for reason, n in sorted(counts.get("rejected_by_reason", {}).items()):
            if n and reason not in NOT_A_GAP:
                problems[f"{stage}/{reason}"] = n
    if not stages.get("score", {}).get("written") and "score" in stages:
        problems["scored"] = 0  # nothing scored: every metric is NaN
    return problems


def run(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, options = parse_job_args(parser, argv)
    config = config_from_args(args, EvalConfig)
    if config.problem():
        parser.error(config.problem())
    if config.task in GLGE_TASKS and os.path.isdir(args.gold):
        # a GLGE org_data folder holds every split's .tgt: they were all read, the first of
        # colliding line keys won, and perfect predictions scored 56 against the wrong lines
        split_file = os.path.join(args.gold, f"{config.split}.tgt")
        if not os.path.isfile(split_file):
            parser.error(f"--gold {args.gold}: a folder with no {config.split}.tgt (give the gold .tgt file)")
        args.gold = split_file
    out = staging_path(args.output)
    rouge_db = wordnet_exc.load(config.rouge_wordnet, config.rouge_wordnet_exc) if config.uses_rouge155() else None
    stats_config = {
        **dataclasses.asdict(config),
        "align": config.effective_align(),
        "gold_format": ("text lines" if config.task in GLGE_TASKS else "jsonl")
        if gold_is_lines(args.gold, config.task)
        else "table",
        "jieba": zh_tokens.backend_info() if config.task in ("plotcom", "outgen") else None,
        "nltk": _nltk_version() if config.task == "personachat" else None,
        "metric_libraries": config.metric_libraries(),
        "meteor": _meteor_info() if config.task in QG_TASKS and config.compat == "original" else None,
        "rouge_wordnet_db": rouge_db.describe() if rouge_db else None,
    }
    report = JobReport(
        out,
        "evaluate",
        config=stats_config,
        seed=None,
        inputs=[args.predictions, args.gold] + ([config.source] if config.source else []),
        options=options,
        card=evaluate_card,
    )
    p = make_pipeline(options)
    build_graph(p, report, args, config, out, rouge_db)
    report.finish(p)
    run_pipeline(p, commit_to=args.output)
    if is_dry_run(options):
        return 0
    problems = unmatched(args.output)
    if problems and not args.allow_partial:
        what = (
            "predictions and gold do not match one to one"
            if any("/" not in k and k != "scored" for k in problems)
            else "some records could not be read or scored"
        )
        print(
            f"evaluate: {what} ({problems}); the metrics do not cover every gold example. "
            f"See {join(args.output, 'rejects')} (or pass --allow-partial).",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    main(run, "evaluate")
