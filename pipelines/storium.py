"""`python -m pipelines.storium --games GLOB --output DIR [--budget 1024] [--ratios 8,1,1]`

Wiring only (rules live in annotators/storium_*.py): read one game file per element, parse,
drop duplicate game_pids (the smallest input path wins), split all stories together, write
stories/characters/scenes/entries/cards, then build and pack one example per character
entry with text. Every record passes a Stage, so stats.json balances per stage.
"""
from __future__ import annotations

import argparse
import dataclasses
from typing import Sequence

import apache_beam as beam

from annotators.core.outcome import Drop
from annotators.storium.context import ContextConfig, build_contexts
from annotators.storium.pack import PackConfig, pack
from annotators.storium.split import SplitConfig, assign_splits, parse_ratios, split_report
from annotators.storium.tokens import make_tokenizer
from annotators.storium.games import parse_game, story_row
from pipelines.engine import (JobReport, ReadFiles, Stage, WriteTable, default_card, expand_input,
                              input_names, join, make_pipeline, parse_job_args, run_pipeline)
from annotators.storium.card import storium_sections
from schemas import storium as sc


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", required=True, help="game JSON files: a glob or a folder")
    ap.add_argument("--output", required=True)
    ap.add_argument("--budget", type=int, default=PackConfig.budget)
    ap.add_argument("--ratios", type=parse_ratios, default=SplitConfig.ratios)
    ap.add_argument("--history", type=int, default=ContextConfig.history)
    ap.add_argument("--character-history", type=int, default=ContextConfig.character_history)
    ap.add_argument("--tokenizer", default="regex", help="'regex' or 'gpt2:DIR' (local vocab files)")
    return ap


def _item(element):
    """Stage fn for (input_id, record-or-Drop) items already judged by the annotator."""
    return element[1] if isinstance(element[1], Drop) else [element[1]]


def _first_of_duplicates(kv):
    """(game, winner input_id) for every game sharing a game_pid; winner = smallest path."""
    games = list(kv[1])
    winner = min(g.input_id for g in games)
    return [(g, winner) for g in games]


def _keep_winner(element):
    game, winner = element
    if game.input_id != winner:
        return Drop("duplicate_game_pid", f"{game.story_id} also in {winner}")
    return [game]


def _table(report, rows, output, name, schema, key):
    report.tally(rows | WriteTable(join(output, name), schema, key, name=name))


def _games(p, report, paths, names):
    """Parsed games, one per element, with duplicate game_pids rejected."""
    files = p | "ReadGames" >> ReadFiles(paths, names)
    parsed = report.add("games", files | "Parse" >> Stage("games", lambda e: _as_list(parse_game(*e))))
    return report.add("dedupe", parsed
                      | "ByPid" >> beam.Map(lambda g: (g.story_id, g))
                      | "GroupPid" >> beam.GroupByKey()
                      | "Winner" >> beam.FlatMap(_first_of_duplicates)
                      | "Dedupe" >> Stage("dedupe", _keep_winner, input_id=lambda e: e[0].input_id))


def _write_tables(report, games, split_side, out):
    """stories, characters, scenes, entries and cards, each row with its story's split."""
    def with_split(label, pcoll):
        return pcoll | label >> beam.Map(lambda r, sp: sc.row(r, split=sp[r.story_id]), sp=split_side)

    stories = games | "StoryRows" >> beam.Map(lambda g, sp: story_row(g, sp[g.story_id]), sp=split_side)
    _table(report, stories, out, "stories", sc.STORIES_SCHEMA, lambda r: r["story_id"])
    chars = report.add("characters", games | "CharItems" >> beam.FlatMap(lambda g: g.character_items)
                       | "Characters" >> Stage("characters", _item))
    _table(report, with_split("CharRows", chars), out, "characters", sc.CHARACTERS_SCHEMA,
           lambda r: r["character_id"])
    scenes = games | "Scenes" >> beam.FlatMap(lambda g: g.scenes)
    _table(report, with_split("SceneRows", scenes), out, "scenes", sc.SCENES_SCHEMA,
           lambda r: (r["story_id"], r["scene_index"]))
    entries = report.add("entries", games | "EntryItems" >> beam.FlatMap(lambda g: g.entry_items)
                         | "Entries" >> Stage("entries", _item))
    _table(report, with_split("EntryRows", entries), out, "entries", sc.ENTRIES_SCHEMA,
           lambda r: (r["story_id"], r["entry_index"]))
    cards = games | "Cards" >> beam.FlatMap(lambda g: g.cards)
    _table(report, with_split("CardRows", cards), out, "cards", sc.CARDS_SCHEMA, lambda r: r["card_use_id"])


def _write_packed(report, games, split_side, out, ctx_cfg, pack_cfg, spec):
    """One Cassowary-packed example per character entry with text."""
    contexts = report.add("contexts", games | "Contexts" >> Stage(
        "contexts", lambda g: build_contexts(g, ctx_cfg), input_id=lambda g: g.input_id))
    packed = report.add("pack", contexts | "Pack" >> Stage(
        "pack", lambda c: _as_list(pack(c, make_tokenizer(spec), pack_cfg)),
        input_id=lambda c: c.entry_id, setup=lambda: make_tokenizer(spec)))
    rows = packed | "PackedSplit" >> beam.Map(lambda r, sp: {**r, "split": sp[r["story_id"]]}, sp=split_side)
    _table(report, rows, out, "packed", sc.PACKED_SCHEMA, lambda r: r["example_id"])


def run(argv: Sequence[str] | None = None) -> None:
    args, options = parse_job_args(_parser(), argv)
    if args.budget < 1:
        raise SystemExit("--budget must be at least 1")
    split_cfg, pack_cfg = SplitConfig(tuple(args.ratios)), PackConfig(budget=args.budget)
    ctx_cfg = ContextConfig(max(0, args.history), max(0, args.character_history))
    tokenizer_name = make_tokenizer(args.tokenizer).name  # fail early on missing vocab files
    paths = expand_input(args.games, (".json",))
    names = input_names(paths, args.games)
    config = {"split": dataclasses.asdict(split_cfg), "pack": dataclasses.asdict(pack_cfg),
              "context": dataclasses.asdict(ctx_cfg), "tokenizer": tokenizer_name}
    report = JobReport(args.output, "storium", config=config, seed=None, inputs=sorted(names.values()),
                       options=options,
                       card=lambda stats: default_card(stats) + "\n" + storium_sections(stats))
    p = make_pipeline(options)
    games = _games(p, report, paths, names)
    sizes = (games | "Sizes" >> beam.Map(lambda g: (g.story_id, g.n_words))
             | "AllSizes" >> beam.combiners.ToList())  # the split is one global step
    split_side = beam.pvalue.AsSingleton(sizes | "Assign" >> beam.Map(assign_splits, split_cfg))
    report.extra("split", sizes | "SplitReport" >> beam.Map(
        lambda s, a: split_report(s, a, split_cfg), a=split_side))
    _write_tables(report, games, split_side, args.output)
    _write_packed(report, games, split_side, args.output, ctx_cfg, pack_cfg, args.tokenizer)
    report.finish(p)
    run_pipeline(p)


def _as_list(result):
    return result if isinstance(result, Drop) else [result]


if __name__ == "__main__":
    run()
