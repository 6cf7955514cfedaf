"""`python -m pipelines.stories --pages DIR/pages --site SPEC --output OUT` (and/or `--input GLOB`).

Beam wiring of LOT's story cleaning (paper section 3 and appendix; PEERS.md 1.3): cached
pages or local dumps -> RawStory (`annotators.stories.sources`) -> cleaned and filtered Story
(`annotators.stories.clean`) -> exact duplicates collapsed (GroupByKey on the text hash) ->
near-duplicates collapsed (MinHash LSH band keys, GroupByKey, verified edges, one global
connected-components step; `annotators.stories.near_dup`). Writes `OUT/stories` (the stories table
`pipelines.lot --stories` reads), `rejects/`, `stats.json` and `CARD.md`.
"""
from __future__ import annotations

import argparse
import dataclasses
from typing import Sequence

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq

from annotators.text import zh_tokens
from annotators.stories.near_dup import (NearDupConfig, Node, band_keys, clusters, cluster_id, exact_groups,
                                 text_key, verified_pairs)
from annotators.core.outcome import Drop
from annotators.stories.site_spec import parse_spec
from annotators.stories.clean import CleanConfig
from annotators.stories.sources import json_line_to_raw, page_to_raw, text_file_to_raw, to_story
from pipelines.engine import (JobReport, ReadFiles, ReadLines, Stage, WriteTable, default_card, expand_input,
                              input_names, join, make_pipeline, parse_job_args, read_bytes, run_pipeline)
from schemas.stories import STORIES_SCHEMA

DEDUP_RULE = (
    "Exact duplicates share the cleaned text (SHA-256). Near-duplicates: character {shingle}-gram "
    "shingles, datasketch MinHash ({num_perm} permutations, seed {seed}) cut into LSH bands; "
    "stories sharing a band are candidates, and a candidate pair is merged only when the exact "
    "shingle Jaccard is >= {threshold}. Clusters are connected components; the representative "
    "kept is the member with the smallest (url, input_id); the others are rejects "
    "(`exact_duplicate` / `near_duplicate`) and the kept row lists every member in "
    "`cluster_members` (input ids), with `cluster_id` a hash of them.")


def _one(fn):
    """Adapt `fn(x) -> record | Drop` to Stage's `iterable | Drop`."""
    def apply(element):
        result = fn(element)
        return result if isinstance(result, Drop) else [result]
    return apply


def _parquet_rows(element):
    name, data = element
    try:
        table = pq.read_table(pa.BufferReader(data))
    except Exception as exc:  # a truncated or foreign file is a reject, not a crash
        return Drop("unreadable_parquet", f"{name}: {exc}"[:300])
    return [(row["url"], row) for row in table.to_pylist()]


def node(story) -> Node:
    return Node(story.url, story.input_id, story.story_id, tuple(story.cluster_members or (story.input_id,)))


def mark_exact(item):
    """One exact-duplicate group -> (story, representative or None) for each member."""
    _, stories = item
    by_node = {node(s): s for s in stories}
    rep, others = exact_groups(by_node)
    members = tuple(sorted(n.input_id for n in by_node))
    kept = dataclasses.replace(by_node[rep], cluster_members=members, cluster_size=len(members),
                               cluster_id=cluster_id(members))
    return [(kept, None)] + [(by_node[n], rep) for n in others]


def exact_decision(element):
    story, rep = element
    if rep is None:
        return [story]
    return Drop("exact_duplicate", f"same text as {rep.input_id}")


def near_decision(element):
    """(story_id, ([story], [assignment])) -> the kept story with its cluster, or a Drop."""
    _, (stories, assignments) = element
    story = stories[0]
    if not assignments:
        return [story]
    a = assignments[0]
    if a.representative.story_id != story.story_id:
        return Drop("near_duplicate", f"of {a.representative.input_id} (jaccard {a.best_score:.3f}, "
                                      f"cluster of {len(a.members)})")
    return [dataclasses.replace(story, cluster_id=a.cluster_id, cluster_size=len(a.members),
                                cluster_members=a.members)]


class NearDuplicates(beam.PTransform):
    """(story_id, Assignment) for members of multi-story clusters (LSH band keys + GroupByKey)."""

    def __init__(self, config: NearDupConfig):
        super().__init__()
        self.config = config

    def expand(self, stories):
        config = self.config
        return (
            stories
            | "BandKeys" >> beam.FlatMap(lambda s: [(k, (node(s), s.text)) for k in band_keys(s.text, config)])
            | "GroupBands" >> beam.GroupByKey()
            | "Verify" >> beam.FlatMap(lambda kv: [((tuple(a), tuple(b)), j)
                                                  for a, b, j in verified_pairs(kv[1], config)])
            | "DistinctEdges" >> beam.CombinePerKey(max)
            | "AllEdges" >> beam.combiners.ToList()
            | "Components" >> beam.FlatMap(lambda edges: sorted(
                clusters((Node(*a), Node(*b), j) for (a, b), j in edges).items()))
        )


def stories_card(stats: dict) -> str:
    lines = [default_card(stats), "## Deduplication", "", DEDUP_RULE.format(**stats["config"]["near_dup"]), "",
             "| representative | members |", "|---|---|"]
    clusters_found = stats.get("duplicate_clusters", [])
    lines += [f"| {c['representative']} | {', '.join(c['members'])} |" for c in clusters_found[:200]]
    return "\n".join(lines) + "\n"


