"""One split per story and near-duplicate group (annotators.lot.splits), the leak check, and
the near-duplicate clusters LOT builds them from (annotators.core.near_dup.member_clusters)."""

from __future__ import annotations

import json
import pickle

from annotators.core import lsh_sets
from annotators.core.compact import CompactMap
from annotators.core.near_dup import NearDupConfig, Node, band_keys, id_components, member_clusters
from annotators.lot import steps
from annotators.lot.splits import SplitPlan, StoryGroup, group_key, groups_from, leak_report

STORY = (
    "从前有一个小村庄，村口住着一位勤劳的老木匠。老木匠每天天不亮就起床，在院子里刨木头。"
    "村里的孩子们都喜欢围在他身边看他干活。有一年冬天，河上的木桥被大雪压断了。"
    "老木匠带着徒弟们在河边忙了整整三天。新桥修好的那天，全村的人都来桥上走了一遍。"
)
OTHER = (
    "海边住着一个叫阿海的老渔夫，他每天天不亮就划着小船出海。有一天夜里，他的网里捞上来一条浑身发着蓝光的小鱼。"
    "小鱼在网里轻轻摆着尾巴，好像在求他放了自己。阿海想了很久，还是把小鱼放回了大海。"
)
OPH = NearDupConfig(sketch="oph")


def node(name: str) -> Node:
    return Node("", f"in.jsonl:{name}", name, (f"in.jsonl:{name}",))


def test_member_clusters_group_near_copies_only():
    members = [(node("b"), STORY.replace("老木匠", "老铁匠", 1)), (node("a"), STORY), (node("c"), OTHER)]
    [(cluster, rep, ids)] = member_clusters(members, OPH)
    assert (rep, ids) == ("a", ("a", "b"))
    assert member_clusters(members[2:], OPH) == []


def test_member_clusters_from_candidate_sets_equal_rebuilt_band_groups():
    """The component's candidate sets (input ids, as the job sends them) give the clusters its
    members' own band keys give; a set member the component lacks is ignored."""
    members = [
        (node("b"), STORY.replace("老木匠", "老铁匠", 1)),
        (node("a"), STORY),
        (node("c"), OTHER),
        (node("d"), OTHER.replace("阿海", "阿山", 1)),
        (node("e"), STORY + OTHER),
    ]
    pairs = [(band, n.input_id) for n, text in members for band in band_keys(text, OPH)]
    sets = lsh_sets.partition_id_sets([pairs])
    assert sets  # the near copies share bands
    rebuilt = member_clusters(members, OPH)
    assert sorted(ids for _, _, ids in rebuilt) == [("a", "b"), ("c", "d")]
    assert member_clusters(members, OPH, sets) == rebuilt
    assert member_clusters(members, OPH, [*sets, ("in.jsonl:a", "in.jsonl:gone")]) == rebuilt
    assert member_clusters(members, OPH, []) == []  # no candidate set: nothing is verified


def test_components_and_sets_send_each_component_its_own_sets():
    ids, per = steps.components_and_sets([("2", "3"), ("1", "2"), ("4", "5"), ("1", "2")])
    assert ids == sorted(id_components([("1", "2"), ("2", "3"), ("4", "5")]).items())
    component = dict(ids)
    assert [(key, cs.sets) for key, cs in per] == sorted(
        [(component["1"], (("1", "2"), ("2", "3"))), (component["4"], (("4", "5"),))]
    )


def test_id_components_join_sets_that_share_a_story():
    comp = id_components([("1", "2"), ("2", "3"), ("4", "5"), ("1", "2")])
    assert comp["1"] == comp["2"] == comp["3"] != comp["4"] == comp["5"] and "6" not in comp


def test_a_group_takes_its_representatives_split_and_annotated_groups_use_clozet_weights():
    groups = groups_from([("cl-1", "a", ("b", "a", "c"))])
    assert groups["b"] == StoryGroup("a", "cl-1", ("a", "b", "c")) and "z" not in groups
    plan = SplitPlan(0, (1, 1, 1), (0, 0, 1))
    splits = {plan.split(s, groups, {}) for s in "abc"}
    assert len(splits) == 1  # one split for the whole group
    assert {plan.split(s, groups, {"c": [{}]}) for s in "abc"} == {"test"}  # ClozeT weights (0, 0, 1)
    assert plan.split("z", groups, {"c": [{}]}) == plan.split("z", {}, {})  # other stories unaffected
    assert group_key("b", groups) == "cl-1" and group_key("z", groups) == "z"


def test_leak_report_reads_the_written_examples():
    groups = groups_from([("cl-1", "a", ("a", "b"))])
    clean = [
        ("clozet", "a", "test"),
        ("plotcom", "a", "test"),
        ("senpos", "b", "test"),
        ("outgen", "x", "train"),
        ("plotcom", "x", "train"),
    ]
    report = leak_report(clean, groups)
    assert (
        report["stories_in_two_splits"],
        report["near_duplicate_groups_in_two_splits"],
        report["plotcom_train_clozet_stories"],
        report["stories"],
        report["groups"],
    ) == (0, 0, 0, 3, 1)
    leaky = clean + [("senpos", "x", "val"), ("outgen", "b", "train"), ("plotcom", "b", "train")]
    report = leak_report(leaky, groups)
    assert report["stories_in_two_splits"] == 2  # x (train and val), b (test and train)
    assert report["near_duplicate_groups_in_two_splits"] == 1 and report["plotcom_train_clozet_stories"] == 1
    assert report["examples"]["plotcom_train_clozet_stories"] == ["b"]


