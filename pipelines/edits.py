"""`python -m pipelines.edits --edits GLOB --output DIR [--storium-compat] [--spacy-model NAME]`

Wiring only (rules live in annotators/storium/: user_metric, edits, preserved; the stage
functions in its `steps`): read JSON lines {"id", "generated", "published"}, drop duplicate
ids (first by file:line wins), score USER and ROUGE-L per edit into `edits`, write means
into `summary`, and, when a spaCy English pipeline is installed, kept versus deleted tokens
by part of speech into `preserved_pos` (paper section 5). Without one, the card says the
analysis was skipped.
"""

from __future__ import annotations

import argparse
import functools
import operator
from collections.abc import Sequence

import apache_beam as beam

from annotators.storium import steps
from annotators.storium.card import edits_card
from annotators.storium.edits import summarize
from annotators.storium.preserved import load_spacy, merge_counts, pos_rows, spacy_status
from annotators.storium.user_metric import UserConfig
from pipelines.engine import (
    JobArgumentParser,
    JobReport,
    MatchInputs,
    ReadLines,
    WriteTable,
    join,
    listed_inputs,
    make_pipeline,
    parse_job_args,
    run_pipeline,
    staging_path,
)
from pipelines.engine.usage import main
from schemas import storium as sc


def _parser() -> argparse.ArgumentParser:
    # UserConfig.autojunk keeps its historical flag name, so this flag is not generated.
    ap = JobArgumentParser(prog="python -m pipelines.edits", description=__doc__.splitlines()[0])
    ap.add_argument("--edits", required=True, help="JSON-lines files: a glob or a folder")
    ap.add_argument("--output", required=True)
    ap.add_argument(
        "--storium-compat", action="store_true", help="SequenceMatcher autojunk=True, as the original frontend"
    )
    ap.add_argument("--spacy-model", default=None, help="an installed spaCy English pipeline")
    return ap


class ParseEdits(beam.PTransform):
    """(input_id "file:line", bytes) -> Edit, stages `edits` then `dedupe` (first line per id)."""

    def __init__(self, report):
        super().__init__()
        self._report = report

    def expand(self, lines):
        parsed = lines | self._report.stage("edits", steps.parse_edit)
        return (
            parsed
            | "ById" >> beam.Map(lambda line: (line.edit.id, line))
            | "GroupId" >> beam.GroupByKey()
            | self._report.stage("dedupe", steps.keep_first_edit, grouped=True)
        )


class ScoreEdits(beam.PTransform):
    """Edit -> its edits-table row (stage `score`)."""

    def __init__(self, report, config: UserConfig):
        super().__init__()
        self._report, self._config = report, config

    def expand(self, edits):
        cfg = self._config
        return edits | self._report.stage(
            "score", functools.partial(steps.score, config=cfg), input_id=operator.attrgetter("id")
        )


class Summarize(beam.PTransform):
    """Edits-table rows -> summary rows: means per model and over all edits ("*")."""

    def expand(self, scored):
        return scored | "AllScores" >> beam.combiners.ToList() | "Summarize" >> beam.FlatMap(summarize)


class PreservedCounts(beam.PTransform):
    """Edit -> one merged count dict (stage `preserved`): kept/deleted tokens by POS, entities."""

    def __init__(self, report, model: str, config: UserConfig):
        super().__init__()
        self._report, self._model, self._config = report, model, config

    def expand(self, edits):
        model, cfg = self._model, self._config
        counts = edits | self._report.stage(
            "preserved",
            functools.partial(steps.analyze_edit, model=model, config=cfg),
            input_id=operator.attrgetter("id"),
            setup=functools.partial(load_spacy, model),
        )
        return counts | "AllCounts" >> beam.combiners.ToList() | "Merge" >> beam.Map(merge_counts)


def _preserved(p, report, edits, model, skipped, cfg, out) -> None:
    """The `preserved_pos` table and stats `preserved`, or why the analysis was skipped."""
    if skipped:
        report.extra("preserved", p | "Skipped" >> beam.Create([{"skipped": skipped}]))
        return
    total = edits | "Preserved" >> PreservedCounts(report, model, cfg)
    report.tally(
        total
        | "PosRows" >> beam.FlatMap(pos_rows)
        | WriteTable(join(out, "preserved_pos"), sc.POS_SCHEMA, lambda r: r["pos"], name="preserved_pos")
    )
    report.extra("preserved", total | "Entities" >> beam.Map(steps.entity_counts))


def run(argv: Sequence[str] | None = None) -> None:
    args, options = parse_job_args(_parser(), argv)
    cfg = UserConfig(autojunk=bool(args.storium_compat))
    skipped = spacy_status(args.spacy_model)
    inputs = listed_inputs(args.edits, (".jsonl", ".json"))
    out = staging_path(args.output)
    config = {
        "autojunk": cfg.autojunk,
        "stop_words": "spacy.lang.en.stop_words.STOP_WORDS",
        "n_stop_words": len(cfg.stop_words),
        "spacy_model": args.spacy_model,
    }
    report = JobReport(out, "edits", config=config, seed=None, inputs=inputs, options=options, card=edits_card)
    p = make_pipeline(options)
    edits = (
        p
        | "MatchEdits" >> MatchInputs(args.edits, (".jsonl", ".json"))
        | "ReadEdits" >> ReadLines()
        | "ParseEdits" >> ParseEdits(report)
    )
    scored = edits | "ScoreEdits" >> ScoreEdits(report, cfg)
    report.tally(scored | WriteTable(join(out, "edits"), sc.EDITS_SCHEMA, lambda r: r["id"], name="edits"))
    summary = scored | "Summary" >> Summarize()
    report.extra(
        "metrics",
        summary
        | "MetricList" >> beam.combiners.ToList()
        | "MetricsByModel" >> beam.Map(sorted, key=operator.itemgetter("model")),
    )
    report.tally(summary | WriteTable(join(out, "summary"), sc.SUMMARY_SCHEMA, lambda r: r["model"], name="summary"))
    _preserved(p, report, edits, args.spacy_model, skipped, cfg, out)
    report.finish(p)
    run_pipeline(p, commit_to=args.output)


if __name__ == "__main__":
    main(run, "edits")
