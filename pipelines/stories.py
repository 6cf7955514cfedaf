"""`python -m pipelines.stories --pages DIR/pages --site SPEC --output OUT` (and/or `--input GLOB`).

Beam wiring of LOT's story cleaning (paper section 3 and appendix; PEERS.md 1.3): cached
pages or local dumps -> RawStory (`PagesToRaw`, `DumpLinesToRaw`, `DumpFilesToRaw`) -> cleaned
and filtered Story (`CleanStories`) -> `Deduplicate`: exact duplicates collapsed
(`DropExactDuplicates`, GroupByKey on partitions of the text hashes) and near-duplicates collapsed (MinHash
LSH band keys, `CandidateComponents` (one global step over candidate sets), verified pairs and
clusters per component), both
on small DedupKeys and spill locations: the cleaned stories wait on disk
(pipelines.engine.spill) and each is joined once with its decisions. The rules are
in `annotators.stories` (`steps` is what each stage applies). Writes `OUT/stories` (the
stories table `pipelines.lot --stories` reads), `rejects/`, `stats.json` and `CARD.md`.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any

import apache_beam as beam

from annotators.core.lsh_sets import ComponentMember
from annotators.core.near_dup import NearDupConfig, bands_rows, id_components
from annotators.stories import steps
from annotators.stories.card import stories_card
from annotators.stories.clean import CleanConfig, word_limits
from annotators.stories.site_spec import SiteSpec, parse_spec
from pipelines.engine import (
    Gather,
    JobArgumentParser,
    JobReport,
    MatchInputs,
    ReadFiles,
    ReadLines,
    Source,
    WriteTable,
    add_config_flags,
    config_from_args,
    is_local_path,
    join,
    make_pipeline,
    parse_job_args,
    read_bytes,
    run_pipeline,
    staging_path,
)
from pipelines.engine.folds import BlocksPerBundle, pack, unpack
from pipelines.engine.gather import after_all, as_compact, compact_map
from pipelines.engine.merge_runs import park_blobs, read_loc, read_pickles
from pipelines.engine.paths import delete_folder
from pipelines.engine.pool_worker import outcome, read_file_bytes
from pipelines.engine.ranges import content_name
from pipelines.engine.repeated_ids import RepeatedIds
from pipelines.engine.spill import SpillPickled
from pipelines.engine.stage import PooledFlatMap
from pipelines.engine.usage import fail, main
from schemas.stories import STORIES_SCHEMA


class PagesToRaw(beam.PTransform):
    """(file name, parquet bytes) of the page cache -> RawStory of every story page.

    `spec` is the SiteSpec, or the path of its file, read when the job runs (a `gs://` spec
    is never read while the graph is built)."""

    def __init__(self, spec: SiteSpec | str, report):
        super().__init__()
        self.spec, self.report = spec, report

    def expand(self, files):
        spec = (
            files.pipeline | "SpecPath" >> beam.Create([self.spec]) | "LoadSpec" >> beam.Map(load_spec)
            if isinstance(self.spec, str)
            else files.pipeline | "Spec" >> beam.Create([self.spec])
        )
        rows = files | self.report.stage("page_files", lambda f: steps.parquet_page_rows(*f))
        return rows | self.report.stage(
            "pages",
            lambda page, spec: steps.page_story(page, spec),
            side_inputs={"spec": beam.pvalue.AsSingleton(spec)},
        )


class DumpLinesToRaw(beam.PTransform):
    """(input_id, JSON line bytes) of story dumps -> RawStory; with `clean` (the clean stage's
    step), `steps.LineCleaned` instead: each line parsed, cleaned and keyed where it is parsed
    (one trip to a pool worker, as bytes), for `CleanStories(..., made=True)` to account."""

    def __init__(self, source: str, license: str, report, clean=None):
        super().__init__()
        self.kw, self.report, self.clean = {"source": source, "license": license}, report, clean

    def expand(self, lines):
        if self.clean is None:
            return lines | self.report.stage("dump_lines", lambda e: steps.dump_line_story(*e, **self.kw))
        fn = functools.partial(steps.dump_line_cleaned(self.clean, outcome), **self.kw)
        return lines | self.report.stage("dump_lines", fn, setup=steps.load_jieba)


class DumpFilesToRaw(beam.PTransform):
    """(input_id, file bytes) of plain-text story files -> RawStory."""

    def __init__(self, source: str, license: str, report):
        super().__init__()
        self.kw, self.report = {"source": source, "license": license}, report

    def expand(self, files):
        return files | self.report.stage("dump_files", lambda e: steps.dump_file_story(*e, **self.kw))


class CleanStories(beam.PTransform):
    """RawStory -> cleaned Story, or a reject (mojibake, language, length); with `near`, the
    story `steps.Keyed` for `Deduplicate` where it is cleaned (its MinHash and pickle made on
    the pool, in a local run: the job's process never decodes the text). With `made`, the
    input is `steps.LineCleaned` (DumpLinesToRaw with `clean`) and only its outcome is
    accounted for, in this process."""

    def __init__(self, config: CleanConfig, report, near: NearDupConfig | None = None, made: bool = False):
        super().__init__()
        self.config, self.report, self.near, self.made = config, report, near, made

    def expand(self, raws):
        if self.made:  # LineCleaned: the outcome was made with the line's parse; account for it here
            return raws | self.report.stage(
                "clean", steps.line_clean_outcome, input_id=operator.attrgetter("input_id"), pooled=False
            )
        fn = (
            functools.partial(steps.clean_story, config=self.config)
            if self.near is None
            else functools.partial(steps.clean_and_key, config=self.config, near=self.near)
        )
        return raws | self.report.stage(
            "clean",
            fn,
            input_id=operator.attrgetter("input_id"),
            setup=steps.load_jieba,
        )


# components a pool task decides at most: each travels as a few locations (its stories are read
# where it is decided), so a task of the pool's default 512 would leave one worker the whole step
COMPONENTS_PER_TASK = 32
KEY_BLOCK = 1 << 14  # (key, location) pairs a bundle holds before it sends its blocks on


def text_blocks(key_loc):
    return [(steps.text_part(key_loc[0]), key_loc)]


class DropExactDuplicates(beam.PTransform):
    """(DedupKey, spill location) pairs (one PCollection, or one per input kind) -> one
    element per partition of the text hashes (`steps.survivor_blocks`): a packed block
    (`folds.pack`) of one such pair per cleaned text (keep-first), its node listing the exact
    duplicates it stands for, and their LSH bands packed per band partition. Only the small
    keys and locations are shuffled, never the texts, in packed blocks per partition (each
    bundle's; each branch blocked before the branches meet), so no boundary of the runner
    carries one element per story. Each partition is decided on the pool, in a local run
    (`pool_groups`): the job's process only carries its blocks. With `park` (a folder), the
    survivors' blocks are written there where they are decided and only their locations
    travel on (`merge_runs.park_blobs`; `Deduplicate` passes its spill folder): otherwise the
    local runner held them in the job's process from the exact dedup until the candidates
    were known (the survivors 34 MB and their band blocks 42 MB at 80,000 stories)."""

    def __init__(self, report, park: str | None = None):
        super().__init__()
        self.report, self.park = report, park

    def expand(self, keys):
        branches = keys if isinstance(keys, (list, tuple)) else [keys]
        blocks = [
            branch | f"TextBlocks{i}" >> beam.ParDo(BlocksPerBundle(text_blocks, KEY_BLOCK, packed=True))
            for i, branch in enumerate(branches)
        ]
        return (
            blocks
            | "AllTextBlocks" >> beam.Flatten()
            | "GroupText" >> beam.GroupByKey()
            | self.report.stage(
                "exact_dedup",
                steps.keep_first_packed,
                grouped=True,
                merge=(
                    steps.survivor_blocks
                    if self.park is None
                    else functools.partial(steps.survivor_blocks, park=functools.partial(park_blobs, self.park))
                ),
                pool_groups=True,
                fresh_workers=True,  # the workers that cleaned hold jieba, which no dedup step needs
            )
        )


def band_blocks(survivors: tuple[bytes, dict[int, bytes]]):
    """(band partition, packed block of (band key, input id) pairs) of one partition's
    survivors (`steps.survivor_blocks`), as they were packed where it was decided."""
    return sorted(survivors[1].items())


def survivor_block(survivors: tuple[bytes, dict[int, bytes]]) -> bytes:
    """A partition's packed survivors without its band blocks: what `_Survivors` reads once the
    components are known. Only this crosses the runner's stage boundary there (it is held whole
    until read); the band blocks go straight on to their shuffle in the bundle that made them,
    so the local runner never holds them twice (40 MB at 80,000 stories)."""
    return survivors[0]


def listed_blocks(part):
    """A grouped key's values as a list (a GroupByKey's iterable does not pickle): a band
    partition's lists of packed blocks, or a component's member blocks' locations."""
    return part[0], list(part[1])


