"""GLGE Easy / Medium / Medium+ / Hard for one checked task (GLGE paper section 2.4).

Easy is the original. Medium: a seeded random floor(n/2) of train ("Low-resource").
Hard: the floor(n/4) training examples with the lowest low-frequency score ("Low-frequency").
Medium+: the floor(n/2) lowest (the released "medium+" folder, PEERS.md 3.2). Dev and test
are the Easy files, byte for byte; chosen training lines keep their original order.
"""

from __future__ import annotations

import dataclasses
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from annotators.core.ids import stable_id
from annotators.glge.layout import iter_lines, line_count, line_text, split_lines
from annotators.glge.score import (
    LotTokenConfig,
    TokenConfig,
    low_frequency_order,
    lowest,
    medium_indices,
    overlap,
    score_parts,
    term_frequencies,
    tokens_of,
)
from schemas.glge import FILES, LEVELS, GlgeTask, LevelFile, LevelRow, TaskLevels


@dataclasses.dataclass(frozen=True)
class GlgeConfig:
    """Level sizes and tokenising; defaults are the paper's values (GLGE section 2.4).

    The fractions have no flags (the paper fixes them); `en` and `zh` get the job's
    `--tokenizer/--stop_words` and `--lot_tokenizer/--lot_stop_words` flags.
    """

    medium_fraction: float = dataclasses.field(
        default=0.5, metadata={"help": "share of train kept, at random, for medium (GLGE 2.4 low-resource: half)"}
    )
    hard_fraction: float = dataclasses.field(
        default=0.25,
        metadata={"help": "share of train with the lowest score kept for hard (GLGE 2.4 low-frequency: a quarter)"},
    )
    medium_plus_fraction: float = dataclasses.field(
        default=0.5,
        metadata={"help": "share of train with the lowest score kept for medium+ (released data, PEERS.md 3.2)"},
    )
    en: TokenConfig = TokenConfig()  # GLGE tasks: whitespace tokens, spaCy English stop words
    zh: TokenConfig = LotTokenConfig()  # LOT tasks: jieba words, spaCy Chinese stop words

    def tokens_for(self, lang: str) -> TokenConfig:
        return self.zh if lang == "zh" else self.en


TOKEN_BATCH = 10_000  # training targets tokenized at once: their token lists are never all held


class TrainTokens:
    """The training targets' scored tokens as the summary needs them, in a fixed size per
    token: each line's tokens that occur among the test targets' (the only ones a type or
    token overlap can count), as ids into `vocab`, one flat array with line offsets. A list of
    token strings per line (and every file split into lines at once) made a 171 MB task of
    400,000 training lines peak at 1.2 GB; this way, 0.7 GB, with the same outputs."""

    def __init__(self, vocab: dict[str, int]):
        self.vocab = vocab
        self.words = list(vocab)
        self._ids = array("i")
        self._ends = array("q")

    def add(self, toks: Sequence[str]) -> None:
        vocab = self.vocab
        self._ids.extend([vocab[t] for t in toks if t in vocab])
        self._ends.append(len(self._ids))

    def types(self, lines: Iterable[int]) -> set[str]:
        """The test-vocabulary types of the training targets `lines`."""
        ids, ends, found = self._ids, self._ends, set()
        for i in lines:
            found.update(ids[ends[i - 1] if i else 0 : ends[i]])
        return {self.words[k] for k in found}


def build_levels(task: GlgeTask, config: GlgeConfig, seed: int) -> TaskLevels:
    """Score every training target against the test targets and choose each level's lines.
    The training targets are tokenized TOKEN_BATCH lines at a time, keeping each line's score
    parts and its test-vocabulary tokens only (`TrainTokens`)."""
    tok = config.tokens_for(task.lang)
    test = tokens_of([line_text(x) for x in split_lines(task.files["test.tgt"])], tok)
    tf = term_frequencies(test)
    train = TrainTokens({t: k for k, t in enumerate(tf)})
    parts = []
    batch: list[str] = []
    for line in iter_lines(task.files["train.tgt"]):
        batch.append(line_text(line))
        if len(batch) >= TOKEN_BATCH:
            _score_batch(batch, tok, tf, parts, train)
            batch = []
    if batch:
        _score_batch(batch, tok, tf, parts, train)
    order = low_frequency_order(parts)
    n = len(parts)
    ranks: list[int | None] = [None] * n
    for rank, i in enumerate(order):
        ranks[i] = rank
    selected = {
        "easy": tuple(range(n)),
        "medium": medium_indices(n, seed, task.task, config.medium_fraction),
        "medium+": lowest(order, n, config.medium_plus_fraction),
        "hard": lowest(order, n, config.hard_fraction),
    }
    summary = _summary(task, train, test, selected, n - len(order))
    return TaskLevels(
        task=task.task,
        files=task.files,
        scores=tuple(total / count if count else None for total, count in parts),
        n_tokens=tuple(count for _, count in parts),
        ranks=tuple(ranks),
        selected=selected,
        summary=summary,
    )


