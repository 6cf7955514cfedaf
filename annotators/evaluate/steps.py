"""What the evaluate job's stages apply: parse predictions and gold, align them, score each
pair, and turn every example's scores into the metrics table (issue 16).

Alignment never guesses: by line, prediction line N meets gold example N (every line counts,
a blank or broken line is rejected without shifting the lines after it); by id, a
prediction's `example_id` (or `id`) meets the gold example with that id. A gold example with
no prediction, and a prediction with no gold example, are rejects rows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from annotators.core.dedup import input_order
from annotators.core.jsonl import json_object
from annotators.core.outcome import Drop
from annotators.evaluate import glge_metrics as gm
from annotators.evaluate import glge_original as go
from annotators.evaluate import lot_metrics as lm
from annotators.evaluate import rouge155
from annotators.evaluate.config import ACCURACY_TASKS, ANSWER_FIELD, GENERATION_TASKS, EvalConfig
from annotators.evaluate.metric_rows import metric_rows
from schemas.evaluate import ExampleScore, Gold, Pair, Prediction

READ_ERROR = "__read_error__"
# The longest prediction or gold line scored (issue 28): LOT stories are at most 20,000
# characters (60 KB of UTF-8), GLGE lines far less; a 1 MB line took 27 s and 1.3 GB of
# metric tables, 21 MB never ended. A longer line is an `over_size_limit` rejects row.
MAX_RECORD_BYTES = 256 * 1024


def _oversized(raw) -> Drop | None:
    size = len(raw) if isinstance(raw, (bytes, str)) else 0
    if size > MAX_RECORD_BYTES:
        return Drop(
            "over_size_limit",
            {
                "bytes": size,
                "limit_bytes": MAX_RECORD_BYTES,
                "message": f"a {size:,}-byte line is over the {MAX_RECORD_BYTES:,}-byte limit per record",
            },
        )
    return None


# ----------------------------------------------------------------------------- parsing
def line_number(input_id: str) -> str:
    """The line number of an input id "name:N" (the key of line alignment)."""
    return input_id.rsplit(":", 1)[-1]


def _json_object(raw: bytes) -> dict | Drop:
    try:
        text = raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as exc:
        return Drop("not_utf8", f"not UTF-8: {exc}")
    if not text.strip():
        return Drop("blank_line", "empty line (it keeps its line number: later lines do not shift)")
    return json_object(text)


def record_id(record: dict) -> str | None:
    """The example id a record carries (`example_id`, else `id`), as text."""
    for name in ("example_id", "id"):
        value = record.get(name)
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
    return None


def check_answer(task: str, value, where: str) -> Drop | None:
    """None when `value` has the type the task's answer field needs, else the Drop."""
    field = ANSWER_FIELD[task]
    if value is None:
        return Drop("missing_field", f"{where}: no `{field}`")
    if task in ACCURACY_TASKS:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            return Drop(
                "bad_field_type",
                f"{where}: `label` is a {type(value).__name__}; an integer or a string of digits is needed",
            )
        if isinstance(value, str) and not value.strip().lstrip("-").isdigit():
            return Drop("bad_field_type", f"{where}: `label` {value[:40]!r} is not an integer")
        return None
    if task in GENERATION_TASKS:
        if not isinstance(value, str):
            return Drop("bad_field_type", f"{where}: `{field}` is a {type(value).__name__}, not a string")
        return None
    # chapterbreak: a list of finite numbers
    if not isinstance(value, list) or not value:
        return Drop("bad_field_type", f"{where}: `scores` must be a non-empty list of numbers")
    for score in value:
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            return Drop("bad_field_type", f"{where}: `scores` holds {score!r}, not a finite number")
    return None


def text_line(raw: bytes) -> dict | Drop:
    """A GLGE line (plain text, one example per line; an empty line is an empty answer)."""
    try:
        return {"text": raw.decode("utf-8") if isinstance(raw, bytes) else raw}
    except UnicodeDecodeError as exc:
        return Drop("not_utf8", f"not UTF-8: {exc}")


def parse_prediction(element: tuple[str, bytes], config: EvalConfig) -> list[Prediction] | Drop:
    """One predictions line -> its Prediction keyed by line number or id."""
    input_id, raw = element
    too_big = _oversized(raw)
    if too_big:
        return too_big
    if config.task in gm.GLGE_TASKS:
        record = text_line(raw)
        return record if isinstance(record, Drop) else [Prediction(line_number(input_id), input_id, record)]
    record = _json_object(raw)
    if isinstance(record, Drop):
        return record
    bad = check_answer(config.task, record.get(ANSWER_FIELD[config.task]), "prediction")
    if bad:
        return bad
    if config.effective_align() == "id":
        key = record_id(record)
        if key is None:
            return Drop("missing_field", "prediction: no `example_id` or `id` (needed with --align id)")
    else:
        key = line_number(input_id)
    return [Prediction(key, input_id, record)]