def component_items(components: dict[str, str]):
    """(input_id, component key) of every candidate story, in id order."""
    return sorted(components.items())


class CandidateComponents(beam.PTransform):
    """The survivors of DropExactDuplicates -> (input_id, component key) of every story that
    shares an LSH band with another: the (band, input id) pairs travel in the packed blocks
    per band partition each text partition made (lsh_sets), each band partition's candidate
    sets are found where its blocks meet, and the sets (ids only) are joined where they share
    a story in one global step. With `read`, the blocks travel as the references
    `DropExactDuplicates(park=...)` made, read where the sets are found."""

    def __init__(self, read: Callable[[Any], bytes] | None = None):
        super().__init__()
        self.read = read

    def expand(self, keys):
        sets = (
            steps.packed_partition_sets
            if self.read is None
            else functools.partial(steps.packed_partition_sets, read=self.read)
        )
        return (
            keys
            | "BandBlocks" >> beam.ParDo(BlocksPerBundle(band_blocks))
            | "GroupBands" >> beam.GroupByKey()
            | "ListBlocks" >> beam.Map(listed_blocks)
            | "CandidateSets" >> beam.ParDo(PooledFlatMap("candidate_sets", sets, fresh_workers=True))
            | "AllSets" >> Gather()
            | "Components" >> beam.Map(id_components)
            | "ComponentOf" >> beam.FlatMap(component_items)
        )


