"""Beam tier: the stories job's composite transforms over in-memory inputs (main and rejects)."""

from __future__ import annotations

import dataclasses
import json
import pickle

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from apache_beam.runners.portability.fn_api_runner import FnApiRunner
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from annotators.core.near_dup import NearDupConfig, cluster_id
from annotators.stories import steps
from annotators.stories.clean import CleanConfig
from annotators.stories.site_spec import parse_spec
from annotators.stories.sources import RawStory, to_story
from pipelines.engine import REJECTS, Stage
from pipelines.engine.folds import unpack
from pipelines.engine.merge_runs import read_loc
from pipelines.stories import (
    CandidateComponents,
    CleanStories,
    Deduplicate,
    DropExactDuplicates,
    DumpFilesToRaw,
    DumpLinesToRaw,
    DuplicateClusters,
    KeyStories,
    PagesToRaw,
)
from schemas.crawl import PAGES_SCHEMA, Page
from schemas.stories import Story
from tests.fixtures.site.make_site import STORIES

TEXT_01 = "\n".join(STORIES["01"][1])
TEXT_02 = "\n".join(STORIES["02"][1])
TEXT_06 = "\n".join(STORIES["06"][1])  # TEXT_01 with one phrase changed: Jaccard 0.939
SPEC = parse_spec(
    json.dumps(
        {
            "name": "fables",
            "start_urls": ["http://h.org/list/1.html"],
            "allowed_hosts": ["h.org"],
            "follow": [r"/list/"],
            "story": r"/story/",
            "title": "h1",
            "body": "#text",
            "license": "CC0-1.0",
        }
    )
)
HTML = "<meta charset=utf-8><h1>冬粮</h1><div id=text><p>" + TEXT_01 + "</p></div>"


class Recorder:
    """Stands in for JobReport: `report.stage` applies a Stage and keeps its rejects."""

    def __init__(self):
        self.rejects = []

    def stage(self, name, fn, **kwargs):
        return Stage(name, fn, report=self, **kwargs)

    def add(self, name, result):
        self.rejects.append(result[REJECTS])
        return result["main"]


def pipeline() -> TestPipeline:
    return TestPipeline(runner=FnApiRunner())


def assert_rejects(report: Recorder, expected: list[tuple[str, str, str]]) -> None:
    """(stage, input_id, reason) of every rejects row, in any order."""
    rows = tuple(report.rejects) | "AllRejects" >> beam.Flatten()
    assert_that(
        rows | "Key" >> beam.Map(lambda r: (r["stage"], r["input_id"], r["reason"])),
        equal_to(expected),
        label="rejects",
    )


def page(url: str, final_url: str | None = None, kind: str = "story", error: str | None = None) -> Page:
    return Page(
        "fables",
        url,
        final_url or url,
        kind,
        200 if error is None else 404,
        json.dumps({"content-type": "text/html"}),
        HTML.encode("utf-8") if error is None else b"",
        "2024-05-01T12:00:00Z",
        error,
        "status 404" if error else "",
        1,
    )


def parquet(pages: list[Page]) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist([p.to_row() for p in pages], schema=PAGES_SCHEMA), sink)
    return sink.getvalue().to_pybytes()


def story(input_id: str, text: str, url: str = "") -> Story:
    return Story(
        story_id=f"story-{input_id}", text=text, url=url or f"http://h.org/story/{input_id}.html", input_id=input_id
    )


def test_pages_to_raw_keeps_story_pages_and_rejects_the_rest():
    pages = [
        page("http://h.org/story/1.html"),
        page("http://h.org/list/1.html", kind="list"),
        page("http://h.org/story/2.html", error="http_404"),
    ]
    report = Recorder()
    with pipeline() as p:
        files = p | beam.Create([("part-0.parquet", parquet(pages)), ("part-1.parquet", b"PAR1 truncated")])
        raws = files | PagesToRaw(SPEC, report)
        assert_that(
            raws,
            equal_to(
                [
                    RawStory(
                        "http://h.org/story/1.html",
                        "冬粮",
                        TEXT_01,
                        "fables",
                        "http://h.org/story/1.html",
                        "CC0-1.0",
                        "2024-05-01T12:00:00Z",
                        "utf-8 (meta)",
                    )
                ]
            ),
        )
        assert_rejects(
            report,
            [
                ("page_files", "part-1.parquet", "unreadable_file"),
                ("pages", "http://h.org/list/1.html", "not_story_page"),
                ("pages", "http://h.org/story/2.html", "http_404"),
            ],
        )


