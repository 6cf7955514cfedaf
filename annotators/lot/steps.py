"""The LOT job's steps as pure functions over records and groups (no Beam).

Each `*_step(...)` returns the function a `pipelines.engine.Stage` applies: over one story,
or (grouped) over a CoGroupByKey result, returning one (input_id, outputs | Drop) pair per
record. Outputs are typed records (annotators.lot.records): `TaskRow`s (task, table row,
Table 3 stats), SenPos examples until reviewed, OutGen rows with their outline agreement.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any, NamedTuple

from annotators.core import jsonl
from annotators.core.dedup import input_order, keep_first
from annotators.core.ids import unit_interval
from annotators.core.lsh_sets import partition_id_sets
from annotators.core.metrics import prf
from annotators.core.near_dup import NearDupConfig, Node, band_keys, id_components, member_clusters
from annotators.core.outcome import Drop
from annotators.lot.clozet import (
    ClozeTConfig,
    annotation_of_duplicate,
    annotation_task,
    build_clozet,
    build_plotcom_train,
    check_annotation,
    parse_annotation,
    plotcom_from_clozet,
)
from annotators.lot.official import official_outgen_stats
from annotators.lot.outgen import agreement_counts, build_outgen_with_words
from annotators.lot.records import OutGenOutput, ReviewRecord, SenPosOutput, TaskRow
from annotators.lot.senpos import SenPosConfig, apply_review, build_senpos, parse_review, review_task
from annotators.lot.splits import SplitPlan, split_by_weights
from annotators.lot.stats import example_stats
from annotators.lot.story import (
    StoryConfig,
    exact_duplicate_key,
    normalize_text,
    parse_story_record,
    prepare_story,
    whole_story_problem,
)
from schemas.common import JsonlEntry


def one(result):
    """A single output as a list, a Drop as it is (the Stage contract)."""
    return result if isinstance(result, Drop) else [result]


class StoryKey(NamedTuple):
    """What the dedup shuffles carry for one parsed story (never its text)."""

    input_id: str
    story_id: str
    text_key: str  # exact_duplicate_key: hash of the normalised text without whitespace


def story_key(record: dict[str, Any] | Drop, config: StoryConfig) -> StoryKey | Drop:
    """The StoryKey of a parsed story (a Drop passes through)."""
    if isinstance(record, Drop):
        return record
    return StoryKey(record["input_id"], record["story_id"], exact_duplicate_key(record, config))


class KeyBands(NamedTuple):
    """A parsed story's StoryKey and the LSH band keys of its normalised text."""

    key: StoryKey
    bands: tuple[str, ...]


def story_key_bands(record: dict[str, Any] | Drop, config: StoryConfig, near_dup: NearDupConfig) -> KeyBands | Drop:
    """KeyBands of a parsed story, both made where it is first read (a Drop passes through)."""
    if isinstance(record, Drop):
        return record
    return KeyBands(
        story_key(record, config), tuple(band_keys(normalize_text(record["story"], config.normalize), near_dup))
    )


def parse_step(config: StoryConfig, near_dup: NearDupConfig):
    """The parse stage: (input_id, raw line | parquet row) -> [KeyBands] or Drop."""

    def parse(element):
        return one(story_key_bands(parse_story_record(*element), config, near_dup))

    return parse


def prepare_step(config: StoryConfig, outline_method: str):
    """The prepare stage: a kept story record -> [PreparedStory] or Drop."""

    def prepare(record):
        return one(prepare_story(record, config, outline_method=outline_method))

    return prepare


class BuiltStory(NamedTuple):
    """A prepared story's outcome in every task stage, made where it was prepared (`build_step`):
    the task stages then only account for what is already decided, so a story crosses to a
    pool worker once (its record) and comes back as its examples, not its sentences and tokens.

    `outcomes`: task stage name -> outputs (a list) or Drop, exactly what that stage's step
    gives over the PreparedStory; `story`: the PreparedStory itself only when annotations name
    it (the ClozeT join needs it), else None; `clozet_tasks`: its ClozeT annotation task entries.
    """

    input_id: str
    story_id: str
    outcomes: dict[str, Any]
    story: Any
    clozet_tasks: list[JsonlEntry]


