"""Exact and near-duplicate stories: MinHash LSH band keys, verified pairs, stable clusters.

The same story is often posted on several sites or at several URLs of one site, sometimes
with a character changed (SPEC "Crawl and clean"; LOT's split must keep near-duplicates
together). Each story is shingled into character n-grams; a datasketch MinHash gives
`num_perm` values, cut into LSH bands (b bands of r rows, chosen as datasketch's
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
import os
import warnings
from typing import Iterable, NamedTuple

import numpy as np

from annotators.core.ids import stable_hash, stable_id


@dataclasses.dataclass(frozen=True)
class NearDupConfig:
    """Not in the LOT paper; text-dedup style defaults."""

    threshold: float = dataclasses.field(default=0.8, metadata={
        "help": "Jaccard of character shingles that makes two stories near-duplicates"})
    num_perm: int = dataclasses.field(default=128, metadata={"help": "MinHash permutations"})
    shingle: int = dataclasses.field(default=5, metadata={"help": "characters per shingle"})
    seed: int = dataclasses.field(default=1, metadata={"help": "MinHash permutation seed"})
    # oph by default: on 20,000 distinct stories the stories job keeps and rejects exactly the
    # same stories with either sketch (candidates are confirmed by exact Jaccard) at 55% of the CPU
    sketch: str = dataclasses.field(default="oph", metadata={
        "help": "oph: one-permutation hashing with densification (one hash pass, native code when "
                "built, about 12x faster); datasketch: its MinHash (num_perm SHA-1-seeded permutations)",
        "choices": ("oph", "datasketch")})


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


def shingles(text: str, n: int) -> set[str]:
    """Character n-grams of the text without whitespace (the whole text if shorter)."""
    chars = "".join(text.split())
    if len(chars) <= n:
        return {chars} if chars else set()
    return {chars[i:i + n] for i in range(len(chars) - n + 1)}


def jaccard(a: set[str], b: set[str]) -> float:
    """|a & b| / |a | b| (1.0 for two empty sets); the union's size is counted, not built."""
    if not (a or b):
        return 1.0
    common = len(a & b) if len(a) <= len(b) else len(b & a)
    return common / (len(a) + len(b) - common)


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
    return [f"{i:03d}-{hashlib.blake2b(data[i * r * 8:(i + 1) * r * 8], digest_size=12).hexdigest()}"
            for i in range(b)]


_U = np.uint64
_MIX = (_U(0x9E3779B97F4A7C15), _U(0xBF58476D1CE4E5B9), _U(0x94D049BB133111EB))


def _mix(h: np.ndarray, seed: int) -> np.ndarray:
    """A 64-bit finaliser (splitmix64) of `h` xor the seed: every bit depends on every bit."""
    with np.errstate(over="ignore"):
        h = (h ^ _U(seed & 0xFFFFFFFFFFFFFFFF)) + _MIX[0]
        h = (h ^ (h >> _U(30))) * _MIX[1]
        h = (h ^ (h >> _U(27))) * _MIX[2]
        return h ^ (h >> _U(31))


def oph_signature(text: str, n: int, bins: int, seed: int = 1) -> np.ndarray:
    """A one-permutation MinHash signature of the text's character n-grams (whitespace
    removed, as `shingles`): each n-gram is hashed once to 64 bits; the top bits pick one of
    `bins` (a power of two) bins and each bin keeps its smallest hash; an empty bin borrows
    the next non-empty bin's value to its right (circularly) plus its distance, the rotation
    densification of Shrivastava & Li (2014). Two texts' bins agree with probability close
    to their shingle Jaccard, as `bins` permutations would, at the cost of one hash pass."""
    chars = "".join(text.split())
    return oph_of_codes(np.frombuffer(chars.encode("utf-32-le"), dtype="<u4").astype(np.uint64), n, bins, seed)


_OPH_CANARIES = ("", "a", "abcd", "abcde", "x" * 300, "一个星期天的上午，小狗熊和小熊菲菲带着皮球来到森林公园。",
                 "\U0001d518\U0001d52b text \U0001f600 " * 4, "春眠不觉晓处处闻啼鸟" * 40)
_native_oph_checked: dict = {}