def test_dump_lines_to_raw_reads_story_or_text_and_rejects_bad_lines():
    lines = [
        ("d.jsonl:1", json.dumps({"title": "冬粮", "story": TEXT_01, "id": "x7"}).encode()),
        ("d.jsonl:2", b"{oops"),
        ("d.jsonl:3", b"  "),
        ("d.jsonl:4", b"[1]"),
        ("d.jsonl:5", b'{"title": "t"}'),
        ("d.jsonl:6", b'{"text": 5}'),
    ]
    report = Recorder()
    with pipeline() as p:
        raws = p | beam.Create(lines) | DumpLinesToRaw("dump", "CC0-1.0", report)
        assert_that(
            raws, equal_to([RawStory("d.jsonl:1", "冬粮", TEXT_01, "dump", "", "CC0-1.0", None, "utf-8", None, "x7")])
        )
        assert_rejects(
            report,
            [
                ("dump_lines", "d.jsonl:2", "malformed_json"),
                ("dump_lines", "d.jsonl:3", "blank_line"),
                ("dump_lines", "d.jsonl:4", "not_an_object"),
                ("dump_lines", "d.jsonl:5", "missing_field"),
                ("dump_lines", "d.jsonl:6", "bad_field_type"),
            ],
        )


def test_dump_files_to_raw_decodes_gb18030_and_rejects_empty_files():
    report = Recorder()
    with pipeline() as p:
        files = p | beam.Create([("a.txt", TEXT_02.encode("gb18030")), ("b.txt", b" \n")])
        raws = files | DumpFilesToRaw("dump", "unknown", report)
        assert_that(raws, equal_to([RawStory("a.txt", "", TEXT_02, "dump", "", "unknown", None, "gb18030 (detected)")]))
        assert_rejects(report, [("dump_files", "b.txt", "empty_file")])


def test_clean_stories_filters_by_length_and_language():
    raws = [
        RawStory("a", "冬 粮", " ".join(TEXT_01), "dump"),
        RawStory("b", "", "太短了。", "dump"),
        RawStory("c", "", "This story is written in English and is long enough to count. " * 8, "dump"),
    ]
    report = Recorder()
    with pipeline() as p:
        stories = p | beam.Create(raws) | CleanStories(CleanConfig(), report)
        assert_that(stories, equal_to([to_story(raws[0])]))
        assert_rejects(report, [("clean", "b", "too_short"), ("clean", "c", "not_chinese")])


def test_clean_stories_for_the_job_keys_and_pickles_each_story_where_it_is_cleaned():
    """With a NearDupConfig, a cleaned story leaves the stage as its DedupKey and its pickle
    (what the job spills), the same rejects as without."""
    raws = [RawStory("a", "冬 粮", " ".join(TEXT_01), "dump"), RawStory("b", "", "太短了。", "dump")]
    near = NearDupConfig()
    report = Recorder()
    with pipeline() as p:
        keyed = p | beam.Create(raws) | CleanStories(CleanConfig(), report, near)
        unpickled = keyed | beam.Map(lambda k: (k.key, pickle.loads(k.pickled)))
        story = to_story(raws[0])
        assert_that(unpickled, equal_to([(steps.dedup_key(story, near), story)]))
        assert_rejects(report, [("clean", "b", "too_short")])


def test_drop_exact_duplicates_keeps_the_smallest_url_and_lists_members(tmp_path):
    stories = [
        story("b", TEXT_01, "http://h.org/story/2.html"),
        story("a", TEXT_01, "http://h.org/story/1.html"),
        story("c", TEXT_02),
    ]
    kept_a = dataclasses.replace(
        stories[1], cluster_members=("a", "b"), cluster_size=2, cluster_id=cluster_id(["a", "b"])
    )
    kept_c = dataclasses.replace(stories[2], cluster_members=("c",), cluster_size=1, cluster_id=cluster_id(["c"]))
    report = Recorder()
    with pipeline() as p:
        unique = (
            p
            | beam.Create(stories)
            | KeyStories(NearDupConfig())
            | Deduplicate(NearDupConfig(), report, str(tmp_path / "spill"))
        )
        assert_that(unique, equal_to([kept_a, kept_c]))
        assert_rejects(report, [("exact_dedup", "b", "exact_duplicate")])
    assert not (tmp_path / "spill").exists()  # the spilled stories are deleted once decided


