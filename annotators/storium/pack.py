"""Cassowary context packing (paper section 3.1.1; original layout: PEERS.md 4.3).

The budget counts every token of the serialised example, as GPT-2's 1024-token limit does:
each segment starts with a separator (the original's added `<|SEPARATOR|>`, or
`<|endoftext|>` before the character) and the entry text ends with an end token
(`<|endoftext|>`); both are special tokens, one token each in any tokenizer
(`separator_tokens`, `end_tokens`). A segment's length is its text tokens plus its special
tokens, as in the original, where true lengths include separator and eos.

Each text is first cut to its first `field_token_cap` tokens, as the original's
`tokenizer.encode(..., max_length=1024)` cuts every field (`true_tokens` counts those; with a
subword tokenizer, `hf:PATH`, each kept text is encoded on its own and `tokens` is what it
holds, at most the solver's length, so `total_tokens` never exceeds the budget); a
missing character field is the special token `<|MISSING|>`, one token. Each non-empty
segment (a solver leaf, annotators.storium.leaves) gets a length variable.
Required: max(1, specials + `min_text_tokens`) <= len <= true length and sum(len) ==
min(budget, sum(true lengths)); the original's only lower bound is len >= 1, so a leaf may
keep its separator alone (`min_text_tokens` 0, the default; 1 makes every leaf keep a text
token, as storybench did before). Strong wishes: the entry text == 256 at ten times
the strength of the others, every other segment == 100. So everything fits whole when it
can; otherwise context shrinks toward 100 tokens each and the entry keeps
min(its length, 256, budget - other segments) tokens. The original added its strong list
twice and never its medium list (a bug); doubling every strong wish alike changes no
solution, so it is added once here. Solver values are rounded and, if rounding ever broke
a required constraint, repaired deterministically (the original truncates with int()).
When the budget cannot hold every segment's minimum, the example is dropped with a reason.
"""

from __future__ import annotations

import dataclasses

import kiwisolver as kiwi

from annotators.core.outcome import Drop
from annotators.storium.context import Context, SegmentSpec
from annotators.text.cuts import Cut, Offsets, fit_heads, fit_tails
from annotators.text.tokenizers import Tokenizer


@dataclasses.dataclass(frozen=True)
class PackConfig:
    budget: int = dataclasses.field(
        default=1024,
        metadata={"help": "tokens per packed example (GPT-2 max_length, the original's budget; PEERS.md 4.3)"},
    )
    entry_preferred: int = dataclasses.field(
        default=256, metadata={"help": "preferred entry length in tokens (paper 3.1.1, original)"}
    )
    entry_weight: float = dataclasses.field(
        default=10.0, metadata={"help": "the entry wish is (10, 0, 0): ten times 'strong' (original)"}
    )
    other_preferred: int = dataclasses.field(
        default=100, metadata={"help": "MIN_LENGTH wish for every other segment (original)"}
    )
    separator_tokens: int = dataclasses.field(
        default=1,
        metadata={
            "help": "special tokens before every segment, counted in the budget (the original's "
            "<|SEPARATOR|> or <|endoftext|>: 1; 0 counts text tokens only)"
        },
    )
    end_tokens: int = dataclasses.field(
        default=1,
        metadata={
            "help": "special tokens after the entry text, counted in the budget (the original's <|endoftext|>: 1)"
        },
    )
    field_token_cap: int = dataclasses.field(
        default=1024,
        metadata={
            "help": "each segment's text is cut to its first N tokens before packing, as the original's "
            "tokenizer.encode(max_length=1024) does (a text kept by its end keeps the end of those); "
            "0: no cap"
        },
    )
    min_text_tokens: int = dataclasses.field(
        default=0,
        metadata={
            "help": "text tokens every segment keeps at least: 0 lets a segment shrink to its separator "
            "(the original's len >= 1); 1 keeps one text token each",
            "choices": (0, 1),
        },
    )

    def overhead(self, kind: str) -> int:
        """Special tokens a segment of this kind carries."""
        return self.separator_tokens + (self.end_tokens if kind == "entry" else 0)

    def minimum(self, kind: str) -> int:
        """The smallest length (special tokens included) a segment of this kind may get."""
        return max(1, self.overhead(kind) + self.min_text_tokens)


def solve_lengths(
    true_lengths: list[int],
    entry_index: int | None,
    config: PackConfig = PackConfig(),
    minimums: list[int] | None = None,
) -> list[int]:
    """Token lengths per segment under the constraints above (kiwisolver); `minimums`
    (default 1 each) are the smallest lengths allowed."""
    minimums = minimums or [1] * len(true_lengths)
    if sum(minimums) > config.budget or any(t < m or m < 1 for t, m in zip(true_lengths, minimums)):
        raise ValueError("needs 1 <= minimum <= true length and the minimums within `budget`")
    total = min(config.budget, sum(true_lengths))
    solver = kiwi.Solver()
    lens = [kiwi.Variable(f"len{i}") for i in range(len(true_lengths))]
    for var, true, low in zip(lens, true_lengths, minimums):
        solver.addConstraint(var >= low)
        solver.addConstraint(var <= true)
    if lens:
        solver.addConstraint(sum(lens[1:], lens[0] + 0) == total)
    for i, var in enumerate(lens):
        if i == entry_index:
            solver.addConstraint((var == config.entry_preferred) | kiwi.strength.strong * config.entry_weight)
        else:
            solver.addConstraint((var == config.other_preferred) | kiwi.strength.strong)
    solver.updateVariables()
    return _repair([round(v.value()) for v in lens], true_lengths, total, entry_index, minimums)