class _Survivors(beam.DoFn):
    """A text partition's surviving stories' (DedupKey, spill location) pairs, as one packed
    block (`survivor_block`, the reference `read` turns into its bytes; exact duplicates are
    gone: their rejects were written by exact_dedup), each with its candidate component
    (`component_of`, input id -> component key, a side input: the candidates only): a story
    in no candidate set is decided (`Decision`s in packed blocks per spill file); a
    candidate's node, location and band keys go once to its component (`verify`: packed
    blocks per component, written to one file of `park` per partition, so that only their
    locations are grouped; the local runner held the blocks, about 32 MB at 80,000 stories,
    in the job's process, two or three times over while it grouped them)."""

    def __init__(self, read: Callable[[Any], bytes], park: str):
        self._read, self._park = read, park

    def process(self, block, component_of):
        decided: dict[str, list] = {}
        verify: dict[str, list] = {}
        for key, loc in unpack(self._read(block)):
            component = component_of.get(key.node.input_id)
            if component is None:
                decided.setdefault(loc.path, []).append(steps.Decision(loc, key.node.members, []))
            else:
                verify.setdefault(component, []).append(ComponentMember(key.node, loc, key.bands))
        for path in sorted(decided):
            yield path, pack(decided[path])
        components = sorted(verify)
        locs = park_blobs(self._park, [pack(verify[c]) for c in components]) if components else []
        for component, loc in zip(components, locs):
            yield beam.pvalue.TaggedOutput("verify", (component, loc))


def decision_by_file(decision):
    """(spill file, Decision) of a candidate decided on the pool."""
    return [(decision.loc.path, decision)]


