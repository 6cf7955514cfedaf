"""What the stories job's stages apply: pure functions over typed records, no Beam.

Each stage function returns outputs (a list) or a `Drop`; the grouped ones return
`[(input_id, [record] | Drop), ...]` (see `pipelines.engine.Stage`). The order of the job
(LOT section 3; SPEC "Crawl and clean"): page cache rows or dumps -> `RawStory` -> cleaned
`Story` -> its `DedupKey` (node, text hash, LSH band keys) -> exact duplicates collapsed
(keep-first by `Node` order) -> candidate sets of nodes sharing a band, joined into components
where they share a story -> near-duplicates verified and clustered per component
(`annotators.core.near_dup`) -> every story with its cluster. Deduplication decides on
DedupKeys; texts are needed only to verify the pairs of a component.
"""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq

from annotators.core.dedup import keep_first, keeper_of
from annotators.core.lsh_sets import band_part, member_band_sets, partition_id_sets
from annotators.core.near_dup import (
    Assignment,
    BandMember,
    DedupKey,
    NearDupConfig,
    Node,
    band_keys,
    cluster_id,
    component_clusters,
    exact_duplicate_key,
    scored_against_representative,
)
from annotators.core.outcome import Drop
from annotators.stories.clean import CleanConfig
from annotators.stories.site_spec import SiteSpec
from annotators.stories.sources import RawStory, json_line_to_raw, page_to_raw, text_file_to_raw, to_story
from annotators.text.tokenizers import get_tokenizer
from schemas.stories import Story


class PageRow(NamedTuple):
    """One row of the crawler's page cache, keyed by its requested URL."""

    url: str
    row: dict


class ClusterJoin(NamedTuple):
    """A story (one, by story_id) with its cluster assignment (none for a singleton)."""

    story_id: str
    stories: list[Story]
    assignments: list[Assignment]


class Decision(NamedTuple):
    """What deduplication decided for one surviving story, without its text: where the job
    parked the story (`loc`, the engine's spill location), the input ids it stands for (itself
    and its exact duplicates) and its cluster assignments (none: a cluster of its own)."""

    loc: Any
    members: tuple[str, ...]
    assignments: list


def one(result: Any) -> list | Drop:
    """A `record | Drop` as Stage's `outputs | Drop`."""
    return result if isinstance(result, Drop) else [result]


def parquet_page_rows(name: str, data: bytes) -> list[PageRow] | Drop:
    """Every row of one page-cache part file; a truncated or foreign file is `unreadable_file`."""
    try:
        table = pq.read_table(pa.BufferReader(data))
    except Exception as exc:  # pyarrow raises many types; a bad file is a reject, not a crash
        return Drop("unreadable_file", f"{name}: {exc}"[:300])
    return [PageRow(row["url"], row) for row in table.to_pylist()]


def page_story(page: PageRow, spec: SiteSpec) -> list[RawStory] | Drop:
    return one(page_to_raw(page.row, spec))


REPLACED_NONE = {"pages": 0, "sequences": 0}  # stats.json `utf8_replaced` of a run with none


def replaced_counts(raw: RawStory) -> dict[str, int]:
    """stats.json `utf8_replaced` of one page: 1 and its invalid UTF-8 sequences read as U+FFFD
    (`sources.page_to_raw`), or zeros."""
    return {"pages": 1, "sequences": raw.replaced} if raw.replaced else REPLACED_NONE


def sum_replaced(counts: Iterable[dict[str, int]]) -> dict[str, int]:
    """The `replaced_counts` of every page summed (a CombineGlobally function: it also sums sums)."""
    total = dict(REPLACED_NONE)
    for c in counts:
        total = {k: total[k] + c[k] for k in total}
    return total


def dump_line_story(input_id: str, line: bytes, *, source: str, license: str) -> list[RawStory] | Drop:
    return one(json_line_to_raw(input_id, line, source=source, license=license))


def dump_file_story(input_id: str, data: bytes, *, source: str, license: str) -> list[RawStory] | Drop:
    return one(text_file_to_raw(input_id, data, source=source, license=license))


