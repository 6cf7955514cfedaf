"""`python -m pipelines.storium --games GLOB --output DIR [--budget 1024] [--ratios 8,1,1] [--history 1]`

Wiring only (rules live in annotators/storium/, the stage functions in its `steps`): read
one game file per element, parse, drop duplicate game_pids (the smallest input path wins),
split all stories together, write stories/characters/scenes/entries/cards, then build and
pack one example per character entry with text. Every record passes a Stage, so stats.json
balances per stage.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import operator
from collections.abc import Sequence

import apache_beam as beam

from annotators.storium import steps
from annotators.storium.card import storium_card
from annotators.storium.context import ContextConfig
from annotators.storium.pack import PackConfig
from annotators.storium.split import SplitConfig, assign_splits, parse_ratios, split_report
from annotators.storium.tokens import make_tokenizer
from pipelines.engine import (
    ExportLinesFromTable,
    JobArgumentParser,
    JobReport,
    MatchInputs,
    ReadFiles,
    WriteTable,
    add_config_flags,
    config_from_args,
    join,
    listed_inputs,
    make_pipeline,
    parse_job_args,
    run_pipeline,
    staging_path,
)
from pipelines.engine.paths import hf_split
from pipelines.engine.usage import fail, main
from schemas import storium as sc


def _parser() -> argparse.ArgumentParser:
    ap = JobArgumentParser(prog="python -m pipelines.storium", description=__doc__.splitlines()[0])
    ap.add_argument("--games", required=True, help="game JSON files: a glob or a folder")
    ap.add_argument("--output", required=True)
    add_config_flags(ap, PackConfig, exclude=("entry_preferred", "entry_weight", "other_preferred"))
    ratios = dataclasses.fields(SplitConfig)[0]  # parsed by parse_ratios: validated, exact fractions
    ap.add_argument(
        "--ratios",
        type=parse_ratios,
        default=ratios.default,
        help=f"{ratios.metadata['help']} (default: {','.join(map(str, ratios.default))})",
    )
    add_config_flags(ap, SplitConfig, exclude=("ratios",))
    add_config_flags(ap, ContextConfig)
    ap.add_argument(
        "--tokenizer",
        default="regex",
        help="'regex', or 'hf:PATH': the evaluated model's "
        "tokenizer.json (file or folder), read offline ('gpt2:DIR': GPT-2's vocab.json + merges.txt)",
    )
    return ap


class ParseGames(beam.PTransform):
    """(input_id, file bytes) -> Game, stages `games` then `dedupe` (one game per game_pid)."""

    def __init__(self, report):
        super().__init__()
        self._report = report

    def expand(self, files):
        parsed = files | self._report.stage("games", steps.parse_game_file)
        return (
            parsed
            | "ByPid" >> beam.Map(lambda g: (g.story_id, g))
            | "GroupPid" >> beam.GroupByKey()
            | self._report.stage("dedupe", steps.keep_first_game, grouped=True)
        )


class AssignSplits(beam.PTransform):
    """Game -> one {story_id: split} dict (the split is one global step over all sizes).

    The split report for stats.json goes to `report.extra("split", ...)`.
    """

    def __init__(self, report, config: SplitConfig):
        super().__init__()
        self._report, self._config = report, config

    def expand(self, games):
        config = self._config
        sizes = games | "Sizes" >> beam.Map(steps.story_size) | "AllSizes" >> beam.combiners.ToList()
        splits = sizes | "Assign" >> beam.Map(assign_splits, config)
        self._report.extra(
            "split", sizes | "SplitReport" >> beam.Map(split_report, beam.pvalue.AsSingleton(splits), config)
        )
        return splits


class GameTables(beam.PTransform):
    """Game -> {table name: rows with split} for stories, characters, scenes, entries, cards."""

    def __init__(self, report, splits):
        super().__init__()
        self._report, self._splits = report, splits

    def expand(self, games):
        report, sp = self._report, self._splits

        def with_split(label, records):
            return records | label >> beam.Map(steps.with_split, sp)

        chars = (
            games
            | "CharItems" >> beam.FlatMap(lambda g: g.character_items)
            | report.stage("characters", steps.judged_item, input_id=lambda i: i.input_id)
        )
        entries = (
            games
            | "EntryItems" >> beam.FlatMap(lambda g: g.entry_items)
            | report.stage("entries", steps.judged_item, input_id=lambda i: i.input_id)
        )
        return {
            "stories": games | "StoryRows" >> beam.Map(steps.story_row_with_split, sp),
            "characters": with_split("CharRows", chars),
            "scenes": with_split("SceneRows", games | "Scenes" >> beam.FlatMap(lambda g: g.scenes)),
            "entries": with_split("EntryRows", entries),
            "cards": with_split("CardRows", games | "Cards" >> beam.FlatMap(lambda g: g.cards)),
        }


class PackExamples(beam.PTransform):
    """Game -> one Cassowary-packed example row (with split) per character entry with text."""

    def __init__(self, report, splits, contexts: ContextConfig, packing: PackConfig, tokenizer: str):
        super().__init__()
        self._report, self._splits = report, splits
        self._contexts, self._packing, self._tokenizer = contexts, packing, tokenizer

    def expand(self, games):
        ctx_cfg, pack_cfg, spec = self._contexts, self._packing, self._tokenizer
        contexts = games | self._report.stage(
            "contexts", functools.partial(steps.contexts_of, config=ctx_cfg), input_id=operator.attrgetter("input_id")
        )
        packed = contexts | self._report.stage(
            "pack",
            functools.partial(steps.pack_context, tokenizer_spec=spec, config=pack_cfg),
            input_id=operator.attrgetter("entry_id"),
            setup=functools.partial(make_tokenizer, spec),
        )
        return packed | "PackedSplit" >> beam.Map(steps.packed_with_split, self._splits)


# storium-gpt2 (data/preprocess split_dataset) reads `{split}_filenames.txt`: the split's game
# files, paths relative to the data folder (input ids are), newline-terminated.
SPLIT_FILES = ("train", "validation", "test")


def _filename_line(row: dict) -> list[tuple[str, str]]:
    """(split file, line) of a stories-table row: its game file in `<split>_filenames.txt`."""
    return [(hf_split(row["split"]), row["input_id"])]


TABLES = (  # name, schema, sort key
    ("stories", sc.STORIES_SCHEMA, lambda r: r["story_id"]),
    ("characters", sc.CHARACTERS_SCHEMA, lambda r: r["character_id"]),
    ("scenes", sc.SCENES_SCHEMA, lambda r: (r["story_id"], r["scene_index"])),
    ("entries", sc.ENTRIES_SCHEMA, lambda r: (r["story_id"], r["entry_index"])),
    ("cards", sc.CARDS_SCHEMA, lambda r: r["card_use_id"]),
)


MAX_TOKENS = 1 << 31  # a token budget past any model's context (and far inside the tables' int64)


def run(argv: Sequence[str] | None = None) -> None:
    args, options = parse_job_args(_parser(), argv)
    if not 1 <= args.budget <= MAX_TOKENS:  # 10**20 failed writing the table (int64), after the whole run
        fail("storium", f"--budget must be from 1 to {MAX_TOKENS:,}")
    if args.separator_tokens < 0 or args.end_tokens < 0 or args.field_token_cap < 0:
        fail("storium", "--separator-tokens, --end-tokens and --field-token-cap must be 0 or more")
    split_cfg = config_from_args(args, SplitConfig, ratios=tuple(args.ratios))
    pack_cfg = config_from_args(args, PackConfig)
    ctx_cfg = config_from_args(
        args, ContextConfig, history=max(0, args.history), character_history=max(0, args.character_history)
    )
    try:
        tokenizer_name = make_tokenizer(args.tokenizer).name  # fail early on a missing or invalid file
    except ValueError as exc:
        fail("storium", f"argument --tokenizer: {exc}")
    inputs = listed_inputs(args.games, (".json",))
    out = staging_path(args.output)
    config = {
        "split": dataclasses.asdict(split_cfg),
        "pack": dataclasses.asdict(pack_cfg),
        "context": dataclasses.asdict(ctx_cfg),
        "tokenizer": tokenizer_name,
    }
    report = JobReport(out, "storium", config=config, seed=None, inputs=inputs, options=options, card=storium_card)
    p = make_pipeline(options)
    games = (
        p
        | "MatchGames" >> MatchInputs(args.games, (".json",))
        | "ReadGames" >> ReadFiles()
        | "ParseGames" >> ParseGames(report)
    )
    splits = beam.pvalue.AsSingleton(games | "AssignSplits" >> AssignSplits(report, split_cfg))
    tables = games | "GameTables" >> GameTables(report, splits)
    for name, schema, key in TABLES:
        written = tables[name] | WriteTable(join(out, name), schema, key, name=name)
        report.tally(written)
        if name == "stories":  # storium-gpt2's split lists, read back from the stories table
            report.tally(
                written
                | ExportLinesFromTable(
                    join(out, "stories"),
                    SPLIT_FILES,
                    lambda r: r["story_id"],  # the table's order
                    _filename_line,
                    lambda k: join(out, f"{k}_filenames.txt"),
                    "filenames",
                )
            )
    packed = games | "PackExamples" >> PackExamples(report, splits, ctx_cfg, pack_cfg, args.tokenizer)
    report.tally(packed | WriteTable(join(out, "packed"), sc.PACKED_SCHEMA, lambda r: r["example_id"], name="packed"))
    report.finish(p)
    run_pipeline(p, commit_to=args.output)


if __name__ == "__main__":
    main(run, "storium")
