"""What the storium and edits jobs' stages apply: pure functions over typed records.

Each returns a list of outputs or a `Drop` (or, for grouped dedup stages, the
`[(input_id, outputs | Drop)]` pairs of `annotators.core.dedup.keep_first`); the jobs only
wire them into Beam. Rules live in the modules named in each docstring.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from annotators.core.dedup import keep_first
from annotators.core.outcome import Drop
from annotators.storium.context import Context, ContextConfig, build_contexts
from annotators.storium.edits import Edit, EditLine, parse_edit_line, score_edit
from annotators.storium.games import parse_game, story_row
from annotators.storium.pack import PackConfig, pack
from annotators.storium.preserved import analyze_doc, load_spacy
from annotators.storium.split import StorySize
from annotators.storium.tokens import make_tokenizer
from annotators.storium.user_metric import AlignmentTooCostly, UserConfig
from schemas import storium as sc


def as_outputs(result: Any) -> list | Drop:
    """A single record as a one-element output list; a Drop stays a Drop."""
    return result if isinstance(result, Drop) else [result]


# ----------------------------------------------------------------------------- storium
def parse_game_file(element: tuple[str, bytes]) -> list[sc.Game] | Drop:
    """Stage `games`: one game file (input_id, bytes) -> its Game (annotators.storium.games)."""
    input_id, data = element
    return as_outputs(parse_game(input_id, data))


def keep_first_game(group: tuple[str, Iterable[sc.Game]]) -> list[tuple[str, Any]]:
    """Stage `dedupe` (grouped by game_pid): the game from the smallest input path is kept."""
    _pid, games = group
    return keep_first(
        games,
        order=lambda g: g.input_id,
        input_id=lambda g: g.input_id,
        reason="duplicate_id",
        detail=lambda g: f"{g.story_id} also in {g.input_id}",
    )


def judged_item(item: sc.Item) -> list | Drop:
    """Stages `characters` and `entries`: a part the game parser already judged."""
    return as_outputs(item.record)


def story_size(game: sc.Game) -> StorySize:
    """What the split orders stories by (annotators.storium.split): words, entries, scenes, path."""
    return StorySize(
        game.story_id, game.n_words, sum(s.n_entries for s in game.scenes), len(game.scenes), game.input_id
    )


def with_split(record: Any, splits: dict[str, str]) -> dict:
    """A character/scene/entry/card row with its story's split."""
    return sc.row(record, split=splits[record.story_id])


def story_row_with_split(game: sc.Game, splits: dict[str, str]) -> dict:
    """The stories-table row of a game, with its split."""
    return story_row(game, splits[game.story_id])


def contexts_of(game: sc.Game, config: ContextConfig) -> list[Context]:
    """Stage `contexts`: every example context of one game (annotators.storium.context)."""
    return build_contexts(game, config)


def pack_context(context: Context, tokenizer_spec: str, config: PackConfig) -> list[dict] | Drop:
    """Stage `pack`: one Cassowary-packed example row (annotators.storium.pack)."""
    return as_outputs(pack(context, make_tokenizer(tokenizer_spec), config))


def packed_with_split(row: dict, splits: dict[str, str]) -> dict:
    return {**row, "split": splits[row["story_id"]]}


# ----------------------------------------------------------------------------- edits
def parse_edit(element: tuple[str, bytes]) -> list[EditLine] | Drop:
    """Stage `edits`: one JSON line (input_id "file:line", bytes) -> an EditLine."""
    input_id, data = element
    if not data.strip():
        return Drop("blank_line", "")
    edit = parse_edit_line(data)
    return edit if isinstance(edit, Drop) else [EditLine(input_id, edit)]


def line_order(input_id: str) -> tuple[str, int]:
    """'name:12' -> ('name', 12), so line 10 sorts after line 9."""
    name, _, line = input_id.rpartition(":")
    return (name, int(line)) if line.isdigit() else (input_id, 0)


def keep_first_edit(group: tuple[str, Iterable[EditLine]]) -> list[tuple[str, Any]]:
    """Stage `dedupe` (grouped by edit id): the first line by (file, line number) is kept."""
    _id, lines = group
    kept = keep_first(
        lines,
        order=lambda e: line_order(e.input_id),
        input_id=lambda e: e.input_id,
        reason="duplicate_id",
        detail=lambda e: f"{e.edit.id} first at {e.input_id}",
    )
    return [(i, r if isinstance(r, Drop) else [line.edit for line in r]) for i, r in kept]


def score(edit: Edit, config: UserConfig) -> list[dict]:
    """Stage `score`: the edits-table row (USER and ROUGE-L; annotators.storium.edits)."""
    try:
        return [score_edit(edit, config)]
    except AlignmentTooCostly as exc:
        return Drop(
            "over_size_limit",
            {"message": str(exc), "generated_chars": len(edit.generated), "published_chars": len(edit.published)},
        )


def analyze_edit(edit: Edit, model: str, config: UserConfig) -> list[dict] | Drop:
    """Stage `preserved`: kept/deleted counts by part of speech (annotators.storium.preserved)."""
    try:
        counts = analyze_doc(edit, load_spacy(model)(edit.generated), config)
    except AlignmentTooCostly as exc:
        return Drop("over_size_limit", {"message": str(exc), "generated_chars": len(edit.generated)})
    return Drop("unalignable_tokens", edit.id) if counts is None else [counts]


def entity_counts(total: dict) -> dict:
    """The merged preserved counts without the per-POS table (stats.json `preserved`)."""
    return {k: v for k, v in total.items() if k != "pos"}