def build_step(prepare, tasks: tuple, limits: StoryConfig, outcome):
    """The prepare stage that also runs every task step over the story it prepares: a kept
    story record and the split side inputs -> [BuiltStory] or the prepare Drop. `tasks`:
    (stage name, step) pairs (`step(story, groups, annotated)`); `outcome(step, story, **side)`
    is the engine's (pipelines.engine.pool_worker.outcome: outputs as a list, Drop, an
    exception as an `internal_error` Drop), so each task's outcome is the one its own stage
    would have made."""

    def fn(record, groups, annotated):
        prepared = prepare(record)
        if isinstance(prepared, Drop):
            return prepared
        story = prepared[0]
        outcomes = {name: outcome(step, story, groups=groups, annotated=annotated) for name, step in tasks}
        kept = story if story.story_id in annotated else None
        return [BuiltStory(story.input_id, story.story_id, outcomes, kept, clozet_task_entry(story, limits))]

    return fn


def built_outcome(name: str, built: BuiltStory):
    """A task stage's step over a BuiltStory: the outcome `build_step` made for it."""
    return built.outcomes[name]


def annotation_step(element: tuple[str, bytes]) -> list | Drop:
    """One (input_id, line) of ClozeT annotations -> [annotation dict] or Drop."""
    return one(parse_annotation(*element))


def review_line_step(element: tuple[str, bytes]) -> list | Drop:
    """One (input_id, line) of completed SenPos reviews -> [ReviewRecord] or Drop."""
    return one(parse_review_line(*element))


def grouped_candidate_sets(grouped: tuple[int, Iterable], dropped) -> list[tuple[str, ...]]:
    """The candidate sets of one (band partition, its blocks) group (lsh_sets.partition_id_sets)."""
    _, blocks = grouped
    return partition_id_sets(blocks, dropped)


class ComponentSets(NamedTuple):
    """One component's candidate sets (input ids sharing an LSH band), sent to the component
    beside its members' texts: its band groups, without a MinHash per member made again."""

    sets: tuple[tuple[str, ...], ...]


def components_and_sets(
    sets: Iterable[tuple[str, ...]],
) -> tuple[list[tuple[str, str]], list[tuple[str, ComponentSets]]]:
    """((input id, component id) of every candidate, sorted; (component id, its ComponentSets)
    of every component), from all candidate sets (near_dup.id_components)."""
    distinct = sorted(set(sets))
    component = id_components(distinct)
    per: dict[str, list[tuple[str, ...]]] = {}
    for ids in distinct:
        per.setdefault(component[ids[0]], []).append(ids)
    return sorted(component.items()), [(key, ComponentSets(tuple(per[key]))) for key in sorted(per)]


def candidate_text(element, components, dropped, config: StoryConfig) -> list[tuple[str, tuple[Node, str]]]:
    """(component id, (node, text)) of a story read again ((input_id, raw line | parquet row))
    when it is a kept near-duplicate candidate (`components`: input id -> component id), else
    nothing: a story no candidate set holds, most stories of a real corpus, is not parsed."""
    if element[0] not in components:
        return []
    out = []
    for record in kept_records(element, dropped):
        found = near_dup_record(record, config)
        out.append((components[found.node.input_id], (found.node, found.text)))
    return out


def component_clusters(grouped: tuple[str, tuple[list, Any]], config: NearDupConfig) -> list:
    """The verified clusters (near_dup.member_clusters) of one component's (node, text)
    members, from its candidate sets (None: from the members' band keys)."""
    _, (members, sets) = grouped
    return member_clusters(members, config, sets)


def clozet_task_entry(story, limits: StoryConfig) -> list[JsonlEntry]:
    """The ClozeT annotation task of a story ClozeT can take (annotation_tasks/clozet.jsonl)."""
    if whole_story_problem(story, limits, "ClozeT"):
        return []
    return [JsonlEntry("clozet", story.story_id, annotation_task(story))]


def review_task_entry(output: SenPosOutput) -> JsonlEntry:
    """The review task of a val/test SenPos example (review/senpos_<split>.jsonl)."""
    example = output.example
    return JsonlEntry(example.split, example.example_id, review_task(example))


def story_order(key: StoryKey) -> tuple:
    """Input order of a parsed story (file, line); id and text hash break ties deterministically."""
    return (input_order(key.input_id), key.story_id, key.text_key)


DEDUP_PARTS = 64  # partitions of the dedup keys: what each dedup shuffle is keyed by
DEDUP_FIELDS = {"text": "text_key", "story_id": "story_id"}  # dedup_step's key name -> StoryKey field


def dedup_part(value: str, parts: int = DEDUP_PARTS) -> int:
    """The partition of a dedup key's value (a text hash, a story id): equal values share it."""
    return int.from_bytes(hashlib.sha256(value.encode("utf-8")).digest()[:8], "big") % parts


