"""One split for the whole LOT build (no story, window or near-duplicate in two splits).

Every task used to draw its own split per story, so a story could be OutGen test and SenPos
train at once. Now a story's split is decided once, for every task:
- near-duplicate stories (MinHash LSH candidates verified by exact shingle Jaccard: the
  stories job's code, annotators.core.near_dup) form one group whose split is drawn for
  its representative (the smallest (url, input_id)), so the whole group shares it;
- a group holding a story with ClozeT annotations draws with the ClozeT weights
  (`--clozet-splits`, LOT Table 3: 644/294/294); every other group with the build's weights
  (`--splits`, default LOT Table 3's SenPos and OutGen examples together:
  21,456/1,042/1,592);
- a SenPos window has the split of the text it was cut from.
Each task then takes every story in its split: ClozeT and PlotCom val/test the annotated
groups', PlotCom train only train stories of groups with no ClozeT story, SenPos and OutGen
all. `leak_report` checks the written examples (it does not trust the construction).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import NamedTuple

from annotators.core.compact import CompactMap
from annotators.core.ids import unit_interval


class StoryGroup(NamedTuple):
    """A near-duplicate group of two or more stories, as each member sees it."""

    key: str  # the representative's story_id: the group's split is drawn for it
    cluster_id: str
    story_ids: tuple[str, ...]  # every member, sorted


def groups_from(found: Iterable[tuple[str, str, tuple[str, ...]]]) -> CompactMap:
    """story_id -> StoryGroup, from the (cluster_id, representative story_id, member
    story_ids) of every multi-story cluster (near_dup.member_clusters; stories in no such
    cluster are absent: each is its own group), as a CompactMap: every bundle of the job
    reads it as a side input."""
    out = {}
    for cluster, rep, ids in sorted(found):
        group = StoryGroup(rep, cluster, tuple(sorted(set(ids))))
        for story_id in group.story_ids:
            out[story_id] = group
    return CompactMap(out)


def split_by_weights(seed: int, key: str, weights: tuple[float, float, float]) -> str:
    """train/val/test for a key from a stable hash of (seed, key) and the weights."""
    train, val, _ = weights
    u = unit_interval(seed, "split", key) * sum(weights)
    if u < train:
        return "train"
    return "val" if u < train + val else "test"


@dataclasses.dataclass(frozen=True)
class SplitPlan:
    """How a story's one split is drawn (see the module docstring)."""

    seed: int
    weights: tuple[float, float, float]
    clozet_weights: tuple[float, float, float]

    def members(self, story_id: str, groups: dict) -> tuple[str, ...]:
        group = groups.get(story_id)
        return group.story_ids if group else (story_id,)

    def annotated(self, story_id: str, groups: dict, annotated) -> bool:
        """Whether the story's group holds a story with ClozeT annotations."""
        if not annotated:  # no annotations at all (most builds): no member can have one
            return False
        return any(m in annotated for m in self.members(story_id, groups))

    def split(self, story_id: str, groups: dict, annotated) -> str:
        group = groups.get(story_id)
        key = group.key if group else story_id
        weights = self.clozet_weights if self.annotated(story_id, groups, annotated) else self.weights
        return split_by_weights(self.seed, key, weights)


def group_key(story_id: str, groups: dict) -> str:
    """The key leaks are counted under: the near-duplicate cluster, or the story itself."""
    group = groups.get(story_id)
    return group.cluster_id if group else story_id


LEAK_COUNTS = ("stories_in_two_splits", "near_duplicate_groups_in_two_splits", "plotcom_train_clozet_stories")


def group_leaks(key: str, triples: Iterable[tuple[str, str, str]], is_group: bool) -> dict:
    """Leaks among the written examples of one group (or lone story), from its (task,
    story_id, split) triples: stories in two splits across all tasks, the group in two
    splits, PlotCom training stories of a group that holds a ClozeT story."""
    by_story: dict[str, set] = {}
    for task, story_id, split in triples:
        by_story.setdefault(story_id, set()).add((task, split))
    seen = set().union(*by_story.values()) if by_story else set()
    has_clozet = any(t == "clozet" for t, _ in seen)
    leaks = {
        "stories_in_two_splits": sorted(s for s, v in by_story.items() if len({x for _, x in v}) > 1),
        "near_duplicate_groups_in_two_splits": [key] if is_group and len({x for _, x in seen}) > 1 else [],
        "plotcom_train_clozet_stories": sorted(
            s for s, v in by_story.items() if ("plotcom", "train") in v and has_clozet
        ),
    }
    out = {name: len(ids) for name, ids in leaks.items()}
    out["examples"] = {name: ids[:10] for name, ids in leaks.items()}
    out["stories"], out["groups"] = len(by_story), int(is_group)
    return out


def keyed_group_leaks(key: str, triples: Iterable[tuple[str, str, str]], groups: dict) -> dict:
    """`group_leaks` of the triples gathered under `group_key` (a cluster id when the first
    story belongs to a near-duplicate group)."""
    triples = list(triples)
    first = groups.get(triples[0][1]) if triples else None
    return group_leaks(key, triples, first is not None and first.cluster_id == key)


def add_leaks(a: dict | None, b: dict) -> dict:
    """Two `group_leaks` summed (examples: the 10 smallest ids of each kind)."""
    if not a:
        return b
    out = {k: a[k] + b[k] for k in (*LEAK_COUNTS, "stories", "groups")}
    out["examples"] = {k: sorted(a["examples"][k] + b["examples"][k])[:10] for k in LEAK_COUNTS}
    return out


def summed_leaks(keyed: Iterable[tuple[str, tuple[str, str, str]]], groups: dict) -> dict | None:
    """`keyed_group_leaks` of every leak key of (key, (task, story_id, split)) pairs, summed in
    key order (None for no pair): the job sums one partition of the keys at a time this way."""
    by_key: dict[str, list] = {}
    for key, triple in keyed:
        by_key.setdefault(key, []).append(triple)
    total: dict | None = None
    for key in sorted(by_key):
        total = add_leaks(total, keyed_group_leaks(key, by_key[key], groups))
    return total


def leak_report(triples: Iterable[tuple[str, str, str]], groups: dict) -> dict:
    """`group_leaks` over every group of (task, story_id, split) triples, summed (the job
    does the same per partition of the groups in Beam; this is the one-process form, for
    tests and notebooks)."""
    keyed = ((group_key(triple[1], groups), triple) for triple in triples)
    return summed_leaks(keyed, groups) or group_leaks("", [], False)
