"""The LOT job's steps as pure functions over records and groups (no Beam).

Each `*_step(...)` returns the function a `pipelines.engine.Stage` applies: over one story,
or (grouped) over a CoGroupByKey result, returning one (input_id, outputs | Drop) pair per
record. Outputs carry (task, table row, Table 3 stats) so the job only routes and writes.
"""
from __future__ import annotations

import json
from typing import Any

from annotators.lot.clozet import (ClozeTConfig, build_clozet, build_plotcom_train, check_annotation,
                                   plotcom_from_clozet)
from annotators.lot.outgen import agreement_counts, build_outgen
from annotators.lot.senpos import SenPosConfig, apply_review, build_senpos, parse_review
from annotators.lot.stats import example_stats
from annotators.lot.story import split_of
from annotators.core.outcome import Drop


def one(result):
    """A single output as a list, a Drop as it is (the Stage contract)."""
    return result if isinstance(result, Drop) else [result]


def input_order(input_id: str) -> tuple:
    """Sort key for "file:line" ids: file name, then line number as a number."""
    name, _, line = input_id.rpartition(":")
    return (name, int(line)) if line.isdigit() else (input_id, -1)


def dedup_step(key_name: str, reason: str):
    """Keep the earliest record of a group in input order (file, line); reject the rest."""
    def fn(element):
        _, records = element
        ordered = sorted(records, key=lambda r: (input_order(r["input_id"]), r["story_id"], r["story"]))
        kept = ordered[0]
        return [(kept["input_id"], [kept])] + [
            (r["input_id"], Drop(reason, f"same {key_name} as {kept['input_id']}")) for r in ordered[1:]]
    return fn


def _clozet_outputs(story, ex, plotted: set) -> list:
    outs = [("clozet", ex.to_row(),
             example_stats("clozet", story, removed=ex.right_index, extra_texts=(ex.plot0, ex.plot1)))]
    if ex.split != "train" and ex.right_index not in plotted:  # PlotCom val/test = ClozeT's
        plotted.add(ex.right_index)
        pc = plotcom_from_clozet(story, ex)
        outs.append(("plotcom", pc.to_row(), example_stats("plotcom", story, removed=pc.removed_index)))
    return outs


def clozet_step(seed: int, splits, config: ClozeTConfig):
    """Over (story_id, {story, ann}): one outcome per annotation."""
    def fn(element):
        story_id, group = element
        stories = list(group["story"])
        anns = sorted(group["ann"], key=lambda a: input_order(a["input_id"]))
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
            outcomes.append((ann["input_id"], _clozet_outputs(story, ex, plotted)))
        return outcomes
    return fn


def plotcom_step(seed: int, config: ClozeTConfig):
    """Over (story_id, {story, ann}): PlotCom training from every story that is not ClozeT's."""
    def fn(element):
        _, group = element
        stories = list(group["story"])
        if not stories:
            return []
        story = stories[0]
        if any(check_annotation(story, a, config) is None for a in group["ann"]):
            return [(story.input_id, Drop("clozet_story", "held out: PlotCom train excludes ClozeT stories"))]
        ex = build_plotcom_train(story, seed=seed)
        stats = example_stats("plotcom", story, removed=ex.removed_index)
        return [(story.input_id, [("plotcom", ex.to_row(), stats)])]
    return fn


def senpos_step(seed: int, splits, config: SenPosConfig):
    """Over one story: [(SenPosExample, stats)] or Drop."""
    def fn(story):
        built = build_senpos(story, split_of(seed, story.story_id, splits), seed=seed, config=config)
        if isinstance(built, Drop):
            return built
        return [(ex, example_stats("senpos", s, removed=r, candidates=ex.n_candidates)) for ex, s, r in built]
    return fn


def review_step(reviewed_only: bool):
    """Over (example_id, {example, review}): the example (reviewed if a review came) and each review."""
    def fn(element):
        example_id, group = element
        examples = list(group["example"])
        reviews = sorted(group["review"], key=lambda r: input_order(r[0]))
        if not examples:
            return [(rid, Drop("unknown_example", f"no SenPos val/test example {example_id}")) for rid, _ in reviews]
        (ex, stats), others = examples[0], []
        final: Any = (ex, stats)
        if reviews:
            applied = apply_review(ex, reviews[0][1])
            final = applied if isinstance(applied, Drop) else (applied, dict(stats, candidates=applied.n_candidates))
            others = [(reviews[0][0], [])] + [(rid, Drop("duplicate_review", "an earlier review counts"))
                                             for rid, _ in reviews[1:]]
        elif reviewed_only:
            final = Drop("not_reviewed", "val/test example without a review (--senpos-reviewed-only)")
        return [(ex.example_id, final if isinstance(final, Drop) else [final])] + others
    return fn


def parse_review_line(input_id: str, raw: bytes):
    """(input_id, review) from one JSON line of completed review tasks, or Drop."""
    try:
        obj = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return Drop("malformed_json", str(exc)[:200])
    review = parse_review(obj)
    return review if isinstance(review, Drop) else (input_id, review)


def outgen_step(seed: int, splits, outline_from: str):
    """Over one story: [("outgen", row, stats, agreement counts)] or Drop."""
    def fn(story):
        ex = build_outgen(story, split_of(seed, story.story_id, splits), seed=seed, outline_from=outline_from)
        if isinstance(ex, Drop):
            return ex
        stats = example_stats("outgen", story, title=ex.title, phrases=ex.outline)
        return [("outgen", ex.to_row(), stats, agreement_counts(ex.outline, story.outline))]
    return fn


def table3(results, tasks) -> dict:
    """{task: {split: Table 3 column -> value}} from ((task, split), Table3Accumulator) pairs."""
    table: dict = {task: {} for task in tasks}
    for (task, split), acc in sorted(results, key=lambda kv: kv[0]):
        table[task][split] = acc.result(task)
    return table


def agreement(triples) -> dict:
    """Micro precision/recall/F1 of built outlines against the inputs' own outlines."""
    tp, n_pred, n_gold = (sum(t[i] for t in triples) for i in range(3))
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gold if n_gold else 0.0
    return {"stories_with_input_outline": sum(1 for t in triples if t[2]), "shared_phrases": tp,
            "predicted_phrases": n_pred, "input_phrases": n_gold, "precision": round(p, 4),
            "recall": round(r, 4), "f1": round(2 * p * r / (p + r), 4) if p + r else 0.0}
