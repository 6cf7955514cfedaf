"""Exact and near-duplicate stories: MinHash LSH band keys, verified pairs, stable clusters.

The same story is often posted on several sites or at several URLs of one site, sometimes
with a character changed (SPEC "Crawl and clean"; LOT's split must keep near-duplicates
together). Each story is shingled into character n-grams; a MinHash sketch (one-permutation
hashing in numpy, annotators.core.shingles, or datasketch's MinHash) gives `num_perm` values,
cut into LSH bands (b bands of r rows, chosen as datasketch's
MinHashLSH chooses them for `threshold`). Stories sharing any band are candidates; a candidate pair is
an edge only when the exact Jaccard similarity of the shingle sets is >= `threshold`, so
LSH never merges stories by chance. Clusters are connected components of the edges; the
representative is the member with the smallest (url, input_id), a rule independent of
arrival order. Members are `Node`s, so a cluster can be computed without the texts.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

from annotators.core.ids import stable_hash, stable_id
from annotators.core.lsh_sets import member_band_sets
from annotators.core.shingles import (  # noqa: F401
    jaccard,
    oph_bytes,
    oph_of_codes,
    oph_signature,
    shingle_jaccard,
    shingle_set,
    shingles,
)


@dataclasses.dataclass(frozen=True)
class NearDupConfig:
    """Not in the LOT paper; text-dedup style defaults."""

    threshold: float = dataclasses.field(
        default=0.8, metadata={"help": "Jaccard of character shingles that makes two stories near-duplicates"}
    )
    num_perm: int = dataclasses.field(default=128, metadata={"help": "MinHash permutations"})
    shingle: int = dataclasses.field(default=5, metadata={"help": "characters per shingle"})
    seed: int = dataclasses.field(default=1, metadata={"help": "MinHash permutation seed"})
    # oph by default: on 20,000 distinct stories the stories job keeps and rejects exactly the
    # same stories with either sketch (candidates are confirmed by exact Jaccard) at 55% of the CPU
    sketch: str = dataclasses.field(
        default="oph",
        metadata={
            "help": "oph: one-permutation hashing with densification (one numpy hash pass per story); "
            "datasketch: its MinHash (num_perm SHA-1-seeded permutations)",
            "choices": ("oph", "datasketch"),
        },
    )


class Node(NamedTuple):
    """A story as a cluster member; tuple order is the representative rule."""

    url: str
    input_id: str
    story_id: str
    members: tuple[str, ...]  # input_ids the story already stands for (its exact duplicates)


class BandMember(NamedTuple):
    """A story in one LSH band group: its cluster node and its text (to verify a pair)."""

    node: Node
    text: str


class Pair(NamedTuple):
    """A verified near-duplicate pair: `a` < `b`, and their exact shingle Jaccard."""

    a: Node
    b: Node
    jaccard: float


def exact_duplicate_key(text: str) -> str:
    """Exact-duplicate key: a SHA-256 of the cleaned text (`stable_hash("text", text)`)."""
    return stable_hash("text", text)


@functools.lru_cache(maxsize=16)
def bands_rows(threshold: float, num_perm: int) -> tuple[int, int]:
    """(b, r) that datasketch's MinHashLSH picks for this threshold and permutation count: of
    every b bands of r rows (b * r <= num_perm), the one with the least false-positive plus
    false-negative probability (weights 0.5 and 0.5), the first found on a tie, b then r
    ascending. The two probabilities are integrals of polynomials of degree b * r over
    [0, threshold] and [threshold, 1], which Gauss-Legendre quadrature with num_perm // 2 + 2
    points gives exactly (datasketch uses scipy's adaptive quad; tests check the choices are
    the same) without importing datasketch and scipy (~0.5 s per process). One band (b < 2)
    is refused, as MinHashLSH refuses it."""
    from numpy.polynomial.legendre import leggauss

    if not 0.0 <= threshold <= 1.0:  # MinHashLSH's own checks, with its words
        raise ValueError(f"threshold must be in [0.0, 1.0], not {threshold}")
    if num_perm < 2:
        raise ValueError(f"Too few permutation functions ({num_perm})")
    x, w = leggauss(num_perm // 2 + 2)
    below = (threshold / 2 * (x + 1), w * threshold / 2)
    above = (threshold + (1 - threshold) / 2 * (x + 1), w * (1 - threshold) / 2)
    best, chosen = float("inf"), (0, 0)
    for b in range(1, num_perm + 1):
        for r in range(1, num_perm // b + 1):
            false_pos = float(np.dot(below[1], 1 - (1 - below[0] ** float(r)) ** float(b)))
            false_neg = float(np.dot(above[1], (1 - above[0] ** float(r)) ** float(b)))
            error = false_pos * 0.5 + false_neg * 0.5
            if error < best:
                best, chosen = error, (b, r)
    if chosen[0] < 2:  # as MinHashLSH refuses it
        raise ValueError(f"the number of bands is too small (b < 2) for threshold {threshold}")
    return chosen


def band_keys(text: str, config: NearDupConfig = NearDupConfig()) -> list[str]:
    """One key per LSH band: stories sharing a key are near-duplicate candidates."""
    if config.sketch == "oph":
        data = oph_bytes(text, config.shingle, config.num_perm, config.seed)
    else:
        from datasketch import MinHash

        grams = shingles(text, config.shingle)
        mh = MinHash(num_perm=config.num_perm, seed=config.seed)
        mh.update_batch([g.encode("utf-8") for g in sorted(grams)])
        data = np.asarray(mh.hashvalues, dtype="<u8").tobytes()
    b, r = bands_rows(config.threshold, config.num_perm)
    return [
        f"{i:03d}-{hashlib.blake2b(data[i * r * 8 : (i + 1) * r * 8], digest_size=12).hexdigest()}" for i in range(b)
    ]


def verified_pairs(members: Iterable[tuple[Node, str]], config: NearDupConfig = NearDupConfig()) -> list[Pair]:
    """Pairs of one band group (BandMembers) whose exact shingle Jaccard reaches the threshold, sorted."""
    ordered = sorted((BandMember(*m) for m in members), key=lambda m: m.node)
    sets = [shingle_set(m.text, config.shingle) for m in ordered]
    pairs = []
    for i in range(len(ordered)):
        for j in range(i + 1, len(ordered)):
            if ordered[i].node == ordered[j].node:
                continue
            score = shingle_jaccard(sets[i], sets[j])
            if score >= config.threshold:
                pairs.append(Pair(ordered[i].node, ordered[j].node, round(score, 6)))
    return pairs


def _root(parent: dict, x):
    """The root of `x` in a union-find forest (`parent`; a new item is its own root), halving
    the path on the way."""
    while parent.setdefault(x, x) != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


def component_pairs(
    members: Iterable[tuple[Node, str]],
    sets: Iterable[tuple[Node, ...]],
    config: NearDupConfig = NearDupConfig(),
    *,
    connected_only: bool = False,
) -> list[Pair]:
    """`verified_pairs` of every candidate set of one component, each pair checked once and
    each story's shingles made once: the pairs of stories that share a band group whose exact
    shingle Jaccard reaches the threshold, sorted.

    With `connected_only`, a pair already joined through verified pairs is not checked: the
    clusters (connected components) come out the same with about one check per member
    instead of one per pair (a hundred copies of a story: 99 checks, not 4,950), but a
    member's best score is then over the edges checked only."""
    texts = {m.node: m.text for m in (BandMember(*m) for m in members)}
    grams: dict = {}  # Node -> shingle_set
    seen, pairs = set(), []
    parent: dict[Node, Node] = {}
    for group in sets:
        ordered = sorted(n for n in set(group) if n in texts)
        left = len({_root(parent, n) for n in ordered}) if connected_only else 0
        if connected_only and left < 2:
            continue  # every member already joined: nothing this set could add
        for i in range(len(ordered)):
            if connected_only and left < 2:
                break  # the set became one component: every later pair is joined already
            for j in range(i + 1, len(ordered)):
                a, b = ordered[i], ordered[j]
                if connected_only:
                    # a joined pair stays joined, so it is never checked (nor remembered)
                    ra, rb = _root(parent, a), _root(parent, b)
                    if ra == rb:
                        continue
                if (a, b) in seen:
                    continue
                seen.add((a, b))
                for node in (a, b):
                    if node not in grams:
                        grams[node] = shingle_set(texts[node], config.shingle)
                score = shingle_jaccard(grams[a], grams[b])
                if score >= config.threshold:
                    pairs.append(Pair(a, b, round(score, 6)))
                    if connected_only:
                        parent[max(ra, rb)] = min(ra, rb)
                        left -= 1  # two of the set's components became one
                        if left < 2:
                            break
    return sorted(pairs)


