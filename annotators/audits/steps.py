"""What the audit jobs apply to each record (pure functions; the jobs only wire them).

Overlap (LOT 5.6, Table 14): a parsed row becomes a test example's n-grams
(`ExampleGrams`), a reference document's text fields (`ReferenceDoc`), or, in `--lot` mode,
a marker that a train row was seen (`TrainRow`). Bias (LOT 5.5, Table 13): a LOT row becomes
a `BiasItem` with every context baseline's pick.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

from annotators.audits import bias as bb
from annotators.audits import overlap as ng
from annotators.audits import records as ar
from annotators.core.dedup import input_order, keeper_of
from annotators.core.outcome import Drop

BIAS_TASKS = ("clozet", "senpos")
BIAS_FIELDS = {"clozet": ("story", "plot0", "plot1"), "senpos": ("story", "sentence")}
_TOKENIZERS: dict = {}
_RESOURCES: dict = {}
_PREFILTERS: dict = {}  # task -> (its test n-grams, their TestStrings): the latest per task


class ReferenceDoc(NamedTuple):
    """The text fields of one reference document (tokenized only where they may match)."""

    task: str
    texts: list


class MatchedGrams(NamedTuple):
    """The distinct n-grams of one reference document that the test side holds (often none);
    merged (`merge_matched`), those of `docs` documents."""

    task: str
    grams: tuple
    docs: int = 1


def merge_matched(matched) -> list[MatchedGrams]:
    """One MatchedGrams per task (in task order) for a block's MatchedGrams: the union of their
    n-grams (sorted) and the number of documents."""
    grams: dict[str, set] = {}
    docs: dict[str, int] = {}
    for m in matched:
        grams.setdefault(m.task, set()).update(m.grams)
        docs[m.task] = docs.get(m.task, 0) + m.docs
    return [MatchedGrams(task, tuple(sorted(grams[task])), docs[task]) for task in sorted(grams)]


class TrainRow(NamedTuple):
    """In --lot mode: a train row was read (it is the reference, counted for the split check)."""

    task: str
    input_id: str = ""


def tokenizer(name: str):
    """The overlap tokenizer for this worker process (jieba's dictionary loads once, in setup:
    the empty cut loads it now, not on the first record)."""
    if name not in _TOKENIZERS:
        tokenize = ng.make_tokenizer(name)
        tokenize("")
        _TOKENIZERS[name] = tokenize
    return _TOKENIZERS[name]


@dataclasses.dataclass(frozen=True)
class Roles:
    """Which rows are test examples and which are reference documents, per source."""

    test_fields: dict  # task -> fields every test example must have
    reference_fields: dict  # task -> fields a reference record contributes
    lot: bool  # --lot: a row's split decides (train = reference); else by source


def overlap_row_fn(config: ng.OverlapConfig, roles: Roles, source_role: str | None, quiet: bool = False):
    """Stage fn: a RawRecord becomes an ExampleGrams, a ReferenceDoc or a TrainRow.

    In --lot mode the same files are read twice: the `lot_rows` Stage (source_role None)
    checks every row, scores val/test rows and marks train rows without tokenising them; the
    `lot_reference_rows` Stage (source_role "reference", quiet) tokenises train rows only and
    skips, without a second rejects row, whatever the first Stage rejected. Keeping the
    reference in its own PCollection lets it stream.
    """

    def fn(item: ar.RawRecord):
        record = item.payload if isinstance(item.payload, (dict, Drop)) else ar.parse_record(item.kind, item.payload)
        if isinstance(record, Drop):
            return [] if quiet else record
        is_train = record.get("split") == "train"
        if roles.lot and quiet and not is_train:
            return []
        if roles.lot or source_role == "test":
            fields = roles.test_fields[item.task]
            checked = ar.check_example(
                record,
                fields,
                list_fields=("outline",),
                default_split=None if roles.lot else "test",
                fallback_id=None if roles.lot else item.input_id,
            )
            if isinstance(checked, Drop):
                return [] if quiet else checked
            example_id, split = checked
        else:
            fields = ar.reference_fields_of(record, roles.reference_fields[item.task])
            if isinstance(fields, Drop):
                return fields
        texts = ng.field_texts(record, fields)
        if source_role == "reference":
            return [ReferenceDoc(item.task, texts)]
        if is_train and roles.lot:
            return [TrainRow(item.task, item.input_id)]
        grams = ng.example_ngrams(texts, tokenizer(config.tokenizer), config)
        return [ng.ExampleGrams(item.task, split, example_id, grams, item.input_id)]

    return fn


def example_id_entries(row) -> list[tuple[str, tuple]]:
    """(task/example_id, its input order) of a test example: what finds a repeated id
    (pipelines.engine.repeated_ids); nothing for a train row."""
    if not ng.is_example(row):
        return []
    return [(f"{row.task}/{row.example_id}", (input_order(row.input_id), row.input_id, ""))]


def unique_example_id(row, repeated) -> list | Drop:
    """A test example, or `duplicate_id` when an earlier row of its task (in input order)
    has its example_id: the examples table holds one row per id, never two figures for one."""
    first = keeper_of(repeated, row.input_id, lambda: "") if ng.is_example(row) else None
    if first is None:
        return [row]
    return Drop("duplicate_id", f"example_id {row.example_id!r} of {row.task} is also {first}'s, which keeps it")


def test_strings(task: str, wanted: frozenset) -> ng.TestStrings:
    """The prefilter of a task's test n-grams, built once per process: a pool worker unpickles
    the side input again for every bundle, so a copy equal to the held set reuses its prefilter
    (comparing the sets costs far less than building it)."""
    held = _PREFILTERS.get(task)
    if held is None or (held[0] is not wanted and held[0] != wanted):
        held = _PREFILTERS[task] = (wanted, ng.TestStrings(wanted))
    return held[1]


def reference_match_fn(config: ng.OverlapConfig, roles: Roles, quiet: bool = False):
    """Stage fn: a reference RawRecord becomes its MatchedGrams against `test_sets` (a side input
    {task: frozenset of test n-grams}), so a reference streams through tokenising and matching
    and only the matched n-grams of each document leave the worker."""
    to_docs = overlap_row_fn(config, roles, "reference", quiet)

    def fn(item: ar.RawRecord, test_sets: dict):
        docs = to_docs(item)
        if isinstance(docs, Drop):
            return docs
        matched = []
        for d in docs:
            wanted = test_sets.get(d.task, frozenset())
            strings = test_strings(d.task, wanted)
            texts = [ng.strip_placeholders(t, config.placeholders) for t in d.texts]
            # a field without a place that may hold a test n-gram matches nothing: not tokenized
            tokens = [tokenizer(config.tokenizer)(t) for t in texts if strings.may_hold(t)]
            matched.append(MatchedGrams(d.task, tuple(ng.matched_ngrams(tokens, wanted, config.n))))
        return matched

    return fn


def split_label(row) -> str:
    """ "task/split" of an overlap row, for the empty-split check."""
    return f"{row.task}/{row.split}" if isinstance(row, ng.ExampleGrams) else f"{row.task}/train"


def bias_resources() -> tuple:
    """(words, sentiment) for this worker: jieba and snownlp load once, in DoFn.setup."""
    if not _RESOURCES:
        _RESOURCES["words"], _RESOURCES["sentiment"] = bb.load_words(), bb.load_sentiment()
    return _RESOURCES["words"], _RESOURCES["sentiment"]


def bias_row_fn(config: bb.BiasConfig):
    """Stage fn: a LOT RawRecord becomes a BiasItem (context baselines for val/test only)."""

    def fn(item: ar.RawRecord):
        if isinstance(item.payload, Drop):
            return item.payload
        checked = ar.check_example(item.payload, BIAS_FIELDS[item.task])
        if isinstance(checked, Drop):
            return checked
        if item.payload.get("label") is None:
            return Drop("missing_field", "label")
        example_id, split = checked
        words, sentiment = bias_resources()
        built = bb.prepare(
            item.task, split, example_id, item.payload, words, sentiment, config, with_preds=split != "train"
        )
        return built if isinstance(built, Drop) else [built]

    return fn