def build_parser() -> argparse.ArgumentParser:
    c, n = CleanConfig(), NearDupConfig()
    parser = argparse.ArgumentParser(prog="python -m pipelines.stories", description=__doc__.splitlines()[0])
    parser.add_argument("--pages", help="the crawler's DIR/pages (parquet folder or glob)")
    parser.add_argument("--site", help="site spec (required with --pages: selectors, licence, source)")
    parser.add_argument("--input", help="local story dumps: *.jsonl / *.json lines or *.txt files")
    parser.add_argument("--source", default="dump", help="source name for --input records without one")
    parser.add_argument("--license", default="unknown", help="licence for --input records without one")
    parser.add_argument("--output", required=True)
    parser.add_argument("--min_words", type=int, default=c.min_words)
    parser.add_argument("--max_words", type=int, default=c.max_words)
    parser.add_argument("--min_han_ratio", type=float, default=c.min_han_ratio)
    parser.add_argument("--near_dup_threshold", type=float, default=n.threshold)
    parser.add_argument("--num_perm", type=int, default=n.num_perm)
    parser.add_argument("--shingle", type=int, default=n.shingle)
    parser.add_argument("--seed", type=int, default=n.seed, help="MinHash permutation seed")
    return parser


def read_raw(p, args, report):
    """All RawStory records of --pages and --input, each input accounted for by a Stage."""
    raws, inputs = [], []
    if args.pages:
        spec = parse_spec(read_bytes(args.site).decode("utf-8"), yaml_format=args.site.endswith((".yaml", ".yml")))
        paths = expand_input(args.pages, (".parquet",))
        inputs += paths
        rows = report.add("page_files", p | "ReadPages" >> ReadFiles(paths, input_names(paths, args.pages))
                          | Stage("page_files", _parquet_rows))
        raws.append(report.add("pages", rows | Stage("pages", _one(lambda e: page_to_raw(e[1], spec)))))
    if args.input:
        paths = expand_input(args.input, (".jsonl", ".json", ".txt"))
        inputs += paths
        names = input_names(paths, args.input)
        kw = {"source": args.source, "license": args.license}
        lines = [x for x in paths if not x.endswith(".txt")]
        texts = [x for x in paths if x.endswith(".txt")]
        if lines:
            raws.append(report.add("dump_lines", p | "ReadDumpLines" >> ReadLines(lines, names)
                                   | Stage("dump_lines", _one(lambda e: json_line_to_raw(*e, **kw)))))
        if texts:
            raws.append(report.add("dump_files", p | "ReadDumpFiles" >> ReadFiles(texts, names)
                                   | Stage("dump_files", _one(lambda e: text_file_to_raw(*e, **kw)))))
    return raws, inputs


def run(argv: Sequence[str] | None = None) -> None:
    args, options = parse_job_args(build_parser(), argv)
    if not (args.pages or args.input) or (args.pages and not args.site):
        raise SystemExit("give --pages with --site, and/or --input")
    clean = CleanConfig(args.min_words, args.max_words, args.min_han_ratio)
    near = NearDupConfig(args.near_dup_threshold, args.num_perm, args.shingle, args.seed)
    config = {"clean": dataclasses.asdict(clean), "near_dup": dataclasses.asdict(near),
              "site": args.site, "pages": args.pages, "input": args.input}
    p = make_pipeline(options)
    report = JobReport(args.output, "stories", config=config, seed=args.seed, inputs=[],
                       options=options, card=stories_card)
    raws, report.inputs = read_raw(p, args, report)
    raw = raws | "AllRaw" >> beam.Flatten()
    cleaned = report.add("clean", raw | Stage("clean", _one(lambda r: to_story(r, clean)),
                                              input_id=lambda r: r.input_id, setup=zh_tokens.load))
    exact = (cleaned | "TextKey" >> beam.Map(lambda s: (text_key(s.text), s))
             | "GroupText" >> beam.GroupByKey() | "MarkExact" >> beam.FlatMap(mark_exact))
    unique = report.add("exact_dedup", exact | Stage("exact_dedup", exact_decision,
                                                     input_id=lambda e: e[0].input_id))
    assignments = unique | NearDuplicates(near)
    joined = ({"story": unique | "ById" >> beam.Map(lambda s: (s.story_id, s)), "a": assignments}
              | "JoinClusters" >> beam.CoGroupByKey()
              | "Pair" >> beam.Map(lambda kv: (kv[0], (list(kv[1]["story"]), list(kv[1]["a"])))))
    kept = report.add("near_dedup", joined | Stage("near_dedup", near_decision,
                                                   input_id=lambda e: e[1][0][0].input_id))
    final = kept | "Singletons" >> beam.Map(
        lambda s: s if s.cluster_id else dataclasses.replace(
            s, cluster_id=cluster_id([s.input_id]), cluster_size=1, cluster_members=(s.input_id,)))
    rows = final | "ToRow" >> beam.Map(lambda s: s.to_row())
    report.tally(rows | WriteTable(join(args.output, "stories"), STORIES_SCHEMA, lambda r: r["story_id"]))
    report.extra("duplicate_clusters", final
                 | "Multi" >> beam.Filter(lambda s: (s.cluster_size or 1) > 1)
                 | "ClusterInfo" >> beam.Map(lambda s: {"representative": s.input_id,
                                                        "members": list(s.cluster_members)})
                 | "ClusterList" >> beam.combiners.ToList()
                 | "SortClusters" >> beam.Map(lambda cs: sorted(cs, key=lambda c: c["representative"])))
    report.finish(p)
    run_pipeline(p)


if __name__ == "__main__":
    run()
