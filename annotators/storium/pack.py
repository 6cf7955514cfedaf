"""Cassowary context packing (paper section 3.1.1; original layout: PEERS.md 4.3).

Each non-empty segment gets a length variable. Required: 1 <= len <= true_tokens and
sum(len) == min(budget, sum(true_tokens)). Strong wishes: the entry text == 256 at ten times
the strength of the others, every other segment == 100. So everything fits whole when it
can; otherwise context shrinks toward 100 tokens each and the entry keeps
min(its length, 256, budget - other segments) tokens. The original added its strong list
twice and never its medium list (a bug); doubling every strong wish alike changes no
solution, so it is added once here. Solver values are rounded and, if rounding ever broke
a required constraint, repaired deterministically. More segments than budget tokens
cannot satisfy len >= 1: that example is dropped with a reason.
"""
from __future__ import annotations

import dataclasses

import kiwisolver as kiwi

from annotators.core.outcome import Drop
from annotators.storium.context import Context, SegmentSpec
from annotators.text.tokenizers import Tokenizer


@dataclasses.dataclass(frozen=True)
class PackConfig:
    budget: int = dataclasses.field(default=1024, metadata={
        "help": "tokens per packed example (GPT-2 max_length, the original's budget; PEERS.md 4.3)"})
    entry_preferred: int = dataclasses.field(default=256, metadata={
        "help": "preferred entry length in tokens (paper 3.1.1, original)"})
    entry_weight: float = dataclasses.field(default=10.0, metadata={
        "help": "the entry wish is (10, 0, 0): ten times 'strong' (original)"})
    other_preferred: int = dataclasses.field(default=100, metadata={
        "help": "MIN_LENGTH wish for every other segment (original)"})


def solve_lengths(true_lengths: list[int], entry_index: int | None,
                  config: PackConfig = PackConfig()) -> list[int]:
    """Token lengths per segment under the constraints above (kiwisolver)."""
    if len(true_lengths) > config.budget or any(t < 1 for t in true_lengths):
        raise ValueError("needs 1 <= true length and at most `budget` segments")
    total = min(config.budget, sum(true_lengths))
    solver = kiwi.Solver()
    lens = [kiwi.Variable(f"len{i}") for i in range(len(true_lengths))]
    for var, true in zip(lens, true_lengths):
        solver.addConstraint(var >= 1)
        solver.addConstraint(var <= true)
    if lens:
        solver.addConstraint(sum(lens[1:], lens[0] + 0) == total)
    for i, var in enumerate(lens):
        if i == entry_index:
            solver.addConstraint((var == config.entry_preferred) | kiwi.strength.strong * config.entry_weight)
        else:
            solver.addConstraint((var == config.other_preferred) | kiwi.strength.strong)
    solver.updateVariables()
    return _repair([round(v.value()) for v in lens], true_lengths, total, entry_index)


def _repair(values: list[int], true_lengths: list[int], total: int, entry_index: int | None) -> list[int]:
    """Clamp to [1, true] and fix the sum: surplus to the entry first, deficit from context last-first."""
    values = [min(max(v, 1), t) for v, t in zip(values, true_lengths)]
    order = ([entry_index] if entry_index is not None else []) + [
        i for i in range(len(values)) if i != entry_index]
    diff = total - sum(values)
    for i in order if diff > 0 else []:
        step = min(diff, true_lengths[i] - values[i])
        values[i], diff = values[i] + step, diff - step
    for i in reversed(order) if diff < 0 else []:
        step = min(-diff, values[i] - 1)
        values[i], diff = values[i] - step, diff + step
    return values


def cut(text: str, spans: list[tuple[int, int]], n: int, keep: str) -> str:
    """The first (keep="start") or last (keep="end") n tokens of text, original spacing kept."""
    if n >= len(spans):
        return text[spans[0][0]:spans[-1][1]] if spans else ""
    if keep == "end":
        return text[spans[len(spans) - n][0]:spans[-1][1]]
    return text[spans[0][0]:spans[n - 1][1]]


def pack(context: Context, tokenizer: Tokenizer, config: PackConfig = PackConfig()) -> dict | Drop:
    """One packed example row (without `split`), or a Drop when the budget cannot hold it."""
    segs: list[tuple[SegmentSpec, list]] = [(s, tokenizer.spans(s.text)) for s in context.segments]
    segs = [(s, spans) for s, spans in segs if spans]
    if len(segs) > config.budget:
        return Drop("budget_below_segments", f"{len(segs)} segments, budget {config.budget}")
    entry_index = next((i for i, (s, _) in enumerate(segs) if s.kind == "entry"), None)
    lengths = solve_lengths([len(spans) for _, spans in segs], entry_index, config)
    out = [{"kind": s.kind, "source_id": s.source_id, "text": cut(s.text, spans, n, s.keep),
            "true_tokens": len(spans), "tokens": n} for (s, spans), n in zip(segs, lengths)]
    return {"example_id": f"storium:{context.entry_id}", "story_id": context.story_id,
            "entry_id": context.entry_id, "segments": out, "total_tokens": sum(lengths),
            "true_total_tokens": sum(len(spans) for _, spans in segs), "budget": config.budget,
            "tokenizer": tokenizer.name}