@dataclasses.dataclass(frozen=True)
class Assignment:
    """Where one member of a multi-story cluster goes."""

    representative: Node
    cluster_id: str
    members: tuple[str, ...]  # every input_id the cluster stands for, sorted (see `for_member`)
    best_score: float  # highest Jaccard of this member's edges
    size: int | None = None  # len(members), kept when `for_member` drops them

    @property
    def cluster_size(self) -> int:
        return len(self.members) if self.size is None else self.size

    def for_member(self, story_id: str) -> Assignment:
        """What a member needs to hear: the representative keeps the member list, every other
        member only its length (a cluster of n members would otherwise carry n * n ids)."""
        if story_id == self.representative.story_id:
            return self
        return dataclasses.replace(self, members=(), size=self.cluster_size)


def clusters(edges: Iterable[tuple[Node, Node, float]]) -> dict[str, Assignment]:
    """Connected components of the edges -> story_id: Assignment (only multi-story clusters)."""
    parent: dict[Node, Node] = {}
    best: dict[Node, float] = {}

    def find(node: Node) -> Node:
        return _root(parent, node)

    for a, b, score in sorted(edges):
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)  # the root is always the component's smallest node
        best[a], best[b] = max(best.get(a, 0.0), score), max(best.get(b, 0.0), score)
    groups: dict[Node, list[Node]] = {}
    for node in sorted(parent):
        groups.setdefault(find(node), []).append(node)
    out: dict[str, Assignment] = {}
    for root, nodes in groups.items():
        members = tuple(sorted({m for n in nodes for m in n.members}))
        cluster = cluster_id(members)
        for node in nodes:
            out[node.story_id] = Assignment(root, cluster, members, best.get(node, 0.0))
    return out


