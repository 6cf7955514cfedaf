"""LOT Table 3 statistics, computed from the words each builder already has.

`example_stats` gives one record per example; `Table3Accumulator` adds them up per
(task, split): number of examples, vocabulary size, average characters / words / sentences
of the input text, and the task's extra columns (candidate, removed sentence, output
sentence, title, outline). Words are jieba precise-mode tokens without whitespace.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any

from annotators.lot.story import PreparedStory
from annotators.text.tokenizers import get_tokenizer

# (column, label as in the paper's Table 3), per task.
COLUMNS = {
    "clozet": [
        ("chars", "Avg. # Char in Input Text"),
        ("words", "Avg. # Word in Input Text"),
        ("sents", "Avg. # Sent in Input Text"),
        ("extra", "Avg. # Word in Candidate"),
    ],
    "senpos": [
        ("chars", "Avg. # Char in Input Text"),
        ("words", "Avg. # Word in Input Text"),
        ("sents", "Avg. # Sent in Input Text"),
        ("extra", "Avg. # Word in Removed Sent"),
        ("candidates", "Avg. # Candidate Positions"),
    ],
    "plotcom": [
        ("chars", "Avg. # Char in Input Text"),
        ("words", "Avg. # Word in Input Text"),
        ("sents", "Avg. # Sent in Input Text"),
        ("extra", "Avg. # Word in Output Sent"),
    ],
    "outgen": [
        ("title", "Avg. # Word in Input Title"),
        ("extra", "Avg. # Word in Input Outline"),
        ("phrases", "Avg. # Phrase in Input Outline"),
        ("chars", "Avg. # Char in Output Text"),
        ("words", "Avg. # Word in Output Text"),
        ("sents", "Avg. # Sent in Output Text"),
        ("eight", "% Outlines with 8 Phrases"),
    ],
}
SPLITS = ("train", "val", "test")
# LOT paper Table 3 (TACL 2022), per task and split; "% Outlines with 8 Phrases" is not in the
# paper (its 8.00 average in every split means at least 99.5%).
PAPER_TABLE3 = {
    "clozet": {
        "# Examples": (644, 294, 294),
        "Vocabulary Size": ("9k", "7k", "7k"),
        "Avg. # Char in Input Text": (139.07, 138.95, 141.15),
        "Avg. # Word in Input Text": (89.28, 89.03, 90.20),
        "Avg. # Sent in Input Text": (5.95, 5.94, 5.95),
        "Avg. # Word in Candidate": (15.60, 16.38, 15.75),
    },
    "senpos": {
        "# Examples": ("20,000", 800, 863),
        "Vocabulary Size": ("147k", "10k", "22k"),
        "Avg. # Char in Input Text": (289.59, 258.48, 258.52),
        "Avg. # Word in Input Text": (254.11, 224.20, 223.25),
        "Avg. # Sent in Input Text": (9.61, 8.43, 8.44),
        "Avg. # Word in Removed Sent": (30.48, 29.28, 30.26),
        "Avg. # Candidate Positions": (8.05, 6.91, 6.91),
    },
    "plotcom": {
        "# Examples": ("13,099", 465, 464),
        "Vocabulary Size": ("22k", "8k", "8k"),
        "Avg. # Char in Input Text": (164.35, 137.67, 133.26),
        "Avg. # Word in Input Text": (105.48, 87.56, 84.98),
        "Avg. # Sent in Input Text": (7.17, 5.59, 5.48),
        "Avg. # Word in Output Sent": (15.08, 15.96, 16.15),
    },
    "outgen": {
        "# Examples": ("1,456", 242, 729),
        "Vocabulary Size": ("19k", "6k", "12k"),
        "Avg. # Word in Input Title": (4.64, 4.89, 4.64),
        "Avg. # Word in Input Outline": (19.20, 19.05, 19.47),
        "Avg. # Phrase in Input Outline": (8.00, 8.00, 8.00),
        "Avg. # Char in Output Text": (169.94, 169.80, 170.49),
        "Avg. # Word in Output Text": (108.91, 108.68, 109.04),
        "Avg. # Sent in Output Text": (7.20, 7.11, 7.15),
    },
}


def _context(story: PreparedStory, indices: Iterable[int], removed: int | None) -> dict[str, Any]:
    keep = [i for i in indices if i != removed]
    kept_words = [story.words[i] for i in keep]
    return {
        "chars": sum(len(story.sentences[i]) for i in keep),
        "words": sum(map(len, kept_words)),
        "sents": len(keep),
        "vocab": kept_words,
    }


def example_stats(
    task: str,
    story: PreparedStory,
    *,
    removed: int | None = None,
    indices: Iterable[int] | None = None,
    extra_texts: Iterable[str] = (),
    candidates: int = 0,
    title_words: Sequence[str] = (),
    phrase_words: Sequence[Sequence[str]] = (),
) -> dict[str, Any]:
    """Per-example numbers; `extra_texts` are averaged (ClozeT: both candidates). The story's,
    the title's and the outline's words come in already cut (PreparedStory, the outline).
    `vocab` is the example's distinct words as a frozenset (Table3Accumulator adds them to
    its set): made where the example is built (a pool worker), so the job's process, which
    counts the vocabulary, looks up each word once per example instead of once per use. An
    example whose input and removed sentence together are the whole story (PlotCom, OutGen)
    shares the story's own set (`PreparedStory.vocabulary`, made once)."""
    if indices is None:  # the whole story, less the removed sentence: from its totals
        chars, words = story.sizes
        sents = len(story.sentences)
        if removed is not None and 0 <= removed < sents:
            chars, words, sents = chars - len(story.sentences[removed]), words - len(story.words[removed]), sents - 1
        stats = {"chars": chars, "words": words, "sents": sents, "vocab": None}
    else:
        stats = _context(story, indices, removed)
    jieba_words = get_tokenizer("jieba")
    extra = [jieba_words.tokens(t) for t in extra_texts]
    if removed is not None and not extra:
        extra = [list(story.words[removed])]
    if indices is None and not extra_texts:  # every sentence, the removed one as `extra`
        vocab = story.vocabulary
    else:
        kept_words = stats["vocab"]
        if kept_words is None:  # the whole story less the removed sentence
            kept_words = [w for i, w in enumerate(story.words) if i != removed]
        vocab = frozenset(itertools.chain(*kept_words, *extra))
    if phrase_words or title_words:
        vocab = vocab.union(*phrase_words, title_words)
    stats["vocab"] = vocab
    stats["extra"] = sum(len(ws) for ws in extra) / len(extra) if extra else 0.0
    if phrase_words:
        stats["extra"] = float(sum(len(ws) for ws in phrase_words))
        stats["eight"] = 100.0 if len(phrase_words) == 8 else 0.0
    stats.update(candidates=candidates, phrases=len(phrase_words), title=len(title_words))
    stats["task"] = task
    return stats