def clean_story(raw: RawStory, config: CleanConfig) -> list[Story] | Drop:
    return one(to_story(raw, config))


class Keyed(NamedTuple):
    """A cleaned story ready to be parked: its DedupKey and the story pickled. Made where the
    story is cleaned (a pool worker, in a local run), so the job's process only writes the
    bytes and never decodes or encodes the text itself."""

    key: DedupKey
    pickled: bytes


def keyed(story: Story, near: NearDupConfig) -> Keyed:
    return Keyed(dedup_key(story, near), pickle.dumps(story, protocol=pickle.HIGHEST_PROTOCOL))


def clean_and_key(raw: RawStory, config: CleanConfig, near: NearDupConfig) -> list[Keyed] | Drop:
    """`clean_story`, each story then `keyed` (its MinHash and pickle made here, once)."""
    story = to_story(raw, config)
    return story if isinstance(story, Drop) else [keyed(story, near)]


class LineCleaned(NamedTuple):
    """A dump line's story with the clean stage's outcome for it (a list of `Keyed`, or its
    Drop), made where the line was parsed (`dump_line_cleaned`)."""

    input_id: str
    cleaned: list | Drop


def dump_line_cleaned(clean, outcome):
    """The dump_lines stage that also cleans and keys the story it parses: (input_id, line) ->
    [LineCleaned] or the line's Drop. `clean(raw)` is the clean stage's step and `outcome(step,
    raw)` the engine's (pipelines.engine.pool_worker.outcome: outputs as a list, Drop, an
    exception as an `internal_error` Drop), so the clean outcome is the one its own stage would
    have made. A line then crosses to a pool worker as its bytes, once."""

    def fn(element, *, source: str, license: str):
        raw = json_line_to_raw(*element, source=source, license=license)
        if isinstance(raw, Drop):
            return raw
        return [LineCleaned(raw.input_id, outcome(clean, raw))]

    return fn


def line_clean_outcome(line: LineCleaned) -> list | Drop:
    """The clean stage's step over a LineCleaned: the outcome `dump_line_cleaned` made."""
    return line.cleaned


def load_jieba() -> None:
    """Load jieba's dictionary once per worker (Stage setup), not on the first record."""
    get_tokenizer("jieba").tokens("")


def node(story: Story) -> Node:
    """The story as a cluster member; its exact duplicates travel in `members`."""
    return Node(story.url, story.input_id, story.story_id, tuple(story.cluster_members or (story.input_id,)))


def dedup_key(story: Story, config: NearDupConfig) -> DedupKey:
    return DedupKey(node(story), exact_duplicate_key(story.text), tuple(band_keys(story.text, config)))


def keep_first_key(group: tuple[str, Iterable[tuple[DedupKey, Any]]]) -> list[tuple[str, list | Drop]]:
    """Stories with the same cleaned text, as (DedupKey, spill location) pairs: the smallest
    (url, input_id) stays, with its location, its node listing every member's input_id; the
    others are `exact_duplicate` rejects."""
    _, pairs = group
    decisions = keep_first(
        pairs,
        order=lambda pair: pair[0].node,
        input_id=lambda pair: pair[0].node.input_id,
        reason="exact_duplicate",
        detail=lambda first: f"same text as {first[0].node.input_id}",
    )
    members = tuple(sorted(input_id for input_id, _ in decisions))
    first_id, [(first, loc)] = decisions[0]
    return [(first_id, [(first._replace(node=first.node._replace(members=members)), loc)])] + decisions[1:]


TEXT_PARTS = 64  # partitions of the text hashes: what the exact-duplicate shuffle is keyed by


def id_entries(keyed: Keyed) -> list[tuple[str, tuple[str, str, str]]]:
    """(story_id, (url, input_id, text hash)) of a cleaned story: what finds a repeated id
    (`annotators.core.dedup.repeated_id_pairs`, in the exact-duplicate rule's order). A
    story id is a hash of the source and the given id or URL: two dumps numbering their
    stories alike, or two crawls of a page that changed, give one id to different stories."""
    node = keyed.key.node
    return [(node.story_id, (node.url, node.input_id, keyed.key.text_key))]