def _gold_fields(task: str, record: dict, where: str) -> Drop | None:
    """None when a gold record has what scoring needs (ChapterBreak gold carries no answer
    field: its gold candidate comes first in the predicted scores)."""
    if task == "chapterbreak":
        negatives = record.get("negatives")
        if not isinstance(negatives, (list, tuple)) or not negatives:
            return Drop("missing_field", f"{where}: no `negatives` list")
        return None
    bad = check_answer(task, record.get(ANSWER_FIELD[task]), where)
    if bad:
        return bad
    if task == "outgen":
        outline = record.get("outline")
        if not isinstance(outline, (list, tuple)) or not all(isinstance(p, str) for p in outline):
            return Drop("bad_field_type", f"{where}: `outline` must be a list of strings")
    return None


def parse_gold_line(element: tuple[str, bytes], config: EvalConfig) -> list[Gold] | Drop:
    """One gold .jsonl line (the released LOT format, or any record with the answer field),
    or one line of a GLGE target file."""
    input_id, raw = element
    too_big = _oversized(raw)
    if too_big:
        return too_big
    if config.task in gm.GLGE_TASKS:
        record = text_line(raw)
        key = line_number(input_id)
        return record if isinstance(record, Drop) else [Gold(key, input_id, key, record)]
    record = _json_object(raw)
    if isinstance(record, Drop):
        return record
    bad = _gold_fields(config.task, record, "gold")
    if bad:
        return bad
    example_id = record_id(record)
    if config.effective_align() == "id":
        if example_id is None:
            return Drop("missing_field", "gold: no `example_id` or `id` (needed with --align id)")
        key = example_id
    else:
        key = line_number(input_id)
    return [Gold(key, input_id, example_id or key, record)]


# a table's split column keeps the papers' names ("val"), its files Hugging Face's ("validation-*")
_SPLIT_NAMES = {"val": "validation", "valid": "validation", "dev": "validation"}


def same_split(name: str | None) -> str | None:
    """A split's name as --split and the split column compare it: `--split validation` (the
    name the table's files show) once matched no row of a table whose rows say "val"."""
    return _SPLIT_NAMES.get(name, name)


def parse_gold_row(element: tuple[str, dict], config: EvalConfig) -> list[Gold] | Drop:
    """One row of a storybench table (lot/<task>/ or chapterbreak examples/); rows of other
    splits pass with no output. The key is the id; line alignment renumbers later."""
    input_id, row = element
    if READ_ERROR in row:
        return Drop("unreadable_file", row[READ_ERROR])
    if config.task != "chapterbreak" and same_split(row.get("split")) != same_split(config.split):
        return []
    example_id = row.get("example_id")
    if not isinstance(example_id, str) or not example_id:
        return Drop("missing_field", "gold row: no `example_id`")
    bad = _gold_fields(config.task, row, "gold row")
    if bad:
        return bad
    return [Gold(example_id, input_id, example_id, row)]


def number_by_position(golds: Iterable[Gold]) -> list[Gold]:
    """Table rows in example_id order, keyed 1..n: the order of the LOT job's <split>.jsonl."""
    ordered = sorted(golds, key=lambda g: (g.example_id, g.input_id))
    return [g._replace(key=str(n)) for n, g in enumerate(ordered, start=1)]