def dedup_entry(key_name: str, key: StoryKey) -> list[tuple[int, StoryKey]]:
    """(partition of its `key_name` value, the StoryKey): its place in that dedup's shuffle."""
    return [(dedup_part(getattr(key, DEDUP_FIELDS[key_name])), key)]


def dedup_step(key_name: str, reason: str):
    """Keep the earliest record of each group of equal `key_name` (text or story_id) in input
    order (file, line); reject the rest. A grouped step over one partition of the keys
    (`dedup_part`): (partition, its StoryKeys) -> every group's (input_id, kept | Drop)."""
    field = DEDUP_FIELDS[key_name]

    def fn(element):
        _, keys = element
        groups: dict[str, list[StoryKey]] = {}
        for key in keys:
            groups.setdefault(getattr(key, field), []).append(key)
        decided = []
        for value in sorted(groups):
            decided += keep_first(
                groups[value],
                order=story_order,
                input_id=lambda k: k.input_id,
                reason=reason,
                detail=lambda kept: f"same {key_name} as {kept.input_id}",
            )
        return decided

    return fn


class DuplicateLink(NamedTuple):
    """A removed exact duplicate (its input order) and the copy that keeps its text."""

    order: tuple
    kept_input_id: str
    kept_story_id: str


def duplicate_links(element, named: frozenset) -> list[tuple[str, DuplicateLink]]:
    """Of one partition of the text dedup ((partition, StoryKeys), as `dedup_step` gets it):
    (story id, DuplicateLink) of every exact duplicate the dedup removes whose id an
    annotation names (`named`) and differs from the kept copy's (clozet.moved_targets)."""
    _, keys = element
    groups: dict[str, list[StoryKey]] = {}
    for key in keys:
        groups.setdefault(key.text_key, []).append(key)
    links = []
    for text_key in sorted(groups):
        first, *later = sorted(groups[text_key], key=story_order)
        links += [
            (k.story_id, DuplicateLink(story_order(k), first.input_id, first.story_id))
            for k in later
            if k.story_id in named and k.story_id != first.story_id
        ]
    return links


def held_ids(element, named: frozenset) -> list[str]:
    """Of one partition of the id dedup (the stories left after the text dedup): the ids an
    annotation names that a story has (the earliest of them keeps the id)."""
    _, keys = element
    return sorted({k.story_id for k in keys if k.story_id in named})


def kept_records(element, dropped) -> list[dict[str, Any]]:
    """The second read of one input record: the parsed story unless parsing failed (already
    rejected by the parse stage) or a dedup stage dropped it (`dropped`: input ids)."""
    record = parse_story_record(*element)
    if isinstance(record, Drop) or record["input_id"] in dropped:
        return []
    return [record]


# The paper's PlotCom val/test: 929 examples (465 val, 464 test) sampled from all 1,232 ClozeT
# examples (LOT Table 3), train included (`--plotcom-eval paper`).
PLOTCOM_PAPER_SHARE = 929 / 1232
PLOTCOM_PAPER_VAL = 465 / 929


def plotcom_eval_split(seed: int, story_id: str, right_index: int, mode: str, clozet_split: str) -> str | None:
    """The PlotCom split of the PlotCom example made from a ClozeT example, or None for none.

    `leak-free` (the default): ClozeT val/test examples become PlotCom val/test in the same
    split (the story's one split). `paper`: every ClozeT example, train included, is drawn
    with probability 929/1232 and then split 465:464, as LOT sampled PlotCom val/test; the
    card states the overlap this creates with ClozeT train."""
    if mode != "paper":
        return None if clozet_split == "train" else clozet_split
    if unit_interval(seed, "plotcom_eval", story_id, right_index) >= PLOTCOM_PAPER_SHARE:
        return None
    return split_by_weights(
        seed, f"plotcom_eval|{story_id}|{right_index}", (PLOTCOM_PAPER_VAL, 1 - PLOTCOM_PAPER_VAL, 0)
    )


class NearDupRecord(NamedTuple):
    """A kept story as the near-duplicate search sees it: its cluster node and its text,
    normalised as `prepare_story` normalises it (shingles ignore whitespace)."""

    node: Node
    text: str


def near_dup_record(record: dict[str, Any], config: StoryConfig) -> NearDupRecord:
    return NearDupRecord(
        Node(record["url"], record["input_id"], record["story_id"], (record["input_id"],)),
        normalize_text(record["story"], config.normalize),
    )


