"""GLGE low-frequency score and level selections (GLGE paper section 2.4, equation 1).

Score(y) = sum of TF(w) over the tokens w of target y / number of y's tokens, where TF(w)
counts w among the tokens of all test-set targets. Tokens: the lower-cased target split
on whitespace (or by jieba for Chinese), keeping tokens that hold a letter or digit and are
not stop words. A target with no tokens left has no score and is never selected for Hard or
Medium+; ties go to the lower line index. Medium is a seeded random floor(n/2), chosen by
a stable hash of (seed, task, line index), never by arrival order.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from fractions import Fraction

from annotators.core.ids import stable_int
from annotators.text.tokenizers import get_tokenizer

# The job's tokenizer names -> the shared tokenizers (`annotators.text.tokenizers`):
# `whitespace_v1` splits like `str.split()`, `jieba` is precise mode with HMM; `hf:PATH` (a
# model's tokenizer.json, file or folder) and `gpt2:DIR` are passed through as they are.
TOKENIZER_SPECS = {"whitespace": "whitespace_v1", "jieba": "jieba"}
TOKENIZERS = tuple(TOKENIZER_SPECS)
SUBWORD_PREFIXES = ("hf:", "gpt2:")
STOP_WORD_LISTS = ("spacy_en", "spacy_zh", "none")


def _flag(default: str, text: str, choices: tuple[str, ...] | None):
    """A config field with the help text and choices its generated job flag shows."""
    return dataclasses.field(default=default, metadata={"help": text, "choices": choices})


def tokenizer_spec(name: str) -> str:
    """The shared tokenizer (annotators.text.tokenizers) a tokenizer flag value names."""
    if name in TOKENIZER_SPECS:
        return TOKENIZER_SPECS[name]
    if name.startswith(SUBWORD_PREFIXES):
        return name
    raise ValueError(f"unknown tokenizer {name!r}; choose from {TOKENIZERS} or hf:PATH (a tokenizer.json)")


def tokenizer_name(name: str) -> str:
    """What stats.json and the card call a tokenizer flag value: a subword tokenizer's
    `name` (`hf:<model type>:<sha256 prefix>`, never the path), else the value itself."""
    return get_tokenizer(name).name if name.startswith(SUBWORD_PREFIXES) else name


@dataclasses.dataclass(frozen=True)
class TokenConfig:
    """How targets become tokens; the paper names neither tokenizer nor stop words.

    Defaults are for GLGE tasks: the data is pre-tokenised (PEERS.md 3.4), lower-cased
    BERT-uncased text (PEERS.md 3.1); GLGE 2.4 says "remove the stop words" without a list.
    """

    tokenizer: str = _flag(
        "whitespace",
        "how GLGE-task targets are split into tokens: whitespace, jieba, or "
        "hf:PATH, a model's tokenizer.json (file or folder) read offline",
        None,
    )
    stop_words: str = _flag("spacy_en", "stop words removed from GLGE-task targets", STOP_WORD_LISTS)
    lowercase: bool = dataclasses.field(
        default=True, metadata={"help": "lower-case targets before tokenising (no job flag: GLGE data is uncased)"}
    )


@dataclasses.dataclass(frozen=True)
class LotTokenConfig(TokenConfig):
    """`TokenConfig` for LOT tasks (Chinese): jieba words and spaCy's Chinese stop words."""

    tokenizer: str = _flag("jieba", "how LOT-task targets are split into tokens: jieba, whitespace or hf:PATH", None)
    stop_words: str = _flag("spacy_zh", "stop words removed from LOT-task targets", STOP_WORD_LISTS)


_STOP_WORDS: dict[str, frozenset[str]] = {}


def stop_word_set(name: str) -> frozenset[str]:
    """The named stop-word list, loaded once per process (spaCy's lists, no model)."""
    if name not in STOP_WORD_LISTS:
        raise ValueError(f"unknown stop-word list {name!r}; choose from {STOP_WORD_LISTS}")
    if name not in _STOP_WORDS:
        if name == "spacy_en":
            from spacy.lang.en.stop_words import STOP_WORDS
        elif name == "spacy_zh":
            from spacy.lang.zh.stop_words import STOP_WORDS
        else:
            STOP_WORDS = ()
        _STOP_WORDS[name] = frozenset(w.lower() for w in STOP_WORDS)
    return _STOP_WORDS[name]