def cluster_id(members: Iterable[str]) -> str:
    return stable_id("cluster", *sorted(members))


class DedupKey(NamedTuple):
    """What deduplication shuffles instead of a story: its cluster node, the SHA-256 of its
    cleaned text and its LSH band keys (the MinHash is computed once, here)."""

    node: Node
    text_key: str
    bands: tuple[str, ...]


def component_clusters(
    group: tuple[str, dict], config: NearDupConfig, *, connected_only: bool = False
) -> list[tuple[str, Assignment]]:
    """(story_id, Assignment) of every member of a multi-story cluster within one candidate
    component ({"member": BandMembers, "sets": [its candidate sets]}), sorted by story_id.

    A verified pair shares a band group, so it lies inside one component: the clusters
    (connected components of verified pairs) are found per component, and no list of every
    pair of the corpus is ever gathered in one place."""
    _, joined = group
    sets = [s for listed in joined["sets"] for s in listed]
    return sorted(clusters(component_pairs(joined["member"], sets, config, connected_only=connected_only)).items())


def scored_against_representative(
    assignments: list[tuple[str, Assignment]],
    members: Iterable[tuple[Node, str]],
    config: NearDupConfig = NearDupConfig(),
) -> list[tuple[str, Assignment]]:
    """The assignments of `component_clusters(..., connected_only=True)` with each member's
    `best_score` set to its exact shingle Jaccard with its cluster's representative (1.0 for
    the representative): one check per member, where the best score over every pair that
    shares a band needs every such pair checked (quadratic in a cluster's size). A member
    joined through others may score below the threshold against the representative."""
    texts = {m.node.story_id: m.text for m in (BandMember(*m) for m in members)}
    sets: dict = {}

    def grams(story_id: str):
        if story_id not in sets:
            sets[story_id] = shingle_set(texts[story_id], config.shingle)
        return sets[story_id]

    out = []
    for story_id, a in assignments:
        rep = a.representative.story_id
        score = 1.0 if story_id == rep else round(shingle_jaccard(grams(story_id), grams(rep)), 6)
        out.append((story_id, dataclasses.replace(a, best_score=score)))
    return out


def id_components(sets: Iterable[tuple[str, ...]]) -> dict[str, str]:
    """input_id -> component key for the candidate sets (input ids sharing an LSH band)
    joined where they share a story: the ids-only form of `candidate_components`, so the one
    global step holds strings, not nodes."""
    parent: dict[str, str] = {}
    for members in sorted(set(sets)):
        root = _root(parent, members[0])
        for other in members[1:]:
            r = _root(parent, other)
            if r != root:
                parent[max(root, r)] = min(root, r)
                root = min(root, r)
    groups: dict[str, list[str]] = {}
    for item in sorted(parent):
        groups.setdefault(_root(parent, item), []).append(item)
    out = {}
    for ids in groups.values():
        key = stable_hash("component", *ids)
        for item in ids:
            out[item] = key
    return out


def member_clusters(
    members: Iterable[tuple[Node, str]],
    config: NearDupConfig = NearDupConfig(),
    sets: Iterable[tuple[str, ...]] | None = None,
) -> list[tuple[str, str, tuple[str, ...]]]:
    """(cluster_id, representative's story_id, member story_ids) of every multi-story cluster
    among one component's (node, text) members, one tuple per cluster: the stories sharing a
    band are verified pair by pair (exact shingle Jaccard, `connected_only`), as
    `component_clusters` does with candidate sets gathered globally.

    `sets`: the component's candidate sets as input ids (`lsh_sets.partition_id_sets`, made
    from the band keys where the stories were first read); without them the band groups are
    rebuilt from the members' own band keys (a MinHash per member, made again). Either way
    the band groups, and so the clusters, are the same."""
    members = sorted(members, key=lambda m: m[0])
    if sets is None:
        node_sets = member_band_sets((node, band_keys(text, config)) for node, text in members)
    else:
        node_of = {node.input_id: node for node, _ in members}
        node_sets = sorted(
            {
                group
                for group in (tuple(sorted({node_of[i] for i in ids if i in node_of})) for ids in sets)
                if len(group) > 1
            }
        )
    pairs = component_pairs(members, node_sets, config, connected_only=True)
    found: dict[str, tuple[str, list[str]]] = {}
    for story_id, a in sorted(clusters(pairs).items()):
        found.setdefault(a.cluster_id, (a.representative.story_id, []))[1].append(story_id)
    return sorted((cluster, rep, tuple(ids)) for cluster, (rep, ids) in found.items())