def _clozet_outputs(story, ex, plotted: set, seed: int, plotcom_eval: str) -> list:
    outs = [
        TaskRow(
            "clozet",
            ex.to_row(),
            example_stats("clozet", story, removed=ex.right_index, extra_texts=(ex.plot0, ex.plot1)),
        )
    ]
    if ex.right_index not in plotted:  # one PlotCom example per removed sentence
        plotted.add(ex.right_index)
        split = plotcom_eval_split(seed, story.story_id, ex.right_index, plotcom_eval, ex.split)
        if split is not None:
            pc = plotcom_from_clozet(story, ex, split)
            outs.append(TaskRow("plotcom", pc.to_row(), example_stats("plotcom", story, removed=pc.removed_index)))
    return outs


def _clozet_outcomes(story, anns: list, split: str, seed: int, config: ClozeTConfig, plotcom_eval: str) -> list:
    """(input_id, TaskRows | Drop) per annotation of one story, in input order."""
    outcomes, seen, plotted = [], set(), set()
    for ann in anns:
        ex = build_clozet(story, ann, split, seed=seed, config=config)
        if not isinstance(ex, Drop) and ex.example_id in seen:
            ex = Drop("duplicate_annotation", f"same as an earlier annotation of {story.story_id}")
        if isinstance(ex, Drop):
            outcomes.append((ann["input_id"], ex))
            continue
        seen.add(ex.example_id)
        outcomes.append((ann["input_id"], _clozet_outputs(story, ex, plotted, seed, plotcom_eval)))
    return outcomes


def clozet_step(
    plan: SplitPlan, config: ClozeTConfig, limits: StoryConfig = StoryConfig(), plotcom_eval: str = "leak-free"
):
    """Over (story_id, {story, ann}) and the split side inputs: one outcome per annotation."""

    def fn(element, groups, annotated):
        story_id, group = element
        stories = list(group["story"])
        anns = sorted(group["ann"], key=lambda a: input_order(a["input_id"]))
        if not stories:
            why = (  # "no story with id" was untrue of a story that was read, then dropped
                f"no kept story has id {story_id!r}: the id is not in --stories, or its story was rejected "
                "(an exact or near duplicate of another, too short, ...: see its rows in rejects/)"
            )
            return [(a["input_id"], Drop("unknown_story", why)) for a in anns]
        # an annotation moved here from a removed exact duplicate yields to the story's own
        moved = {a["input_id"]: annotation_of_duplicate(a, anns) for a in anns}
        anns = [a for a in anns if moved[a["input_id"]] is None]
        outcomes = [(i, drop) for i, drop in moved.items() if drop is not None]
        problem = whole_story_problem(stories[0], limits, "ClozeT")
        if problem is not None:
            outcomes += [(a["input_id"], problem) for a in anns]
        else:
            split = plan.split(story_id, groups, annotated)
            outcomes += _clozet_outcomes(stories[0], anns, split, plan.seed, config, plotcom_eval)
        return sorted(outcomes, key=lambda pair: input_order(pair[0]))

    return fn


def plotcom_step(plan: SplitPlan, config: ClozeTConfig, limits: StoryConfig = StoryConfig()):
    """Over one story and the split side inputs: PlotCom training, for a train story of a
    group without ClozeT stories (PlotCom train never holds a ClozeT story or a near-duplicate
    of one; its val/test come from ClozeT)."""

    def fn(story, groups, annotated):
        problem = whole_story_problem(story, limits, "PlotCom")
        if problem is not None:
            return problem
        anns = annotated.get(story.story_id, ())
        if any(check_annotation(story, a, config) is None for a in anns):
            return Drop("clozet_story", "held out: PlotCom train excludes ClozeT stories")
        others = (
            [m for m in plan.members(story.story_id, groups) if m != story.story_id and m in annotated]
            if annotated
            else []
        )
        if others:
            return Drop("clozet_story", f"held out: a near-duplicate of ClozeT story {others[0]}")
        split = plan.split(story.story_id, groups, annotated)
        if split != "train":
            return Drop("not_train_split", f"the story's split is {split}: PlotCom val/test come from ClozeT")
        ex = build_plotcom_train(story, seed=plan.seed)
        return [TaskRow("plotcom", ex.to_row(), example_stats("plotcom", story, removed=ex.removed_index))]

    return fn


def senpos_step(plan: SplitPlan, config: SenPosConfig):
    """Over one text and the split side inputs: [SenPosOutput(example, stats)] per window, or Drop."""

    def fn(story, groups, annotated):
        built = build_senpos(story, plan.split(story.story_id, groups, annotated), seed=plan.seed, config=config)
        if isinstance(built, Drop):
            return built
        return [
            SenPosOutput(
                b.example,
                example_stats(
                    "senpos",
                    b.story,
                    removed=b.removed_index,
                    indices=range(*b.window),
                    candidates=b.example.n_candidates,
                ),
            )
            for b in built
        ]

    return fn