class KeyStories(beam.PTransform):
    """Story -> `steps.Keyed`, for `Deduplicate` (the job keys its stories in CleanStories)."""

    def __init__(self, config: NearDupConfig):
        super().__init__()
        self.config = config

    def expand(self, stories):
        return stories | "Keyed" >> beam.Map(steps.keyed, near=self.config)


class Deduplicate(beam.PTransform):
    """`steps.Keyed` story PCollections (one per input kind) -> the representative of each exact or
    near-duplicate cluster, with its cluster.

    Each story was keyed and pickled where it was cleaned, is spilled to disk here
    (pipelines.engine.spill), and only its DedupKey (node, text hash, band keys; MinHash once
    per story) and its spill location travel, in packed blocks (`folds.pack`: one pickle per
    block; no boundary of the runner carries one element per story): exact duplicates are collapsed
    per partition of the text hashes (each survivor keeps its location), candidate components
    come from the band keys (ids only) and reach the survivors as a side input of the
    candidates' ids (no join of every story), and each candidate's location and band keys go
    once to its component, where the texts are read back, pairs that share a band are
    checked (exact Jaccard; a pair already joined through others is skipped), the clusters
    are formed (no global list of pairs) and every member is decided, scored against its
    representative. Every decision is then grouped by spill file, which is read once to
    rejoin each surviving story with its cluster (the near_dedup stage; each file on the
    pool, in a local run, which reads it there). No shuffle or runner buffer ever holds the
    texts: each input kind is spilled in its own branch, so the local runner never
    materializes the stories to flatten them."""

    def __init__(self, config: NearDupConfig, report, spill: str):
        super().__init__()
        self.config, self.report, self.spill = config, report, spill

    def expand(self, branches):
        config = self.config
        branches = branches if isinstance(branches, (list, tuple)) else [branches]
        spilled = [branch | f"Spill{i}" >> beam.ParDo(SpillPickled(self.spill)) for i, branch in enumerate(branches)]
        kept = tuple(spilled) | DropExactDuplicates(self.report, park=self.spill)
        decide = functools.partial(steps.packed_component_decisions, config=config, read_pickles=read_pickles)
        component_of = as_compact(compact_map(kept | CandidateComponents(read=read_loc), "ComponentOf"))
        survivors = (
            kept
            | "SurvivorBlocks" >> beam.Map(survivor_block)
            | "Survivors"
            >> beam.ParDo(_Survivors(read_loc, self.spill), component_of).with_outputs("verify", main="alone")
        )
        clustered = (
            survivors.verify
            | "GroupComponents" >> beam.GroupByKey()
            | "ComponentMembers" >> beam.Map(listed_blocks)
            | "Clusters" >> beam.ParDo(PooledFlatMap("clusters", decide, fresh_workers=True, items=COMPONENTS_PER_TASK))
            | "ClusterBlocks" >> beam.ParDo(BlocksPerBundle(decision_by_file, KEY_BLOCK, packed=True))
        )
        decided = (
            (survivors.alone, clustered)
            | "AllDecided" >> beam.Flatten()
            | "GroupSpillFile" >> beam.GroupByKey()
            | self.report.stage(
                "near_dedup",
                functools.partial(steps.rejoin_decided, read=read_file_bytes, outcome=outcome),
                grouped=True,
                pool_groups=True,
                fresh_workers=True,
            )
        )
        _ = after_all(decided, "DeleteSpill", delete_folder, self.spill)
        return decided | "Singletons" >> beam.Map(steps.with_singleton_cluster)


class DuplicateClusters(beam.PTransform):
    """Final stories -> one list of {representative, members} for clusters of 2 or more."""

    def expand(self, stories):
        return (
            stories
            | "Multi" >> beam.Filter(lambda s: (s.cluster_size or 1) > 1)
            | "ClusterInfo" >> beam.Map(steps.cluster_info)
            | "ClusterList" >> beam.combiners.ToList()
            | "SortClusters" >> beam.Map(lambda cs: sorted(cs, key=lambda c: c["representative"]))
        )