# ----------------------------------------------------------------------------- alignment
def align(element: tuple[str, dict]) -> list[tuple[str, list[Pair] | Drop]]:
    """Grouped stage: one key's gold and predictions -> the pair, or a reason per record."""
    key, groups = element
    golds = sorted(groups.get("gold", []), key=lambda g: input_order(g.input_id))
    preds = sorted(groups.get("pred", []), key=lambda p: input_order(p.input_id))
    sources = sorted(groups.get("src", []), key=lambda g: input_order(g.input_id))
    out: list[tuple[str, list[Pair] | Drop]] = []
    for source in sources[1:]:
        out.append((source.input_id, Drop("duplicate_id", f"source key {key!r} also at {sources[0].input_id}")))
    if sources:
        if golds:
            out.append((sources[0].input_id, []))
            golds[0] = golds[0]._replace(record={**golds[0].record, "source": sources[0].record["text"]})
        else:
            out.append((sources[0].input_id, Drop("unexpected_source", f"no gold line for source key {key!r}")))
    elif "src" in groups and golds:
        # --source was given (the group is present) but has no line for this gold line
        for pred in preds[:1]:
            out.append((pred.input_id, []))
        out.append((golds[0].input_id, Drop("missing_source", f"no source line for gold key {key!r}")))
        for gold in golds[1:]:
            out.append((gold.input_id, Drop("duplicate_id", f"gold key {key!r} also at {golds[0].input_id}")))
        return out
    for gold in golds[1:]:
        out.append((gold.input_id, Drop("duplicate_id", f"gold key {key!r} also at {golds[0].input_id}")))
    for pred in preds[1:]:
        out.append((pred.input_id, Drop("duplicate_id", f"prediction key {key!r} also at {preds[0].input_id}")))
    if golds and preds:
        gold, pred = golds[0], preds[0]
        out.append((gold.input_id, []))
        out.append(
            (pred.input_id, [Pair(key, gold.example_id, pred.input_id, gold.input_id, pred.record, gold.record)])
        )
    elif golds:
        out.append((golds[0].input_id, Drop("missing_prediction", f"no prediction for gold key {key!r}")))
    elif preds:
        out.append((preds[0].input_id, Drop("unexpected_prediction", f"no gold example for key {key!r}")))
    return out


# ----------------------------------------------------------------------------- scoring
def label_text(value) -> str:
    """A label compared as text, as PEERS.md 1.5 advises (ClozeT "0"/"1", SenPos ints)."""
    return str(value).strip() if isinstance(value, str) else str(int(value))


def score_pair(pair: Pair, config: EvalConfig, rouge_exceptions: Mapping[str, str] | None = None) -> list[ExampleScore]:
    """The `score` stage: one aligned example's scores (`rouge_exceptions`: ROUGE-1.5.5's
    WordNet exception db for the summarisation tasks' original mode, None for the empty one)."""
    task, compat = config.task, config.compat
    base = dict(
        task=task,
        key=pair.key,
        example_id=pair.example_id,
        prediction_input_id=pair.prediction_input_id,
        gold_input_id=pair.gold_input_id,
    )
    field = ANSWER_FIELD[task]
    if task in ACCURACY_TASKS:
        correct = label_text(pair.prediction[field]) == label_text(pair.gold[field])
        return [ExampleScore(values={"accuracy": float(correct)}, **base)]
    if task == "chapterbreak":
        return _score_chapterbreak(pair, base)
    if task in gm.GLGE_TASKS:
        scored = _score_glge(
            pair.prediction["text"], pair.gold["text"], task, compat, base, pair.gold.get("source"), rouge_exceptions
        )
        return scored if isinstance(scored, Drop) else [scored]
    candidate, reference = pair.prediction[field], pair.gold[field]
    cand_words, ref_words = lm.joined_words(candidate), lm.joined_words(reference)
    values = dict(lm.bleu_scores(cand_words, ref_words, compat))
    grams = lm.distinct_counts(cand_words, compat)
    coverage: tuple = ()
    if task == "outgen":
        outline = list(pair.gold["outline"])
        coverage = tuple(lm.coverage_values(outline, candidate, compat))
        values["order"] = lm.order_score(outline, reference, candidate, compat)
        values["coverage"] = sum(coverage) / len(coverage) if coverage else None
    return [ExampleScore(values=values, grams=grams, coverage=coverage, **base)]


# The ROUGE-L tables (ROUGE-1.5.5's, coco's and rouge-score's, pure Python) hold one cell per
# pair of predicted and gold tokens: a pair over this many is an `over_size_limit` row (GLGE
# summaries and questions have at most a few hundred tokens; 2,000 x 2,000 takes pycocoevalcap's
# full table about 4 s and 60 MB).
MAX_LCS_CELLS = 4_000_000


def _lcs_too_costly(pred_tokens: int, gold_tokens: int, scorer: str) -> Drop | None:
    cells = pred_tokens * gold_tokens
    if cells > MAX_LCS_CELLS:
        return Drop(
            "over_size_limit",
            {
                "prediction_words": pred_tokens,
                "gold_words": gold_tokens,
                "limit_cells": MAX_LCS_CELLS,
                "message": f"{cells:,} word pairs for the {scorer} ROUGE-L table (limit {MAX_LCS_CELLS:,})",
            },
        )
    return None