def unique_id(story: Story, repeated: Mapping) -> list[Story] | Drop:
    """A kept story, or `duplicate_id` when an earlier input has its story id
    (`id_entries`): every row of the stories table has its own id."""
    first = keeper_of(repeated, story.input_id, lambda: exact_duplicate_key(story.text))
    if first is None:
        return [story]
    return Drop(
        "duplicate_id", f"story_id {story.story_id} (its source and id or URL) is also {first}'s, which keeps it"
    )


def text_part(key: DedupKey, parts: int = TEXT_PARTS) -> int:
    """The partition of a story's text hash (hex SHA-256): exact duplicates share it."""
    return int(key.text_key[-6:], 16) % parts


def keep_first_part(group: tuple[int, Iterable[Iterable[tuple[DedupKey, Any]]]]) -> list[tuple[str, list | Drop]]:
    """`keep_first_key` over every text of one partition, given as the blocks of (DedupKey,
    location) pairs each bundle sent it; texts in hash order."""
    _, blocks = group
    by_text: dict[str, list] = {}
    for block in blocks:
        for pair in block:
            by_text.setdefault(pair[0].text_key, []).append(pair)
    out: list[tuple[str, list | Drop]] = []
    for text_key in sorted(by_text):
        out.extend(keep_first_key((text_key, by_text[text_key])))
    return out


def keep_first_packed(group: tuple[int, Iterable[bytes]]) -> list[tuple[str, list | Drop]]:
    """`keep_first_part` over one partition's blocks as they travel: each a pickled list of
    (DedupKey, spill location) pairs (the engine's packed blocks)."""
    part, blobs = group
    return keep_first_part((part, [pickle.loads(blob) for blob in blobs]))


def survivor_blocks(
    outputs: list, park: Callable[[list[bytes]], list] | None = None
) -> list[tuple[Any, dict[int, Any]]]:
    """A partition's surviving (DedupKey, spill location) pairs as they travel on (the merge
    of the exact_dedup stage, where the partition was decided): one packed block of them (a
    pickled list), and the (band key, input id) pair of every LSH band of theirs, packed per
    band partition (`lsh_sets.band_part`), for the band shuffle to carry as they are. With
    `park` (blocks -> a reference to each, e.g. where it was written on disk), the references
    travel instead of the blocks."""
    bands: dict[int, list[tuple[str, str]]] = {}
    for key, _ in outputs:
        input_id = key.node.input_id
        for band in key.bands:
            bands.setdefault(band_part(band), []).append((band, input_id))
    parts = sorted(bands)
    blobs = [pickle.dumps(outputs, protocol=pickle.HIGHEST_PROTOCOL)]
    blobs += [pickle.dumps(bands[part], protocol=pickle.HIGHEST_PROTOCOL) for part in parts]
    refs = blobs if park is None else park(blobs)
    return [(refs[0], dict(zip(parts, refs[1:])))]


def packed_partition_sets(
    part: tuple[int, Iterable[list[Any]]], read: Callable[[Any], bytes] | None = None
) -> list[tuple[str, ...]]:
    """`lsh_sets.partition_id_sets` of one band partition, given as the lists of packed
    blocks (`survivor_blocks`) each bundle gathered for it (with `read`, the references to
    them that `read` turns into their bytes)."""
    return partition_id_sets(pickle.loads(ref if read is None else read(ref)) for refs in part[1] for ref in refs)


def rejoin_decided(group: tuple[str, Iterable[bytes]], *, read, outcome) -> list[tuple[str, list | Drop]]:
    """The near_dedup stage over one spill file: `(path, packed blocks of the Decisions of its
    stories)` -> `(input_id, [story] | Drop)` per story, in file order: the file is read once
    (`read(path)` gives its bytes), each story rejoins its members and its cluster
    (`with_members`, then `near_decision`, whose exception is that story's reject through the
    engine's `outcome`)."""
    path, blobs = group
    decisions = {d.loc: d for blob in blobs for d in pickle.loads(blob)}
    data = read(path)
    out = []
    for loc in sorted(decisions):
        decision = decisions[loc]
        story = with_members(pickle.loads(data[loc.offset : loc.offset + loc.length]), decision.members)
        out.append((story.input_id, outcome(near_decision, ClusterJoin(story.story_id, [story], decision.assignments))))
    return out