@pytest.mark.parametrize("parked", [False, True])
def test_exact_and_near_decisions_shuffle_small_keys_not_texts(parked, tmp_path):
    """DropExactDuplicates and CandidateComponents see DedupKeys (node, text hash, band keys)
    only; parked, the survivors' blocks are written to a folder where they are decided and
    only their locations travel on, to the same survivors and components."""
    park = str(tmp_path / "park") if parked else None
    read = read_loc if parked else None
    config = NearDupConfig()
    stories = [
        story("b", TEXT_01, "http://h.org/story/2.html"),
        story("a", TEXT_01, "http://h.org/story/1.html"),
        story("f", TEXT_06),
        story("c", TEXT_02),
    ]
    keys = [steps.dedup_key(s, config) for s in stories]
    assert all(TEXT_01 not in repr(k) for k in keys)
    kept_a = keys[1]._replace(node=keys[1].node._replace(members=("a", "b")))
    report = Recorder()
    with pipeline() as p:
        # each key with its spill location (here a stand-in): the kept key keeps its own
        located = [(k, f"loc-{k.node.input_id}") for k in keys]
        kept = p | beam.Create(located) | DropExactDuplicates(report, park=park)
        if parked:
            shapes = kept | "Shapes" >> beam.Map(
                lambda s: (type(s[0]).__name__, tuple(sorted({type(v).__name__ for v in s[1].values()})))
            )
            assert_that(shapes | "Distinct shapes" >> beam.Distinct(), equal_to([("Loc", ("Loc",))]), label="parked")
        pairs = kept | "Unpack" >> beam.FlatMap(lambda survivors: unpack(read(survivors[0]) if read else survivors[0]))
        assert_that(pairs, equal_to([(kept_a, "loc-a"), (keys[2], "loc-f"), (keys[3], "loc-c")]), label="kept")
        assert_rejects(report, [("exact_dedup", "b", "exact_duplicate")])
        components = kept | CandidateComponents(read=read)
        # a and f share bands: one component holds both; c shares none and is in none
        pairs = components | "Ids" >> beam.Map(lambda c: c[0])
        assert_that(pairs, equal_to(["a", "f"]), label="candidates")
        one = (
            components
            | "Keys" >> beam.Map(lambda c: c[1])
            | "Distinct" >> beam.Distinct()
            | "CountKeys" >> beam.combiners.Count.Globally()
        )
        assert_that(one, equal_to([1]), label="one component")


def test_drop_near_duplicates_keeps_the_representative_and_singletons_get_a_cluster(tmp_path):
    stories = [story("a", TEXT_01), story("f", TEXT_06), story("c", TEXT_02)]
    members = ("a", "f")
    report = Recorder()
    with pipeline() as p:
        kept = (
            p
            | beam.Create(stories)
            | KeyStories(NearDupConfig())
            | Deduplicate(NearDupConfig(), report, str(tmp_path / "spill"))
        )
        assert_that(
            kept,
            equal_to(
                [
                    dataclasses.replace(
                        stories[0], cluster_id=cluster_id(members), cluster_size=2, cluster_members=members
                    ),
                    dataclasses.replace(
                        stories[2], cluster_id=cluster_id(["c"]), cluster_size=1, cluster_members=("c",)
                    ),
                ]
            ),
        )
        assert_rejects(report, [("near_dedup", "f", "near_duplicate")])
    assert not (tmp_path / "spill").exists()


def test_duplicate_clusters_lists_clusters_of_two_or_more_sorted():
    stories = [
        dataclasses.replace(story("b", TEXT_01), cluster_size=2, cluster_members=("b", "z")),
        dataclasses.replace(story("a", TEXT_02), cluster_size=3, cluster_members=("a", "x", "y")),
        dataclasses.replace(story("c", TEXT_06), cluster_size=1, cluster_members=("c",)),
    ]
    with pipeline() as p:
        clusters = p | beam.Create(stories) | DuplicateClusters()
        assert_that(
            clusters,
            equal_to(
                [[{"representative": "a", "members": ["a", "x", "y"]}, {"representative": "b", "members": ["b", "z"]}]]
            ),
        )