def _glge_too_costly(pred: str, gold: str, task: str, compat: str) -> Drop | None:
    """The ROUGE-L table's size check of the summarisation and QG tasks, on the tokens the
    mode's scorer reads (whitespace words; rouge-score's tokens in clean mode)."""
    if task not in gm.SUMMARY_TASKS + gm.QG_TASKS:
        return None
    if compat == "original":
        return _lcs_too_costly(len(pred.split()), len(gold.split()), "official")
    return _lcs_too_costly(len(gm.rouge_tokens(pred)), len(gm.rouge_tokens(gold)), "rouge-score")


def _score_glge(
    pred: str,
    gold: str,
    task: str,
    compat: str,
    base: dict,
    source: str | None = None,
    rouge_exceptions: Mapping[str, str] | None = None,
) -> ExampleScore | Drop:
    too_big = _glge_too_costly(pred, gold, task, compat)
    if too_big:
        return too_big
    if compat == "original" and task in gm.SUMMARY_TASKS:
        docs = go.summary_documents(task, pred, gold)
        if isinstance(docs, str):
            return Drop("skipped_by_official_scorer", docs)
        doc = rouge155.document_scores(*docs, exceptions=rouge_exceptions)
        f = {metric: rpf[2] for metric, rpf in doc.items()}
        return ExampleScore(
            values={m: 100 * v for m, v in f.items()}, grams={"line": int(base["key"]) - 1, "f": f}, **base
        )
    if compat == "original" and task in gm.QG_TASKS:
        group, hyp, ref = go.qg_texts(task, source or "", pred, gold)
        return ExampleScore(
            values={"rouge-l": 100 * go.coco_rouge_l(hyp, [ref])},
            grams={"line": int(base["key"]), "group": group, "hyp": hyp, "ref": ref},
            **base,
        )
    if task == "personachat":
        values, grams = gm.personachat_scores(pred, gold, compat)
        return ExampleScore(values=values, grams=grams, **base)
    if task == "coqa":
        return ExampleScore(values={"f1": 100 * gm.coqa_f1(pred, gold)}, **base)
    rouge = gm.rouge_scores(pred, gold)
    if task in gm.QG_TASKS:
        return ExampleScore(values={"rouge-l": rouge["rouge-l"]}, grams={"hyp": pred, "ref": gold}, **base)
    return ExampleScore(values=rouge, **base)


def chapterbreak_correct(scores: Sequence[float]) -> bool:
    """An example is right when no negative scores above the gold (scores[0]): ties count as
    correct (PEERS.md 2.3)."""
    return all(s <= scores[0] for s in scores[1:])


def _score_chapterbreak(pair: Pair, base: dict) -> list[ExampleScore] | Drop:
    scores, negatives = pair.prediction["scores"], pair.gold["negatives"]
    if len(scores) != 1 + len(negatives):
        return Drop("score_count_mismatch", f"{len(scores)} scores for 1 gold + {len(negatives)} negatives")
    correct = chapterbreak_correct(scores)
    source, length = pair.gold.get("source"), pair.gold.get("prefix_length")
    boundary = pair.gold.get("boundary")
    groups = ["all"]
    if source is not None:
        groups.append(f"source={source}")
    if length is not None:
        groups.append(f"prefix_length={length}")
    if source is not None and length is not None:
        groups.append(f"source={source},prefix_length={length}")
    if boundary is not None:
        groups.append(f"boundary={boundary}")
    return [ExampleScore(values={"accuracy": float(correct)}, groups=tuple(groups), **base)]


# ----------------------------------------------------------------------------- the metrics table
def corpus_metrics(task: str, examples: Iterable[tuple[str, dict, dict]], compat: str = "original") -> dict:
    """metric -> value over (example_id, prediction record, gold record) triples already
    aligned, in line order (GLGE's official scorers number the lines 1..n): the `score` stage
    and the metrics table of `pipelines.evaluate` (group "all"), as the lm-evaluation-harness
    tasks (annotators/harness) score generations. An example the official scorer skips (a
    Drop: the job's rejects row) is left out, as the job leaves it out."""
    config = EvalConfig(task=task, compat=compat)
    scores = []
    for n, (example_id, prediction, gold) in enumerate(examples, start=1):
        pair = Pair(str(n), example_id, f"prediction:{n}", f"gold:{n}", prediction, gold)
        scored = score_pair(pair, config)
        if not isinstance(scored, Drop):
            scores.extend(scored)
    return {row["metric"]: row["value"] for row in metric_rows(scores, config) if row["group"] == "all"}