def build_parser() -> argparse.ArgumentParser:
    parser = JobArgumentParser(prog="python -m pipelines.stories", description=__doc__.splitlines()[0])
    parser.add_argument("--pages", help="the crawler's DIR/pages (parquet folder or glob)")
    parser.add_argument("--site", help="site spec (required with --pages: selectors, licence, source)")
    parser.add_argument("--input", help="local story dumps: *.jsonl / *.json lines or *.txt files")
    parser.add_argument("--source", default="dump", help="source name for --input records without one")
    parser.add_argument("--license", default="unknown", help="licence for --input records without one")
    parser.add_argument("--output", required=True)
    add_config_flags(parser, CleanConfig, exclude=("boilerplate",))
    threshold = {f.name: f for f in dataclasses.fields(NearDupConfig)}["threshold"]  # flag name != field name
    parser.add_argument(
        "--near_dup_threshold",
        type=float,
        default=threshold.default,
        help=f"{threshold.metadata['help']} (default: {threshold.default})",
    )
    add_config_flags(parser, NearDupConfig, exclude=("threshold",))
    return parser


def load_spec(path: str) -> SiteSpec:
    """The site spec at `path` (JSON, or YAML by extension)."""
    return parse_spec(read_bytes(path).decode("utf-8"), yaml_format=path.endswith((".yaml", ".yml")))


def is_text_file(source: Source) -> bool:
    """Dumps are routed by extension when the job runs: `.txt` is one story per file, any
    other matched file (`.jsonl`, `.json`) one story per line; a compressed one as what it holds
    (`a.txt.gz`: a story)."""
    return content_name(source.path).endswith(".txt")


def dump_stage(source: Source) -> str:
    return "dump_files" if is_text_file(source) else "dump_lines"


class StoriesReport(JobReport):
    """The job's report: a dump stage none of whose files matched is left out of stats.json
    and CARD.md (the match happens at run time, so both dump stages are always in the graph;
    each matched dump adds a `matched|<stage>` tally, which stats.json does not list)."""

    OPTIONAL = ("dump_lines", "dump_files")

    def _write(self, pairs, **extras):
        matched = {key.split("|", 1)[1] for key, n in pairs if key.startswith("matched|") and n}
        self.stages = [s for s in self.stages if s not in self.OPTIONAL or s in matched]
        return super()._write(pairs, **extras)


def read_raw(p, args, report, clean=None):
    """(kind, RawStory PCollection) of --pages and --input (each cleaned in its own branch, so
    the local runner never materializes the raw stories to flatten them), each input
    accounted for by a Stage, and the matched input paths (one sorted list, --pages first),
    all matched when the job runs. With `clean` (the clean stage's step), the "Lines" kind
    is `steps.LineCleaned`, each line cleaned where it is parsed (DumpLinesToRaw)."""
    raws, inputs = [], []
    if args.pages:
        spec = args.site
        if is_local_path(args.site):
            # fail fast, in one line (it was a traceback), on a malformed local spec; a remote one is read at run time
            from pipelines.crawl import UsageError as SpecUsageError
            from pipelines.crawl import load_spec_file

            try:
                spec = load_spec_file(args.site)
            except SpecUsageError as exc:
                fail("stories", str(exc))
        pages = p | "MatchPages" >> MatchInputs(args.pages, (".parquet",))
        inputs.append(pages | "PagePaths" >> beam.Map(lambda s: (0, s.path)))
        page_raws = pages | "ReadPages" >> ReadFiles() | PagesToRaw(spec, report)
        raws.append(("Pages", page_raws))
        # pages read as UTF-8 with a few invalid byte sequences as U+FFFD, and how many in all
        replaced = page_raws | "ReplacedCounts" >> beam.Map(steps.replaced_counts)
        report.extra("utf8_replaced", replaced | "SumReplaced" >> beam.CombineGlobally(steps.sum_replaced))
    if args.input:
        dumps = p | "MatchDumps" >> MatchInputs(args.input, (".jsonl", ".json", ".txt"), mixed=True)
        inputs.append(dumps | "DumpPaths" >> beam.Map(lambda s: (1, s.path)))
        report.tally(dumps | "DumpKinds" >> beam.Map(lambda s: (f"matched|{dump_stage(s)}", 1)))
        raws.append(
            (
                "Lines",
                dumps
                | "LineDumps" >> beam.Filter(lambda s: dump_stage(s) == "dump_lines")
                | "ReadDumpLines" >> ReadLines()
                | DumpLinesToRaw(args.source, args.license, report, clean),
            )
        )
        raws.append(
            (
                "Files",
                dumps
                | "TextDumps" >> beam.Filter(is_text_file)
                | "ReadDumpFiles" >> ReadFiles()
                | DumpFilesToRaw(args.source, args.license, report),
            )
        )
    paths = (
        inputs
        | "AllInputs" >> beam.Flatten()
        | "InputList" >> beam.combiners.ToList()
        | "SortInputs" >> beam.Map(lambda pairs: [path for _, path in sorted(pairs)])
    )
    return raws, paths