def with_members(story: Story, members: tuple[str, ...]) -> Story:
    """The story standing for `members` (itself and its exact duplicates)."""
    return dataclasses.replace(
        story, cluster_members=members, cluster_size=len(members), cluster_id=cluster_id(members)
    )


def near_decision(join: ClusterJoin) -> list[Story] | Drop:
    """A story outside multi-story clusters is kept; in one, only the representative is."""
    story = join.stories[0]
    if not join.assignments:
        return [story]
    a = join.assignments[0]
    if a.representative.story_id != story.story_id:
        return Drop(
            "near_duplicate",
            f"of {a.representative.input_id} (jaccard with it {a.best_score:.3f}, cluster of {a.cluster_size})",
        )
    return [dataclasses.replace(story, cluster_id=a.cluster_id, cluster_size=len(a.members), cluster_members=a.members)]


def with_singleton_cluster(story: Story) -> Story:
    """A story no other matched is its own cluster of one."""
    if story.cluster_id:
        return story
    return dataclasses.replace(
        story, cluster_id=cluster_id([story.input_id]), cluster_size=1, cluster_members=(story.input_id,)
    )


def cluster_info(story: Story) -> dict:
    """The card's and stats.json's entry for a kept story that stands for others."""
    return {"representative": story.input_id, "members": list(story.cluster_members)}


def component_decisions(component: tuple, config: NearDupConfig) -> list[Decision]:
    """The Decision of every member of one candidate component, given (component key, each
    member's (node, its pickled Story as spilled), each member's (node, band keys), each
    member's (story_id, location, members)): the texts are unpickled and the candidate sets
    rebuilt here (a pool worker, in a local run), and each member gets its assignments from
    `component_member_assignments` (none: it matched no one)."""
    key, pickled, bands, members = component
    texts = [BandMember(node, pickle.loads(blob).text) for node, blob in pickled]
    assigned: dict[str, list] = {}
    for story_id, a in component_member_assignments((key, texts, member_band_sets(bands)), config):
        assigned.setdefault(story_id, []).append(a)
    return [Decision(loc, ids, assigned.get(story_id, [])) for story_id, loc, ids in members]


def packed_component_decisions(
    group: tuple[str, Iterable[Any]], config: NearDupConfig, read_pickles: Callable[[Iterable[Any]], dict]
) -> list[Decision]:
    """`component_decisions` of one candidate component as it travels: (component key, the
    locations of packed blocks of its members' ComponentMember: node, spill location, band
    keys). The blocks and then the members' stories are read back here
    (`read_pickles(locations)` -> {location: bytes}), where they are decided (a pool worker,
    in a local run), so the job's process never holds them."""
    key, refs = group
    members = sorted(m for blob in read_pickles(refs).values() for m in pickle.loads(blob))
    pickled = read_pickles(m.loc for m in members)
    return component_decisions(
        (
            key,
            [(m.node, pickled[m.loc]) for m in members],
            [(m.node, m.bands) for m in members],
            [(m.node.story_id, m.loc, m.node.members) for m in members],
        ),
        config,
    )


def component_member_assignments(component: tuple, config: NearDupConfig) -> list[tuple[str, Assignment]]:
    """(story_id, Assignment) of every member of one candidate component's clusters, given
    (component key, its BandMembers with their texts, its candidate sets): pairs that share a
    band are verified and clustered (a pair already joined is not checked again) and each
    member is scored against its representative."""
    key, members, sets = component
    found = component_clusters((key, {"member": members, "sets": [sets]}), config, connected_only=True)
    return [(story_id, a.for_member(story_id)) for story_id, a in scored_against_representative(found, members, config)]
