"""Bias baselines for ClozeT and SenPos (LOT section 5.5, Table 13) as a Beam job. Wiring only.

    python -m pipelines.bias --lot DIR --output OUT [--seed N]

Train rows give the Majority label and the candidate-only classifier (side inputs); val and
test rows get every baseline's pick. Outputs: `summary` (task, split, baseline, accuracy, n),
`summary.md` (Table 13 layout), `predictions` (one row per example and baseline), rejects,
stats.json and CARD.md. The rules are in annotators/bias_baselines.py.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence

import apache_beam as beam

from annotators.audits import bias as bb
from annotators.audits import bias_report as rep
from annotators.audits import records as ar
from annotators.audits import steps
from annotators.audits.bias_report import table13_markdown
from annotators.audits.card import bias_card
from pipelines.engine import (
    JobArgumentParser,
    JobReport,
    WriteTable,
    add_config_flags,
    config_from_args,
    join,
    make_pipeline,
    parse_job_args,
    run_pipeline,
    staging_path,
    write_text,
)
from pipelines.engine.records import ReadRecords, count_check, lot_sources
from pipelines.engine.usage import main
from schemas.audit import BIAS_PREDICTIONS_SCHEMA, BIAS_SUMMARY_SCHEMA
from schemas.lot import SPLITS

TASKS = steps.BIAS_TASKS


class BiasPredictions(beam.PTransform):
    """BiasItems -> one prediction row per val/test example and baseline. Train items give the
    Majority label and the candidate-only classifier (side inputs); they are never scored."""

    def expand(self, items):
        train = items | "Train" >> beam.Filter(lambda i: i.split == "train")
        evals = items | "Eval" >> beam.Filter(lambda i: i.split != "train")
        by_task = train | "ByTask" >> beam.Map(lambda i: (i.task, i)) | "GroupTrain" >> beam.GroupByKey()
        majority = by_task | "Majority" >> beam.Map(rep.majority_of) | "MajDict" >> beam.combiners.ToDict()
        models = by_task | "Fit" >> beam.Map(rep.candidate_model_of) | "ModelDict" >> beam.combiners.ToDict()
        return evals | "Predict" >> beam.FlatMap(
            rep.predictions_of, beam.pvalue.AsSingleton(majority), beam.pvalue.AsSingleton(models)
        )


def _write_table13(summary: list[dict], path: str) -> None:
    write_text(path, table13_markdown(summary))


def build_parser() -> argparse.ArgumentParser:
    parser = JobArgumentParser(
        prog="python -m pipelines.bias",
        description="Bias baselines for ClozeT and SenPos (LOT section 5.5, Table 13).",
    )
    parser.add_argument("--lot", required=True, help="LOT output folder (clozet/, senpos/)")
    parser.add_argument("--output", required=True)
    add_config_flags(parser, bb.BiasConfig, exclude=("bleu_orders",))
    return parser


def run(argv: Sequence[str] | None = None) -> None:
    args, options = parse_job_args(build_parser(), argv)
    config = config_from_args(args, bb.BiasConfig)
    sources, inputs = lot_sources(args.lot, TASKS)
    out = staging_path(args.output)
    report = JobReport(
        out,
        "bias",
        config={**dataclasses.asdict(config), "lot": args.lot},
        seed=args.seed,
        inputs=inputs,
        options=options,
        card=bias_card,
    )
    p = make_pipeline(options)
    columns = ["example_id", "split", "story", "plot0", "plot1", "sentence", "label"]
    records = p | "ReadLot" >> ReadRecords(sources, report, "lot", columns)
    items = records | report.stage("lot_rows", steps.bias_row_fn(config), setup=steps.bias_resources)
    labels = items | "Label" >> beam.Map(lambda item: (rep.split_label(item), 1))
    (count_check(labels, [f"{t}/{s}" for t in TASKS for s in SPLITS]) | report.stage("splits", ar.check_split))
    preds = items | "Predict" >> BiasPredictions()
    report.tally(preds | WriteTable(join(out, "predictions"), BIAS_PREDICTIONS_SCHEMA, rep.prediction_key))
    summary = (
        preds
        | "Key" >> beam.Map(rep.credit_entry)
        | "Group" >> beam.GroupByKey()
        | "Accuracy" >> beam.Map(rep.summary_row)
    )
    report.tally(summary | WriteTable(join(out, "summary"), BIAS_SUMMARY_SCHEMA, rep.summary_key))
    listed = summary | "List" >> beam.combiners.ToList() | "Sort" >> beam.Map(rep.sorted_summary)
    listed | "Markdown" >> beam.Map(_write_table13, join(out, "summary.md"))
    report.record_jieba_backend(p)
    report.extra("bias", listed)
    report.finish(p)
    run_pipeline(p, commit_to=args.output)


if __name__ == "__main__":
    main(run, "bias")
