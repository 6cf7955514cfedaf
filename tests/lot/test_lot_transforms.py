"""Beam tier: the lot job's composite transforms over in-memory inputs (main and rejects outputs).

Each test builds one transform on `TestPipeline(runner=FnApiRunner())` (in-process, never a
Prism download) and asserts its exact outputs; whole-job runs stay in test_lot_pipeline.py.
"""

from __future__ import annotations

import json

import apache_beam as beam
from apache_beam.runners.portability.fn_api_runner import FnApiRunner
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from annotators.lot import steps
from annotators.lot.clozet import ClozeTConfig, build_clozet, build_plotcom_train, parse_annotation, plotcom_from_clozet
from annotators.lot.config import LotRunConfig
from annotators.lot.outgen import build_outgen
from annotators.lot.records import AgreementCounts, ReviewRecord
from annotators.lot.senpos import SenPosConfig, apply_review, build_senpos
from annotators.lot.splits import SplitPlan
from annotators.lot.story import StoryConfig, parse_story_record, prepare_story
from pipelines.lot import (
    BuildClozeTAndPlotCom,
    BuildOutGen,
    BuildSenPos,
    BuildStories,
    ParseStories,
    ReviewSenPos,
    Tallies,
    annotations_by_story,
)
from pipelines.lot_tasks import task_steps
from schemas.common import Reject
from tests.beam_report import RecordingReport

STORY_A = (
    "从前有一个小村庄，村口住着一位勤劳的老木匠。老木匠每天天不亮就起床，在院子里刨木头。"
    "村里的孩子们都喜欢围在他身边看他干活。有一年冬天，河上的木桥被大雪压断了。"
    "老木匠带着徒弟们在河边忙了整整三天。新桥修好的那天，全村的人都来桥上走了一遍。"
)
STORY_B = (
    "海边住着一个叫阿海的老渔夫，他每天天不亮就划着小船出海。有一天夜里，他的网里捞上来一条浑身发着蓝光的小鱼。"
    "小鱼在网里轻轻摆着尾巴，好像在求他放了自己。阿海想了很久，还是把小鱼放回了大海。"
    "第二天早上，他的网里装满了活蹦乱跳的大鱼。"
)
SPLITS = (1.0, 1.0, 1.0)
PLAN = SplitPlan(0, SPLITS, SPLITS)


def split_inputs(p, anns=None):
    """The job's split side inputs: no near-duplicate groups, the stories these parsed
    annotations name (none by default) annotated."""
    anns = anns if anns is not None else p | "NoAnns" >> beam.Create([])
    return {
        "groups": beam.pvalue.AsSingleton(p | "NoGroups" >> beam.Create([{}])),
        "annotated": annotations_by_story(anns),
    }


def pipeline():
    return TestPipeline(runner=FnApiRunner())


def line(**fields) -> bytes:
    return json.dumps(fields, ensure_ascii=False).encode()


def prepared(input_id: str, **fields):
    return prepare_story(parse_story_record(input_id, line(**fields)))