def run(argv: Sequence[str] | None = None) -> None:
    args, options = parse_job_args(build_parser(), argv)
    if not (args.pages or args.input) or (args.pages and not args.site):
        fail("stories", "give --pages with --site, and/or --input")
    clean = config_from_args(args, CleanConfig)
    defaults = CleanConfig()
    if clean.paper_length_filter and (clean.min_words, clean.max_words) != (defaults.min_words, defaults.max_words):
        # the paper's 50-500 was applied while stats.json and the card recorded the flags' values
        fail("stories", "--paper-length-filter applies LOT's 50-500 words: give it or --min-words/--max-words")
    if clean.max_words and clean.min_words > clean.max_words:
        fail("stories", f"--min-words {clean.min_words} is above --max-words {clean.max_words}: no story could pass")
    near = config_from_args(args, NearDupConfig, threshold=args.near_dup_threshold)
    if near.shingle < 1 or (near.sketch == "oph" and near.num_perm & (near.num_perm - 1)):
        fail(
            "stories",
            f"--shingle must be at least 1 (not {near.shingle}) and --num-perm a power of two "
            f"with --sketch oph (not {near.num_perm})",
        )
    try:
        bands_rows(near.threshold, near.num_perm)  # each story is keyed in the clean stage: check once here
    except ValueError as exc:
        fail("stories", f"--near_dup_threshold and --num-perm: {exc}")
    config = {
        "clean": dataclasses.asdict(clean),
        "word_limits": list(word_limits(clean)),  # what is applied (fewest, most; 0: no limit)
        "near_dup": dataclasses.asdict(near),
        "site": args.site,
        "pages": args.pages,
        "input": args.input,
    }
    p = make_pipeline(options)
    staging = staging_path(args.output)
    report = StoriesReport(
        staging,
        "stories",
        config=config,
        seed=args.seed,
        inputs=[],
        options=options,
        card=stories_card,
        input_paths=[x for x in (args.pages, args.input) if x],
    )
    raws, inputs = read_raw(p, args, report, functools.partial(steps.clean_and_key, config=clean, near=near))
    report.extra("inputs", inputs)  # the matched paths, in stats.json's "inputs" place
    cleaned = [raw | f"Clean{kind}" >> CleanStories(clean, report, near, made=kind == "Lines") for kind, raw in raws]
    repeated = tuple(cleaned) | RepeatedIds(steps.id_entries)
    final = tuple(cleaned) | Deduplicate(near, report, join(staging, "_spill-stories"))
    # one id per row: a later story with an earlier one's id (the same source and given id or
    # URL) is a duplicate_id reject, decided where the kept stories come out of the dedup
    final = final | report.stage(
        "dedup_id",
        steps.unique_id,
        input_id=operator.attrgetter("input_id"),
        pooled=False,
        side_inputs={"repeated": repeated},
    )
    rows = final | "ToRow" >> beam.Map(lambda s: s.to_row())
    report.tally(rows | WriteTable(join(staging, "stories"), STORIES_SCHEMA, lambda r: r["story_id"]))
    report.extra("duplicate_clusters", final | DuplicateClusters())
    report.finish(p)
    run_pipeline(p, commit_to=args.output)


if __name__ == "__main__":
    main(run, "stories")