def _score_batch(texts: list[str], tok: TokenConfig, tf, parts: list, train: TrainTokens) -> None:
    for toks in tokens_of(texts, tok):
        parts.append(score_parts(toks, tf))
        train.add(toks)


def text_length(text: str, lang: str) -> int:
    """A line's length as GLGE's statistics count it: whitespace words (English), or
    characters other than whitespace (Chinese, which has no spaces between words)."""
    return len(text.split()) if lang != "zh" else sum(1 for c in text if not c.isspace())


def _mean(values) -> float | None:
    values = list(values)
    return round(sum(values) / len(values), 2) if values else None


def _summary(task: GlgeTask, train: TrainTokens, test: list, selected: dict, unscorable: int) -> dict:
    lengths = {
        side: [text_length(line_text(x), task.lang) for x in iter_lines(task.files[f"train.{side}"])]
        for side in ("src", "tgt")
    }
    levels = {}
    for level in LEVELS:
        types = train.types(selected[level])
        levels[level] = {
            "train_size": len(selected[level]),
            **overlap(test, types),
            "avg_src_len": _mean(lengths["src"][i] for i in selected[level]),
            "avg_tgt_len": _mean(lengths["tgt"][i] for i in selected[level]),
        }
    sizes = {split: line_count(task.files[f"{split}.src"]) for split in ("train", "dev", "test")}
    return {
        "origin": task.origin,
        "lang": task.lang,
        "sizes": sizes,
        "length_unit": "characters" if task.lang == "zh" else "words",
        "unscorable_train_targets": unscorable,
        "levels": levels,
        "harder": gets_harder(levels),
    }


def gets_harder(levels: dict[str, dict]) -> bool:
    """Overlap rates never rise along easy -> medium -> hard and easy -> medium+ -> hard.

    Subsets can only lower them (hard is inside medium+, both inside easy); the real check is
    medium -> hard, which holds when the low-frequency choice beats the random one.
    """

    def rate(level: str, key: str) -> float:
        return levels[level][key] or 0.0

    steps = (("easy", "medium"), ("medium", "hard"), ("easy", "medium+"), ("medium+", "hard"))
    return all(rate(a, k) >= rate(b, k) for a, b in steps for k in ("type_overlap", "token_overlap"))


def level_files(levels: TaskLevels) -> Iterator[LevelFile]:
    """(level, file key, bytes) for every output file: train subsets, dev/test verbatim."""
    for level in LEVELS:
        for key in FILES:
            if level == "easy" or not key.startswith("train."):
                yield LevelFile(level, key, levels.files[key])
            else:
                yield LevelFile(level, key, _chosen_lines(levels.files[key], levels.selected[level]))


def _chosen_lines(data: bytes, chosen: Sequence[int]) -> bytes:
    """The lines `chosen` (ascending indices) of a file, each ending in a newline: read in one
    pass, so the file's other lines are never held as a list."""
    out, wanted = [], iter(chosen)
    nxt = next(wanted, None)
    for i, line in enumerate(iter_lines(data)):
        if i == nxt:
            out.append(line + b"\n")
            nxt = next(wanted, None)
    return b"".join(out)


def level_rows(levels: TaskLevels) -> Iterator[dict[str, Any]]:
    """One LEVELS_SCHEMA row per training line per level it belongs to."""
    for level in LEVELS:
        for i in levels.selected[level]:
            yield LevelRow(
                example_id=stable_id("glge", levels.task, level, i),
                task=levels.task,
                level=level,
                split="train",
                line_index=i,
                score=levels.scores[i],
                n_tokens=levels.n_tokens[i],
                low_freq_rank=levels.ranks[i],
            ).to_row()
