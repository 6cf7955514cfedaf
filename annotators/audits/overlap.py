"""8-gram overlap between test examples and a reference corpus (LOT section 5.6, Table 14).

Definition (stated in the job's card; tests recompute it independently):
- tokens of a text field: the placeholders `<mask>`, `[MASK]`, `<MASK>` are removed, then
  `[t for t in jieba.lcut(field, HMM=True) if t.strip()]` (or a whitespace / regex
  tokenizer for English);
- an example's 8-grams are the contiguous 8-grams of each text field separately (no 8-gram
  crosses two fields; each outline phrase is its own field), counted with multiplicity;
- the reference is the *set* of its 8-grams; per example n = #8-grams, o = #of them in the
  reference, ratio = o / n (0 when n = 0).
An n-gram is its tokens joined by "\\x1f", which no tokenizer keeps inside a token (Python
treats it as whitespace), so joined keys never collide.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence

from schemas.lot import CLOZET_MASK, PLOTCOM_MASK, SENPOS_MASK

GRAM_SEP = "\x1f"
PLACEHOLDERS = (CLOZET_MASK, SENPOS_MASK, PLOTCOM_MASK)
TOKENIZERS = ("jieba", "whitespace", "regex")
# The audit's tokenizer names (its --tokenizer values) -> annotators.text.tokenizers names.
TOKENIZER_SPECS = {"jieba": "jieba", "whitespace": "whitespace_v1", "regex": "word_punct_chars"}


@dataclasses.dataclass(frozen=True)
class OverlapConfig:
    n: int = dataclasses.field(
        default=8,
        metadata={  # LOT 5.6 (after Radford et al., 2019)
            "help": "n-gram length: LOT 5.6 reports the percentage of 8-grams"
        },
    )
    tokenizer: str = dataclasses.field(
        default="jieba",
        metadata={  # LOT 5.6: "the jieba tokenizer"
            "help": "jieba (LOT 5.6), whitespace or regex (word runs and single other characters)",
            "choices": TOKENIZERS,
        },
    )
    over_threshold: float = 0.1  # LOT Table 14 "# Exam >10%", Tables 15-16 "w/o Overlap"
    placeholders: tuple[str, ...] = PLACEHOLDERS  # LOT task placeholders, never text


@dataclasses.dataclass(frozen=True)
class ExampleGrams:
    """The 8-grams of one test example (with multiplicity), before scoring."""

    task: str
    split: str
    example_id: str
    grams: tuple[str, ...]


def strip_placeholders(text: str, placeholders: Sequence[str] = PLACEHOLDERS) -> str:
    for mark in placeholders:
        text = text.replace(mark, "")
    return text


def make_tokenizer(name: str) -> Callable[[str], list[str]]:
    """A function text -> non-whitespace tokens (annotators.text.tokenizers); jieba loads once."""
    if name not in TOKENIZER_SPECS:
        raise ValueError(f"unknown tokenizer {name!r}; choose one of {TOKENIZERS}")
    from annotators.text.tokenizers import get_tokenizer

    return get_tokenizer(TOKENIZER_SPECS[name]).tokens


def field_texts(record: dict, fields: Sequence[str]) -> list[str]:
    """The texts of `fields` present in `record`; a list field gives one text per item."""
    texts: list[str] = []
    for field in fields:
        value = record.get(field)
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, (list, tuple)):
            texts.extend(v for v in value if isinstance(v, str))
    return texts


def ngrams(tokens: Sequence[str], n: int) -> list[str]:
    """Contiguous n-grams of one token sequence, as joined keys, in order."""
    return [GRAM_SEP.join(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def field_tokens(texts: Iterable[str], tokenize: Callable[[str], list[str]], config: OverlapConfig) -> list[list[str]]:
    return [tokenize(strip_placeholders(t, config.placeholders)) for t in texts]


def example_ngrams(
    texts: Iterable[str], tokenize: Callable[[str], list[str]], config: OverlapConfig
) -> tuple[str, ...]:
    """All n-grams of an example's fields, field by field, with multiplicity."""
    grams: list[str] = []
    for tokens in field_tokens(texts, tokenize, config):
        grams.extend(ngrams(tokens, config.n))
    return tuple(grams)


def matched_ngrams(token_lists: Iterable[Sequence[str]], wanted: frozenset | set, n: int) -> list[str]:
    """Distinct n-grams of a reference document that are in `wanted`, sorted.

    Only these leave the worker, so the shuffle is bounded by the test side, not the
    reference (SPEC "Audits": references as large as 120 GB).
    """
    if not wanted:
        return []
    found: set[str] = set()
    for tokens in token_lists:
        for i in range(len(tokens) - n + 1):
            gram = GRAM_SEP.join(tokens[i : i + n])
            if gram in wanted:
                found.add(gram)
    return sorted(found)


def score_example(example: ExampleGrams, reference: frozenset | set) -> dict:
    """One row of the examples table: n, o and ratio = o / n (0 when n = 0)."""
    n = len(example.grams)
    o = sum(1 for g in example.grams if g in reference)
    return {
        "task": example.task,
        "split": example.split,
        "example_id": example.example_id,
        "n": n,
        "o": o,
        "ratio": o / n if n else 0.0,
    }


def is_example(row) -> bool:
    """A test example's n-grams (ExampleGrams), not a reference document's matches."""
    return isinstance(row, ExampleGrams)


def score_against(example: ExampleGrams, matched: dict) -> dict:
    """`score_example` against the reference n-grams matched for the example's task."""
    return score_example(example, matched.get(example.task, frozenset()))


def matched_entries(matched) -> list[tuple[str, frozenset]]:
    """(task, n-grams) of one document's MatchedGrams, none when it matched nothing."""
    return [(matched.task, matched.grams)] if matched.grams else []


class UnionSets:
    """The fold of n-gram sets into one frozenset (pipelines.engine.folds)."""

    def create(self) -> set:
        return set()

    def add(self, acc: set, grams: Iterable[str]) -> set:
        acc.update(grams)
        return acc

    def merge(self, accs: Iterable[set]) -> set:
        out: set = set()
        for acc in accs:
            out |= acc
        return out

    def result(self, acc: set) -> frozenset:
        return frozenset(acc)