def built(p, report, records, side, run_cfg=LotRunConfig(), label="Stories"):
    """Blocks of the BuiltStories of these story records (dicts), as the job makes them: the
    records come as two blocks (one when there are fewer than two), as ParseStories gives them."""
    blocks = [records[: len(records) // 2], records[len(records) // 2 :]] if len(records) > 1 else [records]
    return p | label >> beam.Create(blocks) | BuildStories(report, PLAN, run_cfg, StoryConfig(), side, None)


def flat(pcoll, label="Flat"):
    """The items of a PCollection of blocks (lists or tuples), one per element."""
    return pcoll | label >> beam.FlatMap(lambda block: block)


def reject(stage, input_id, reason, detail):
    return Reject(stage, input_id, reason, detail).to_row()  # detail as JSON


def test_parse_stories_keeps_each_parsed_record():
    raw = [("s.jsonl:1", line(id="a", story=STORY_A)), ("s.jsonl:2", line(id="b", story=STORY_B))]
    with pipeline() as p:
        kept, _ = p | beam.Create(raw) | ParseStories(RecordingReport(), StoryConfig())
        assert_that(flat(kept), equal_to([parse_story_record(*r) for r in raw]))


def test_build_stories_prepares_each_story_and_decides_every_task():
    """A BuiltStory holds exactly what each task's own step gives over the prepared story; its
    PreparedStory travels on only when annotations name it (the ClozeT join)."""
    records = [parse_story_record("s.jsonl:1", line(id="a", story=STORY_A))]
    records.append(parse_story_record("s.jsonl:2", line(id="b", story=STORY_B)))
    story_a, story_b = prepared("s.jsonl:1", id="a", story=STORY_A), prepared("s.jsonl:2", id="b", story=STORY_B)
    annotated = {"a": [parse_annotation("n.jsonl:1", line(**ANN_A))]}
    expected = [
        (
            s.input_id,
            s.story_id,
            {name: step(s, {}, annotated) for name, step in task_steps(PLAN, LotRunConfig(), StoryConfig())},
            s if s.story_id == "a" else None,
            steps.clozet_task_entry(s, StoryConfig()),
        )
        for s in (story_a, story_b)
    ]
    report = RecordingReport()
    with pipeline() as p:
        anns = p | "Anns" >> beam.Create([("n.jsonl:1", line(**ANN_A))]) | beam.Map(lambda e: parse_annotation(*e))
        stories = built(p, report, records, split_inputs(p, anns))
        assert_that(flat(stories) | beam.Map(tuple), equal_to(expected))
    assert report.stages == ["prepare"]


def test_parse_stories_rejects_unparsable_lines():
    raw = [
        ("s.jsonl:1", b'{"id": "x"'),
        ("s.jsonl:2", b""),
        ("s.jsonl:3", b"[1]"),
        ("s.jsonl:4", line(id="y", title="no story")),
        ("s.jsonl:5", b"\x00\x01"),
    ]
    report = RecordingReport()
    with pipeline() as p:
        kept, _ = p | beam.Create(raw) | ParseStories(report, StoryConfig())
        assert_that(kept, equal_to([]), label="no stories")  # no block at all
        assert_that(
            report.by_stage["parse"],
            equal_to(
                [
                    reject("parse", "s.jsonl:1", "malformed_json", "Expecting ',' delimiter at column 11"),
                    reject("parse", "s.jsonl:2", "blank_line", "empty line in a JSON lines file"),
                    reject("parse", "s.jsonl:3", "not_an_object", "a JSON list, not an object"),
                    reject("parse", "s.jsonl:4", "missing_field", "no string field 'story' or 'text'"),
                    reject("parse", "s.jsonl:5", "binary_file", "NUL bytes: binary data"),
                ]
            ),
            label="parse rejects",
        )


def test_parse_stories_keeps_the_earliest_of_equal_texts():
    raw = [
        ("b.jsonl:10", line(id="late", story=STORY_A)),
        ("b.jsonl:9", line(id="early", story=" " + STORY_A)),
        ("a.jsonl:3", line(id="b", story=STORY_B)),
    ]
    report = RecordingReport()
    with pipeline() as p:
        kept, _ = p | beam.Create(raw) | ParseStories(report, StoryConfig())
        assert_that(
            flat(kept) | beam.Map(lambda s: (s["story_id"], s["input_id"])),
            equal_to([("early", "b.jsonl:9"), ("b", "a.jsonl:3")]),
            label="kept",
        )
        assert_that(
            report.by_stage["dedup_text"],
            equal_to([reject("dedup_text", "b.jsonl:10", "exact_duplicate", "same text as b.jsonl:9")]),
            label="text dups",
        )


def test_parse_stories_keeps_the_earliest_of_equal_ids():
    raw = [("s.jsonl:2", line(id="a", story=STORY_B)), ("s.jsonl:1", line(id="a", story=STORY_A))]
    report = RecordingReport()
    with pipeline() as p:
        kept, _ = p | beam.Create(raw) | ParseStories(report, StoryConfig())
        assert_that(flat(kept) | beam.Map(lambda s: s["input_id"]), equal_to(["s.jsonl:1"]), label="kept")
        assert_that(
            report.by_stage["dedup_id"],
            equal_to([reject("dedup_id", "s.jsonl:2", "duplicate_id", "same story_id as s.jsonl:1")]),
            label="id dups",
        )


def test_a_dedup_partition_decides_each_group_of_equal_keys_on_its_own():
    """dedup_step over one partition of the keys (what `_dedup_parts` groups): every group of
    equal values keeps its earliest story in input order, whatever order the keys came in,
    and a story alone in its group is kept."""
    keys = [
        steps.StoryKey("a.jsonl:10", "x", "t1"),
        steps.StoryKey("a.jsonl:2", "y", "t1"),
        steps.StoryKey("b.jsonl:1", "z", "t2"),
        steps.StoryKey("a.jsonl:9", "y", "t3"),
    ]
    by_text = dict(steps.dedup_step("text", "exact_duplicate")((0, keys)))
    assert by_text["a.jsonl:2"] == [keys[1]] and by_text["b.jsonl:1"] == [keys[2]] and by_text["a.jsonl:9"] == [keys[3]]
    assert (by_text["a.jsonl:10"].reason, by_text["a.jsonl:10"].detail) == ("exact_duplicate", "same text as a.jsonl:2")
    by_id = dict(steps.dedup_step("story_id", "duplicate_id")((0, list(reversed(keys)))))
    assert by_id["a.jsonl:9"].detail == "same story_id as a.jsonl:2" and by_id["a.jsonl:2"] == [keys[1]]
    assert steps.dedup_part("t1") == steps.dedup_part("t1") < steps.DEDUP_PARTS
    assert steps.dedup_entry("story_id", keys[1]) == [(steps.dedup_part("y"), keys[1])]


def test_build_stories_rejects_what_prepare_cannot_use():
    records = [parse_story_record("s.jsonl:1", line(id="en", story="The fox ran. It jumped. It slept."))]
    report = RecordingReport()
    with pipeline() as p:
        assert_that(built(p, report, records, split_inputs(p)), equal_to([]), label="none built")  # no block
        assert_that(
            report.by_stage["prepare"],
            equal_to([reject("prepare", "s.jsonl:1", "not_chinese", "Han share 0.00 < 0.5")]),
        )


ANN_A = {"story_id": "a", "right_index": 3, "wrong": "有一年夏天，河上的木桥被大雪压断了。", "annotator": "t"}


def _clozet_inputs(p, report, anns):
    """(BuiltStories of STORY_A and STORY_B, the parsed annotations, the split side inputs)."""
    raw = p | "Anns" >> beam.Create([(f"n.jsonl:{i}", line(**a)) for i, a in enumerate(anns, 1)])
    parsed = raw | report.stage("annotations", steps.annotation_step)
    side = split_inputs(p, parsed)
    records = [parse_story_record("s.jsonl:1", line(id="a", story=STORY_A))]
    records.append(parse_story_record("s.jsonl:2", line(id="b", story=STORY_B)))
    return built(p, report, records, side), parsed, side


def test_clozet_and_plotcom_rows():
    report = RecordingReport()
    story_a, story_b = prepared("s.jsonl:1", id="a", story=STORY_A), prepared("s.jsonl:2", id="b", story=STORY_B)
    ex = build_clozet(story_a, parse_annotation("n.jsonl:1", line(**ANN_A)), PLAN.split("a", {}, {"a"}), seed=0)
    expected = [("clozet", ex.to_row())]
    plotcom_rejects = [
        reject("plotcom", "s.jsonl:1", "clozet_story", "held out: PlotCom train excludes ClozeT stories")
    ]
    split_b = PLAN.split("b", {}, {"a"})
    if split_b == "train":
        expected.append(("plotcom", build_plotcom_train(story_b, seed=0).to_row()))
    else:
        plotcom_rejects.append(
            reject(
                "plotcom",
                "s.jsonl:2",
                "not_train_split",
                f"the story's split is {split_b}: PlotCom val/test come from ClozeT",
            )
        )
    if ex.split != "train":
        expected.append(("plotcom", plotcom_from_clozet(story_a, ex).to_row()))
    with pipeline() as p:
        stories, anns, side = _clozet_inputs(p, report, [ANN_A])
        clozet, plotcom = {"stories": stories, "annotations": anns} | BuildClozeTAndPlotCom(
            report, PLAN, ClozeTConfig(), StoryConfig(), "leak-free", side
        )
        rows = (clozet, flat(plotcom)) | beam.Flatten() | beam.Map(lambda r: (r.task, r.row))
        assert_that(rows, equal_to(expected), label="rows")
        assert_that(report.by_stage["plotcom"], equal_to(plotcom_rejects), label="plotcom rejects")


def test_clozet_rejects_bad_and_unmatched_annotations():
    report = RecordingReport()
    anns = [dict(ANN_A, story_id="zzz"), dict(ANN_A, right_index=0), ANN_A, {"story_id": "a", "wrong": "x"}]
    with pipeline() as p:
        stories, parsed, side = _clozet_inputs(p, report, anns)
        clozet, _ = {"stories": stories, "annotations": parsed} | BuildClozeTAndPlotCom(
            report, PLAN, ClozeTConfig(), StoryConfig(), "leak-free", side
        )
        assert_that(
            report.by_stage["annotations"],
            equal_to([reject("annotations", "n.jsonl:4", "missing_field", "right_index is missing or empty")]),
            label="parse rejects",
        )
        assert_that(
            report.by_stage["clozet"],
            equal_to(
                [
                    reject(
                        "clozet",
                        "n.jsonl:1",
                        "unknown_story",
                        "no kept story has id 'zzz': the id is not in --stories, or its story was rejected "
                        "(an exact or near duplicate of another, too short, ...: see its rows in rejects/)",
                    ),
                    reject("clozet", "n.jsonl:2", "first_sentence", "the right sentence may not be the first sentence"),
                ]
            ),
            label="clozet rejects",
        )


def test_senpos_examples_and_rejects():
    report = RecordingReport()
    story = prepared("s.jsonl:1", id="a", story=STORY_A)
    short = "小猫在河边钓鱼钓了整整一天的时间。它连一条小小的鱼也没有能够钓到手。最后它只好饿着肚子慢慢走回家里去了。"
    records = [parse_story_record("s.jsonl:1", line(id="a", story=STORY_A))]
    records.append(parse_story_record("s.jsonl:2", line(id="c", story=short)))
    [window] = build_senpos(story, PLAN.split("a", {}, ()), seed=0)
    with pipeline() as p:
        senpos = flat(built(p, report, records, split_inputs(p)) | BuildSenPos(report))
        assert_that(senpos | beam.Map(lambda o: o.example), equal_to([window.example]), label="examples")
        assert_that(
            report.by_stage["senpos"] | beam.Map(lambda r: (r["input_id"], r["reason"])),
            equal_to([("s.jsonl:2", "no_removable_sentence")]),
            label="senpos rejects",
        )


def _eval_example():
    story = prepared("s.jsonl:1", id="a", story=STORY_A)
    [output] = steps.senpos_step(SplitPlan(0, (0.0, 1.0, 0.0), SPLITS), SenPosConfig())(story, {}, {})
    return output


def test_review_applies_the_first_review_and_rejects_the_rest():
    output = _eval_example()
    ex = output.example
    other = next(k for k in range(1, ex.n_candidates + 1) if k != ex.label)
    review = {"example_id": ex.example_id, "review": {"accept": True, "drop": [other]}}
    raw = [
        ("r.jsonl:2", line(**review)),
        ("r.jsonl:1", line(**review)),
        ("r.jsonl:3", b"{oops"),
        ("r.jsonl:4", line(example_id="nope")),
    ]
    reviewed = apply_review(ex, {"example_id": ex.example_id, "accept": True, "drop": [other], "reviewer": ""})
    report = RecordingReport()
    with pipeline() as p:
        reviews = p | "Reviews" >> beam.Create(raw) | report.stage("senpos_review_parse", steps.review_line_step)
        examples = p | "Examples" >> beam.Create([output])
        out = {"examples": examples, "reviews": reviews} | ReviewSenPos(report, reviewed_only=False)
        assert_that(out | beam.Map(lambda o: o.example), equal_to([reviewed]), label="reviewed")
        assert_that(
            report.by_stage["senpos_review_parse"] | beam.Map(lambda r: (r["input_id"], r["reason"])),
            equal_to([("r.jsonl:3", "malformed_json")]),
            label="parse rejects",
        )
        assert_that(
            report.by_stage["senpos_review"],
            equal_to(
                [
                    reject("senpos_review", "r.jsonl:2", "duplicate_review", "an earlier review counts"),
                    reject("senpos_review", "r.jsonl:4", "unknown_example", "no SenPos val/test example nope"),
                ]
            ),
            label="review rejects",
        )


def test_reviewed_only_rejects_unreviewed_examples():
    output = _eval_example()
    report = RecordingReport()
    with pipeline() as p:
        examples = p | "Examples" >> beam.Create([output])
        reviews = p | "Reviews" >> beam.Create(
            [ReviewRecord("r.jsonl:1", {"example_id": "other", "accept": True, "drop": [], "reviewer": ""})]
        )
        out = {"examples": examples, "reviews": reviews} | ReviewSenPos(report, reviewed_only=True)
        assert_that(out, equal_to([]), label="none kept")
        assert_that(
            report.by_stage["senpos_review"] | beam.Map(lambda r: (r["input_id"], r["reason"])),
            equal_to([(output.example.example_id, "not_reviewed"), ("r.jsonl:1", "unknown_example")]),
            label="review rejects",
        )


def test_outgen_rows_agreement_and_rejects():
    story = prepared("s.jsonl:1", id="a", story=STORY_A, outline=["老木匠", "不在故事里"])
    records = [parse_story_record("s.jsonl:1", line(id="a", story=STORY_A, outline=["老木匠", "不在故事里"]))]
    records.append(parse_story_record("s.jsonl:2", line(id="b", story=STORY_B, outline=["不在故事里"])))
    ex = build_outgen(story, PLAN.split("a", {}, ()), seed=0, outline_from="input")
    report = RecordingReport()
    with pipeline() as p:
        side = split_inputs(p)
        outgen = built(p, report, records, side, LotRunConfig(outline_from="input")) | BuildOutGen(report)
        assert_that(
            flat(outgen) | beam.Map(lambda o: (o.task_row.task, o.task_row.row, o.agreement)),
            equal_to([("outgen", ex.to_row(), AgreementCounts(1, 1, 2))]),
            label="rows",
        )
        tallies = (outgen,) | Tallies(side["groups"])
        assert_that(
            tallies["summary"]
            | beam.Map(
                lambda s: (s["outline_agreement"], s["outgen_titles"], s["table3"]["outgen"][ex.split]["# Examples"])
            ),
            equal_to(
                [
                    (
                        {
                            "stories_with_input_outline": 1,
                            "shared_phrases": 1,
                            "predicted_phrases": 1,
                            "input_phrases": 2,
                            "precision": 1.0,
                            "recall": 0.5,
                            "f1": 0.6667,
                        },
                        {ex.to_row()["title_source"]: 1},
                        1,
                    )
                ]
            ),
            label="agreement",
        )
        assert_that(
            tallies["leaks"] | beam.Map(lambda leaks: (leaks["stories_in_two_splits"], leaks["stories"])),
            equal_to([(0, 1)]),
            label="leaks",
        )
        assert_that(
            report.by_stage["outgen"] | beam.Map(lambda r: (r["input_id"], r["reason"])),
            equal_to([("s.jsonl:2", "no_usable_outline_phrase")]),
            label="outgen rejects",
        )