def _native_oph(n: int, bins: int, seed: int):
    """The C `oph` of annotators.text._zhcut, once it equals `oph_signature` on the canaries
    for these parameters; else None (not built, STORYBENCH_ZH_NATIVE=0, or a difference,
    which is warned about)."""
    key = (n, bins, seed)
    if key not in _native_oph_checked:
        fn = None
        if os.environ.get("STORYBENCH_ZH_NATIVE", "1") != "0":
            try:
                from annotators.text._zhcut import oph as fn
            except ImportError:
                fn = None
        if fn is not None and bins > 0 and not bins & (bins - 1):
            for text in _OPH_CANARIES:
                want = oph_signature(text, n, bins, seed).astype("<u8").tobytes()
                if fn("".join(text.split()), n, bins, seed & 0xFFFFFFFFFFFFFFFF) != want:
                    warnings.warn("the native one-permutation hash differs from the numpy one; "
                                  "using numpy", RuntimeWarning)
                    fn = None
                    break
        _native_oph_checked[key] = fn
    return _native_oph_checked[key]


def oph_bytes(text: str, n: int, bins: int, seed: int = 1) -> bytes:
    """`oph_signature` as little-endian bytes (what band keys hash), from the native module
    when it is built and proven equal, about 9x faster."""
    fn = _native_oph(n, bins, seed)
    if fn is not None:
        return fn("".join(text.split()), n, bins, seed & 0xFFFFFFFFFFFFFFFF)
    return oph_signature(text, n, bins, seed).astype("<u8").tobytes()


_native_shingles_checked: dict = {}
_COMMON_KEYS: list = []  # [common_keys] once a native shingle set passed its check


def _native_shingles(n: int):
    """(shingle_keys, common_keys) of annotators.text._zhcut for n-grams (n <= 6), once their
    set sizes and shared counts equal `shingles`' on every pair of canaries; else None (not
    built, STORYBENCH_ZH_NATIVE=0, n > 6, or a difference, which is warned about)."""
    if n not in _native_shingles_checked:
        fns = None
        if os.environ.get("STORYBENCH_ZH_NATIVE", "1") != "0" and 1 <= n <= 6:
            try:
                from annotators.text._zhcut import common_keys, shingle_keys
                fns = (shingle_keys, common_keys)
            except ImportError:
                fns = None
        if fns is not None:
            texts = _OPH_CANARIES + tuple(t[::-1] for t in _OPH_CANARIES) + ("一个星期天", "ab\x00cd", "ab\x00cde")
            made = [(shingles(t, n), fns[0]("".join(t.split()), n)) for t in texts]
            if any(len(keys) != 16 * len(grams) or fns[1](keys, other) != len(grams & other_grams)
                   for grams, keys in made for other_grams, other in made):
                warnings.warn("the native shingle sets differ from the Python ones; using Python", RuntimeWarning)
                fns = None
            else:
                _COMMON_KEYS[:] = [fns[1]]
        _native_shingles_checked[n] = fns
    return _native_shingles_checked[n]


def shingle_set(text: str, n: int):
    """`shingles(text, n)` in its fastest proven form, for `shingle_jaccard`: the native
    module's sorted shingle keys (bytes, exact: a key is the shingle's code points) when it is
    built and proven equal, else the set itself."""
    fns = _native_shingles(n)
    if fns is None:
        return shingles(text, n)
    return fns[0]("".join(text.split()), n)


def shingle_jaccard(a, b) -> float:
    """`jaccard` of two `shingle_set`s (the same counts, so the same float)."""
    if isinstance(a, bytes):
        la, lb = len(a) >> 4, len(b) >> 4
        if not (la or lb):
            return 1.0
        common = _COMMON_KEYS[0](a, b)  # bytes only come from a module that passed its check
        return common / (la + lb - common)
    return jaccard(a, b)


def oph_of_codes(codes: np.ndarray, n: int, bins: int, seed: int = 1) -> np.ndarray:
    """`oph_signature` over any sequence of 64-bit codes (characters, word ids): a shingle
    is `n` consecutive codes."""
    if bins & (bins - 1):
        raise ValueError(f"oph needs a power-of-two number of bins, not {bins}")
    codes = np.asarray(codes, dtype=np.uint64)
    m = len(codes) - n + 1
    with np.errstate(over="ignore"):
        if m < 1:  # shorter than one shingle: the whole text is the one shingle
            m, n = (1, len(codes)) if len(codes) else (1, 0)
        h = np.zeros(m, dtype=np.uint64)
        for j in range(n):
            h = h * _U(1000003) + codes[j:m + j]
    h = np.sort(_mix(h, seed))  # duplicates do no harm: each bin takes its first (smallest)
    shift = _U(64 - bins.bit_length() + 1)
    starts = np.arange(bins, dtype=np.uint64) << shift
    first = np.searchsorted(h, starts)
    value = h[np.minimum(first, len(h) - 1)]
    full = (first < len(h)) & ((value >> shift) == np.arange(bins, dtype=np.uint64))
    if not full.all():
        filled = np.flatnonzero(full)
        nxt = np.searchsorted(filled, np.arange(bins))
        wrap = nxt == len(filled)
        donor = filled[np.where(wrap, 0, nxt)]
        distance = (np.where(wrap, donor + bins, donor) - np.arange(bins)).astype(np.uint64)
        with np.errstate(over="ignore"):
            value = np.where(full, value, value[donor] + distance * _U(0x9E3779B97F4A7C15))
    return value