def preload(config: TokenConfig) -> None:
    """Load the stop-word list (and jieba's dictionary) now: for `DoFn.setup`."""
    stop_word_set(config.stop_words)
    if config.tokenizer == "jieba":
        from annotators.text.zh_tokens import load

        load()
    get_tokenizer(tokenizer_spec(config.tokenizer))


def _has_letter_or_digit(token: str) -> bool:
    return any(ch.isalnum() for ch in token)


def tokens(text: str, config: TokenConfig = TokenConfig()) -> list[str]:
    """The scored tokens of one target (see the module docstring)."""
    return tokens_of([text], config)[0]


def tokens_of(texts: Sequence[str], config: TokenConfig = TokenConfig()) -> list[list[str]]:
    """The scored tokens of many targets (a subword tokenizer encodes them in one batch); a
    subword token is its text without the spaces it carries (GPT-2's " the" is "the")."""
    tok = get_tokenizer(tokenizer_spec(config.tokenizer))
    texts = [t.lower() for t in texts] if config.lowercase else list(texts)
    stop = stop_word_set(config.stop_words)
    out = []
    for toks in tok.tokens_many(texts):
        raw = (t.strip() for t in toks)
        out.append([t for t in raw if _has_letter_or_digit(t) and t not in stop])
    return out


def term_frequencies(test_tokens: Iterable[Sequence[str]]) -> Counter:
    """TF(w): occurrences of w among the tokens of all test targets."""
    tf: Counter = Counter()
    for toks in test_tokens:
        tf.update(toks)
    return tf


def score_parts(toks: Sequence[str], tf: Counter) -> tuple[int, int]:
    """(sum of TF over the tokens, number of tokens): the exact fraction behind Score(y)."""
    return sum(tf.get(t, 0) for t in toks), len(toks)


def score(toks: Sequence[str], tf: Counter) -> float | None:
    """Score(y) of equation 1, or None when y has no tokens left."""
    total, count = score_parts(toks, tf)
    return total / count if count else None


def low_frequency_order(parts: Sequence[tuple[int, int]]) -> list[int]:
    """Indices of scorable lines, lowest exact score first, ties by lower index."""
    scorable = [i for i, (_, count) in enumerate(parts) if count]
    return sorted(scorable, key=lambda i: (Fraction(parts[i][0], parts[i][1]), i))


def lowest(order: Sequence[int], n: int, fraction: float) -> tuple[int, ...]:
    """The first floor(n * fraction) lines of `order` (fewer if fewer are scorable), in line order."""
    return tuple(sorted(order[: math.floor(n * fraction)]))


def medium_indices(n: int, seed: int, task: str, fraction: float = 0.5) -> tuple[int, ...]:
    """Seeded random floor(n * fraction) of range(n), in line order (GLGE 2.4 "Low-resource")."""
    keyed = sorted(range(n), key=lambda i: (stable_int("glge_medium", seed, task, i), i))
    return tuple(sorted(keyed[: math.floor(n * fraction)]))


def overlap(test_tokens: Sequence[Sequence[str]], train_types: set[str]) -> dict:
    """How much of the test targets' vocabulary the training targets cover (type and token rates)."""
    test_types = {t for toks in test_tokens for t in toks}
    n_tokens = sum(len(toks) for toks in test_tokens)
    covered = sum(1 for toks in test_tokens for t in toks if t in train_types)
    shared = len(test_types & train_types)
    return {
        "test_types": len(test_types),
        "shared_types": shared,
        "type_overlap": shared / len(test_types) if test_types else None,
        "test_tokens": n_tokens,
        "covered_tokens": covered,
        "token_overlap": covered / n_tokens if n_tokens else None,
    }