def test_leak_partitions_summed_give_the_one_process_report():
    """The job gathers each written example's triple under its leak key's partition and sums a
    report per partition (tallies.partition_leaks, then LeakSum): the same report as
    `leak_report` over every triple, whichever partitions and order the triples meet in."""
    from annotators.lot import tallies
    from annotators.lot.records import TaskRow

    groups = groups_from([("cl-1", "s0", ("s0", "s1", "s2")), ("cl-2", "s5", ("s5", "s6"))])
    splits_of = ["train", "val", "test"]
    rows = [
        TaskRow(task, {"story_id": f"s{i}", "split": splits_of[(i * 7 + k) % 3 if i % 4 else 0]}, {})
        for i in range(40)
        for k, task in enumerate(("clozet", "plotcom", "senpos", "outgen"))
        if (i + k) % 3
    ]
    entries = tallies.leak_entries(rows, groups)
    assert all(part == tallies.leak_part(key) for part, (key, _) in entries)
    for parts in (1, 3, tallies.LEAK_PARTS):
        gathered: dict = {}
        for _, (key, triple) in reversed(entries):  # arrival order must not matter
            gathered.setdefault(tallies.leak_part(key, parts), []).append((key, triple))
        fold = tallies.LeakSum()
        total = fold.create()
        for part in sorted(gathered, reverse=True):
            total = fold.add(total, tallies.partition_leaks((part, gathered[part]), groups))
        assert fold.result(total) == leak_report([tuple(t) for _, (_, t) in entries], groups)
    assert leak_report([tuple(t) for _, (_, t) in entries], groups)["stories_in_two_splits"] > 0


def test_compact_map_pickles_as_one_blob_and_reads_like_a_dict():
    data = {f"s{i}": StoryGroup("s0", "c", ("s0", f"s{i}")) for i in range(1000)}
    compact = CompactMap(data)
    again = pickle.loads(pickle.dumps(compact))
    assert again == compact and dict(again) == data and len(again) == 1000
    assert again["s7"] == data["s7"] and again.get("nope") is None and "s9" in again
    assert CompactMap(dict(reversed(list(data.items())))) == compact  # same contents, same blob
    assert len(pickle.dumps(compact)) < len(pickle.dumps(data)) / 4
    assert compact.__slots__ == ("_blob", "_digest") and not hasattr(compact, "__dict__")


def test_band_blocks_give_the_candidate_sets_of_their_bands():
    """The LOT job shuffles (band partition, [(band, input id)...]) blocks per bundle: a
    partition's candidate sets are those of its bands, wherever their pairs were gathered,
    without dropped ids and without sets of one."""
    from annotators.core.near_dup import band_keys

    config = NearDupConfig(sketch="oph")
    texts = {
        "f:1": "春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。" * 3,
        "f:2": "春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。" * 3 + "完",
        "f:3": "床前明月光，疑是地上霜。举头望明月，低头思故乡。" * 3,
        "f:4": "床前明月光，疑是地上霜。举头望明月，低头思故乡。" * 3,
    }
    pairs = [(band, i) for i, text in texts.items() for band in band_keys(text, config)]
    assert all(0 <= lsh_sets.band_part(b) < lsh_sets.BAND_PARTS for b, _ in pairs)
    blocks: dict[int, list] = {}
    for n, (band, i) in enumerate(pairs):  # as two bundles would gather them
        blocks.setdefault(lsh_sets.band_part(band), [[], []])[n % 2].append((band, i))
    found = sorted(s for part in blocks.values() for s in lsh_sets.partition_id_sets(part, CompactMap({})))
    assert ("f:1", "f:2") in found and ("f:3", "f:4") in found
    assert all(len(s) > 1 and list(s) == sorted(s) for s in found)
    dropped = CompactMap({"f:4": True})
    found = {s for part in blocks.values() for s in lsh_sets.partition_id_sets(part, dropped)}
    assert not any("f:4" in s for s in found) and not any("f:3" in s for s in found)


def test_candidate_text_parses_the_candidates_only():
    """A story no candidate set holds is not parsed (a broken line there is no error); a
    candidate comes back as its component's (node, normalised text); one a dedup dropped does not."""
    from annotators.lot.story import StoryConfig

    def line(text):
        return json.dumps({"id": "x", "story": text}, ensure_ascii=False).encode()

    components = CompactMap({"in.jsonl:1": "c1", "in.jsonl:2": "c1"})
    config = StoryConfig()
    assert steps.candidate_text(("in.jsonl:9", b"{broken"), components, CompactMap(), config) == []
    [(component, (found, text))] = steps.candidate_text(("in.jsonl:1", line(STORY)), components, CompactMap(), config)
    assert component == "c1" and found.input_id == "in.jsonl:1" and text == STORY
    dropped = CompactMap({"in.jsonl:2": True})
    assert steps.candidate_text(("in.jsonl:2", line(STORY)), components, dropped, config) == []