def _reviewed(output: SenPosOutput, review: ReviewRecord) -> SenPosOutput | Drop:
    """The example with the review applied (candidates renumbered), or why it is discarded."""
    applied = apply_review(output.example, review.review)
    if isinstance(applied, Drop):
        return applied
    return SenPosOutput(applied, dict(output.stats, candidates=applied.n_candidates))


def _review_outcomes(output: SenPosOutput, reviews: list[ReviewRecord], reviewed_only: bool) -> list:
    """The example's outcome (reviewed by the earliest review) and each review's outcome."""
    final: Any = [output]
    others: list = []
    if reviews:
        reviewed = _reviewed(output, reviews[0])
        final = reviewed if isinstance(reviewed, Drop) else [reviewed]
        others = [(reviews[0].input_id, [])] + [
            (r.input_id, Drop("duplicate_review", "an earlier review counts")) for r in reviews[1:]
        ]
    elif reviewed_only:
        final = Drop("not_reviewed", "val/test example without a review (--senpos-reviewed-only)")
    return [(output.example.example_id, final)] + others


def review_step(reviewed_only: bool):
    """Over (example_id, {example, review}): the example (reviewed if a review came) and each review."""

    def fn(element):
        example_id, group = element
        examples = list(group["example"])
        reviews = sorted(group["review"], key=lambda r: input_order(r.input_id))
        if not examples:
            return [(r.input_id, Drop("unknown_example", f"no SenPos val/test example {example_id}")) for r in reviews]
        return _review_outcomes(examples[0], reviews, reviewed_only)

    return fn


def parse_review_line(input_id: str, raw: bytes) -> ReviewRecord | Drop:
    """A ReviewRecord from one JSON line of completed review tasks, or Drop."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return Drop("undecodable", str(exc)[:200])
    try:
        obj = jsonl.loads(text)
    except (ValueError, RecursionError) as exc:  # RecursionError: JSON nested too deeply
        return Drop("malformed_json", jsonl.malformed_detail(str(exc)[:200], text))
    review = parse_review(obj)
    return review if isinstance(review, Drop) else ReviewRecord(input_id, review)


def outgen_step(
    plan: SplitPlan,
    outline_from: str,
    outline_method: str = "posrake",
    limits: StoryConfig = StoryConfig(),
    title_from: str = "none",
    outline_fill: str = "longest",
    outline_opening: str = "last",
):
    """Over one story and the split side inputs: [OutGenOutput(TaskRow("outgen", ...),
    agreement counts)] or Drop."""

    def fn(story, groups, annotated):
        problem = whole_story_problem(story, limits, "OutGen")
        if problem is not None:
            return problem
        built = build_outgen_with_words(
            story,
            plan.split(story.story_id, groups, annotated),
            seed=plan.seed,
            outline_from=outline_from,
            outline_method=outline_method,
            title_from=title_from,
            outline_fill=outline_fill,
            outline_opening=outline_opening,
        )
        if isinstance(built, Drop):
            return built
        ex, phrase_words, title_words = built
        stats = example_stats("outgen", story, title_words=title_words, phrase_words=phrase_words)
        return [OutGenOutput(TaskRow("outgen", ex.to_row(), stats), agreement_counts(ex.outline, story.outline))]

    return fn


def official_outgen_step(element: tuple[str, bytes]) -> list[dict[str, Any]] | Drop:
    """One (input_id, line) of the official OutGen file -> [its Table 3 numbers] or Drop."""
    return one(official_outgen_stats(*element))


def table3(results, tasks) -> dict:
    """{task: {split: Table 3 column -> value}} from ((task, split), Table3Accumulator) pairs."""
    table: dict = {task: {} for task in tasks}
    for (task, split), acc in sorted(results, key=lambda kv: kv[0]):
        table[task][split] = acc.result(task)
    return table


def agreement_from_sums(shared: int, predicted: int, official: int, stories: int) -> dict:
    """Micro precision/recall/F1 of built outlines against the inputs' own outlines, from the
    summed AgreementCounts and the number of stories that came with an outline."""
    p, r, f1 = prf(shared, predicted, official)
    return {
        "stories_with_input_outline": stories,
        "shared_phrases": shared,
        "predicted_phrases": predicted,
        "input_phrases": official,
        "precision": round(p, 4),
        "recall": round(r, 4),
        "f1": round(f1, 4),
    }
