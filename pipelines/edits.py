"""`python -m pipelines.edits --edits GLOB --output DIR [--storium-compat] [--spacy-model NAME]`

Wiring only (rules live in annotators/user_metric.py, storium_edits.py, storium_preserved.py):
read JSON lines {"id", "generated", "published"}, drop duplicate ids (first by file:line
wins), score USER and ROUGE-L per edit into `edits`, write means into `summary`, and, when a
spaCy English pipeline is installed, kept versus deleted tokens by part of speech into
`preserved_pos` (paper section 5). Without one, the card says the analysis was skipped.
"""
from __future__ import annotations

import argparse
from typing import Sequence

import apache_beam as beam

from annotators.core.outcome import Drop
from annotators.storium.card import edits_sections
from annotators.storium.edits import parse_edit_line, score_edit, summarize
from annotators.storium.preserved import analyze_doc, load_spacy, merge_counts, pos_rows, spacy_status
from annotators.storium.user_metric import UserConfig
from pipelines.engine import (JobReport, ReadLines, Stage, WriteTable, default_card, expand_input,
                              input_names, join, make_pipeline, parse_job_args, run_pipeline)
from schemas import storium as sc


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edits", required=True, help="JSON-lines files: a glob or a folder")
    ap.add_argument("--output", required=True)
    ap.add_argument("--storium-compat", action="store_true",
                    help="SequenceMatcher autojunk=True, as the original frontend")
    ap.add_argument("--spacy-model", default=None, help="an installed spaCy English pipeline")
    return ap


def _parse(element):
    input_id, data = element
    if not data.strip():
        return Drop("blank_line", "")
    edit = parse_edit_line(data)
    return edit if isinstance(edit, Drop) else [(input_id, edit)]


def _line_key(input_id: str):
    """'name:12' -> ('name', 12), so line 10 sorts after line 9."""
    name, _, line = input_id.rpartition(":")
    return (name, int(line)) if line.isdigit() else (input_id, 0)


def _first_by_line(kv):
    items = list(kv[1])
    winner = min((i for i, _ in items), key=_line_key)
    return [(i, e, winner) for i, e in items]


def _keep_first(element):
    input_id, edit, winner = element
    return Drop("duplicate_id", f"{edit.id} first at {winner}") if input_id != winner else [edit]


def _analyze(edit, model, cfg):
    counts = analyze_doc(edit, load_spacy(model)(edit.generated), cfg)
    return Drop("unalignable_tokens", edit.id) if counts is None else [counts]


def run(argv: Sequence[str] | None = None) -> None:
    args, options = parse_job_args(_parser(), argv)
    cfg = UserConfig(autojunk=bool(args.storium_compat))
    skipped = spacy_status(args.spacy_model)
    paths = expand_input(args.edits, (".jsonl", ".json"))
    names = input_names(paths, args.edits)
    config = {"autojunk": cfg.autojunk, "stop_words": "spacy.lang.en.stop_words.STOP_WORDS",
              "n_stop_words": len(cfg.stop_words), "spacy_model": args.spacy_model}
    report = JobReport(args.output, "edits", config=config, seed=None, inputs=sorted(names.values()),
                       options=options,
                       card=lambda stats: default_card(stats) + "\n" + edits_sections(stats))
    p = make_pipeline(options)
    lines = p | "ReadEdits" >> ReadLines(paths, names)
    parsed = report.add("edits", lines | "Parse" >> Stage("edits", _parse))
    edits = report.add("dedupe", parsed
                       | "ById" >> beam.Map(lambda ie: (ie[1].id, ie))
                       | "GroupId" >> beam.GroupByKey()
                       | "First" >> beam.FlatMap(_first_by_line)
                       | "Dedupe" >> Stage("dedupe", _keep_first, input_id=lambda e: e[0]))
    scored = report.add("score", edits | "Score" >> Stage(
        "score", lambda e: [score_edit(e, cfg)], input_id=lambda e: e.id))
    out = args.output
    report.tally(scored | WriteTable(join(out, "edits"), sc.EDITS_SCHEMA, lambda r: r["id"], name="edits"))
    summary = (scored | "AllScores" >> beam.combiners.ToList()
               | "Summarize" >> beam.FlatMap(summarize))
    report.tally(summary | WriteTable(join(out, "summary"), sc.SUMMARY_SCHEMA, lambda r: r["model"],
                                      name="summary"))
    if skipped:
        report.extra("preserved", p | "Skipped" >> beam.Create([{"skipped": skipped}]))
    else:
        model = args.spacy_model
        counts = report.add("preserved", edits | "Analyze" >> Stage(
            "preserved", lambda e: _analyze(e, model, cfg), input_id=lambda e: e.id,
            setup=lambda: load_spacy(model)))
        total = counts | "AllCounts" >> beam.combiners.ToList() | "Merge" >> beam.Map(merge_counts)
        report.tally(total | "PosRows" >> beam.FlatMap(pos_rows)
                     | WriteTable(join(out, "preserved_pos"), sc.POS_SCHEMA, lambda r: r["pos"],
                                  name="preserved_pos"))
        report.extra("preserved", total | "Entities" >> beam.Map(
            lambda t: {k: v for k, v in t.items() if k != "pos"}))
    report.finish(p)
    run_pipeline(p)


if __name__ == "__main__":
    run()