class Table3Accumulator:
    """Mergeable sums for one (task, split); `result()` is JSON-able. A column whose value is
    None in an example (official lines whose story is hidden) is averaged over the others."""

    def __init__(self):
        self.n, self.sums, self.counts, self.vocab = 0, {}, {}, set()

    def add(self, stats: dict[str, Any]) -> Table3Accumulator:
        self.n += 1
        self.vocab.update(stats["vocab"])
        for key, value in stats.items():
            if key not in ("vocab", "task") and value is not None:
                self.sums[key] = self.sums.get(key, 0) + value
                self.counts[key] = self.counts.get(key, 0) + 1
        return self

    def merge(self, other: Table3Accumulator) -> Table3Accumulator:
        self.n += other.n
        self.vocab |= other.vocab
        for key, value in other.sums.items():
            self.sums[key] = self.sums.get(key, 0) + value
            self.counts[key] = self.counts.get(key, 0) + other.counts[key]
        return self

    def result(self, task: str) -> dict[str, Any]:
        out: dict[str, Any] = {"# Examples": self.n, "Vocabulary Size": len(self.vocab)}
        for key, label in COLUMNS[task]:
            count = self.counts.get(key, 0)
            out[label] = round(self.sums[key] / count, 2) if count else (None if self.n else 0.0)
        return out


def _cell(value: Any) -> str:
    return "n/a" if value is None else str(value)


def _paper_cell(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def table3_markdown(
    table3: dict[str, dict[str, dict[str, Any]]],
    official: dict[str, dict[str, Any]] | None = None,
    official_label: str = "",
) -> str:
    """The paper's Table 3 layout, one block per task: per split the paper's figure beside this
    build's, then the official data's (`official`: {task: Table 3 column -> value}, measured
    on the official files the job was given; "n/a" where a task has none)."""
    official = official or {}
    head = " | ".join(f"{s.title()}: paper | {s.title()}: build" for s in SPLITS)
    lines = [f"| Datasets | {head} | Official data{official_label} |", "|---|" + "---:|" * 7]
    for task in ("clozet", "senpos", "plotcom", "outgen"):
        splits, paper = table3.get(task, {}), PAPER_TABLE3[task]
        lines.append(f"| **Task: {task}** |" + " |" * 7)
        for label in ["# Examples", "Vocabulary Size"] + [label for _, label in COLUMNS[task]]:
            cells = []
            for i, split in enumerate(SPLITS):
                cells += [
                    _paper_cell(paper[label][i]) if label in paper else "-",
                    _cell(splits.get(split, {}).get(label, 0)),
                ]
            cells.append(_cell(official.get(task, {}).get(label)))
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