def _repair(
    values: list[int], true_lengths: list[int], total: int, entry_index: int | None, minimums: list[int]
) -> list[int]:
    """Clamp to [minimum, true] and fix the sum: surplus to the entry first, deficit from context last-first."""
    values = [min(max(v, m), t) for v, t, m in zip(values, true_lengths, minimums)]
    order = ([entry_index] if entry_index is not None else []) + [i for i in range(len(values)) if i != entry_index]
    diff = total - sum(values)
    for i in order if diff > 0 else []:
        step = min(diff, true_lengths[i] - values[i])
        values[i], diff = values[i] + step, diff - step
    for i in reversed(order) if diff < 0 else []:
        step = min(-diff, values[i] - minimums[i])
        values[i], diff = values[i] - step, diff + step
    return values


def cut(text: str, spans: list[tuple[int, int]], n: int, keep: str) -> str:
    """The first (keep="start") or last (keep="end") n tokens of text, original spacing kept."""
    if n <= 0:
        return ""
    if n >= len(spans):
        return text[spans[0][0] : spans[-1][1]] if spans else ""
    if keep == "end":
        return text[spans[len(spans) - n][0] : spans[-1][1]]
    return text[spans[0][0] : spans[n - 1][1]]


def cut_segments(tokenizer: Tokenizer, segs: list, kept: list[int]) -> list[tuple[str, int]]:
    """(text, tokens it holds) of each (segment, spans) cut to its kept tokens. A subword
    tokenizer's cuts are encoded on their own and hold at most the kept tokens
    (annotators.text.cuts); a special segment is its one token."""
    out = [(cut(s.text, spans, n, s.keep), n) for (s, spans), n in zip(segs, kept)]
    if getattr(tokenizer, "context_free", True):
        return out
    heads = [i for i, ((s, _), n) in enumerate(zip(segs, kept)) if not s.special and n > 0 and s.keep != "end"]
    tails = [i for i, ((s, _), n) in enumerate(zip(segs, kept)) if not s.special and n > 0 and s.keep == "end"]
    cuts = [Cut(segs[i][0].text, Offsets.of(segs[i][1]), segs[i][1][0][0], kept[i]) for i in heads]
    for i, (end, count) in zip(heads, fit_heads(tokenizer, cuts)):
        out[i] = (segs[i][0].text[segs[i][1][0][0] : end], count)
    cuts = [
        Cut(segs[i][0].text, Offsets.of(segs[i][1]), segs[i][1][-1][1], kept[i], floor=segs[i][1][0][0]) for i in tails
    ]
    for i, (start, count) in zip(tails, fit_tails(tokenizer, cuts)):
        out[i] = (segs[i][0].text[start : segs[i][1][-1][1]], count)
    return out


def _spans(spec: SegmentSpec, tokenizer: Tokenizer, config: PackConfig) -> list:
    """Token spans of a segment's text, at most `field_token_cap`; a special token
    (<|MISSING|>) is one token."""
    if spec.special:
        return [(0, len(spec.text))]
    spans = tokenizer.spans(spec.text)
    return spans[:cap] if (cap := config.field_token_cap) > 0 else spans


def pack(context: Context, tokenizer: Tokenizer, config: PackConfig = PackConfig()) -> dict | Drop:
    """One packed example row (without `split`), or a Drop when the budget cannot hold it.

    `total_tokens` is the serialised length (text tokens + `special_tokens`), at most the budget;
    `true_tokens` counts a segment's text tokens up to `field_token_cap`."""
    segs: list[tuple[SegmentSpec, list]] = [(s, _spans(s, tokenizer, config)) for s in context.segments]
    segs = [(s, spans) for s, spans in segs if spans]
    overheads = [config.overhead(s.kind) for s, _ in segs]
    minimums = [config.minimum(s.kind) for s, _ in segs]
    if sum(minimums) > config.budget:
        return Drop(
            "budget_below_segments",
            f"{len(segs)} segments need {sum(minimums)} tokens ({sum(overheads)} special tokens, "
            f"{config.min_text_tokens} text token(s) each), budget {config.budget}",
        )
    entry_index = next((i for i, (s, _) in enumerate(segs) if s.kind == "entry"), None)
    full = [len(spans) + o for (_, spans), o in zip(segs, overheads)]
    lengths = solve_lengths(full, entry_index, config, minimums)
    kept = [n - o for n, o in zip(lengths, overheads)]
    cuts = cut_segments(tokenizer, segs, kept)
    out = [
        {
            "kind": s.kind,
            "field": s.field,
            "source_id": s.source_id,
            "text": text,
            "true_tokens": len(spans),
            "tokens": n,
        }
        for (s, spans), (text, n) in zip(segs, cuts)
    ]
    return {
        "example_id": f"storium:{context.entry_id}",
        "story_id": context.story_id,
        "entry_id": context.entry_id,
        "segments": out,
        "special_tokens": sum(overheads),
        "total_tokens": sum(n for _, n in cuts) + sum(overheads),
        "true_total_tokens": sum(full),
        "budget": config.budget,
        "tokenizer": tokenizer.name,
    }