def verified_pairs(members: Iterable[tuple[Node, str]], config: NearDupConfig = NearDupConfig()
                   ) -> list[Pair]:
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


def candidate_components(sets: Iterable[tuple[Node, ...]]) -> dict[str, tuple[tuple[str, ...], list]]:
    """Candidate sets (band groups) that share a story, joined: component key -> (its stories'
    input_ids, sorted; its candidate sets, sorted). Each candidate story's text then goes to
    one component, however many band groups it is in."""
    sets = sorted(set(sets))
    component = id_components(tuple(n.input_id for n in members) for members in sets)
    out: dict[str, tuple[list[str], list]] = {}
    for members in sets:
        ids, member_sets = out.setdefault(component[members[0].input_id], ([], []))
        ids.extend(n.input_id for n in members)
        member_sets.append(members)
    return {key: (tuple(sorted(set(ids))), member_sets) for key, (ids, member_sets) in out.items()}


def component_pairs(members: Iterable[tuple[Node, str]], sets: Iterable[tuple[Node, ...]],
                    config: NearDupConfig = NearDupConfig(), *, connected_only: bool = False) -> list[Pair]:
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

    def for_member(self, story_id: str) -> "Assignment":
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


def band_nodes(key: DedupKey) -> list[tuple[str, Node]]:
    """(LSH band key, node) for every band of the story's MinHash."""
    return [(band, key.node) for band in key.bands]


def candidate_set(group: tuple[str, Iterable[Node]]) -> list[tuple[str, tuple[Node, ...]]]:
    """The distinct nodes of one band group, when two or more, keyed by a hash of them: the
    same set from several bands is verified once."""
    _, nodes = group
    members = tuple(sorted(set(nodes)))
    if len(members) < 2:
        return []
    return [(stable_hash("candidates", *[n.input_id for n in members]), members)]


def components(sets: Iterable[tuple[str, tuple[Node, ...]]]) -> list[tuple[str, tuple[tuple[str, ...], list]]]:
    """(component key, (input_ids, candidate sets)) of the candidate sets joined where they
    share a story (near_dup.candidate_components), sorted by key."""
    return sorted(candidate_components(members for _, members in sets).items())


def component_clusters(group: tuple[str, dict], config: NearDupConfig, *, connected_only: bool = False
                       ) -> list[tuple[str, Assignment]]:
    """(story_id, Assignment) of every member of a multi-story cluster within one candidate
    component ({"member": BandMembers, "sets": [its candidate sets]}), sorted by story_id.

    A verified pair shares a band group, so it lies inside one component: the clusters
    (connected components of verified pairs) are found per component, and no list of every
    pair of the corpus is ever gathered in one place."""
    _, joined = group
    sets = [s for listed in joined["sets"] for s in listed]
    return sorted(clusters(component_pairs(joined["member"], sets, config, connected_only=connected_only)).items())


def scored_against_representative(assignments: list[tuple[str, Assignment]], members: Iterable[tuple[Node, str]],
                                  config: NearDupConfig = NearDupConfig()) -> list[tuple[str, Assignment]]:
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


def member_clusters(members: Iterable[tuple[Node, str]], config: NearDupConfig = NearDupConfig()
                    ) -> list[tuple[str, str, tuple[str, ...]]]:
    """(cluster_id, representative's story_id, member story_ids) of every multi-story cluster
    among one component's (node, text) members, one tuple per cluster: the stories sharing a
    band are verified pair by pair (exact shingle Jaccard, `connected_only`), as
    `component_clusters` does with candidate sets gathered globally; here the band groups
    are rebuilt from the members' own band keys."""
    members = sorted(((node, text, band_keys(text, config)) for node, text in members), key=lambda m: m[0])
    by_band: dict[str, list[Node]] = {}
    for node, _, bands in members:
        for band in bands:
            by_band.setdefault(band, []).append(node)
    sets = sorted({tuple(sorted(set(nodes))) for nodes in by_band.values() if len(set(nodes)) > 1})
    pairs = component_pairs([(node, text) for node, text, _ in members], sets, config, connected_only=True)
    found: dict[str, tuple[str, list[str]]] = {}
    for story_id, a in sorted(clusters(pairs).items()):
        found.setdefault(a.cluster_id, (a.representative.story_id, []))[1].append(story_id)
    return sorted((cluster, rep, tuple(ids)) for cluster, (rep, ids) in found.items())
