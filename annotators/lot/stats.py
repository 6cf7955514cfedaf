"""LOT Table 3 statistics, computed from the words each builder already has.

`example_stats` gives one record per example; `Table3Accumulator` adds them up per
(task, split): number of examples, vocabulary size, average characters / words / sentences
of the input text, and the task's extra columns (candidate, removed sentence, output
sentence, title, outline). Words are jieba precise-mode tokens without whitespace.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

from annotators.lot.story import PreparedStory
from annotators.text.tokenizers import get_tokenizer

# (column, label as in the paper's Table 3), per task.
COLUMNS = {
    "clozet": [("chars", "Avg. # Char in Input Text"), ("words", "Avg. # Word in Input Text"),
               ("sents", "Avg. # Sent in Input Text"), ("extra", "Avg. # Word in Candidate")],
    "senpos": [("chars", "Avg. # Char in Input Text"), ("words", "Avg. # Word in Input Text"),
               ("sents", "Avg. # Sent in Input Text"), ("extra", "Avg. # Word in Removed Sent"),
               ("candidates", "Avg. # Candidate Positions")],
    "plotcom": [("chars", "Avg. # Char in Input Text"), ("words", "Avg. # Word in Input Text"),
                ("sents", "Avg. # Sent in Input Text"), ("extra", "Avg. # Word in Output Sent")],
    "outgen": [("title", "Avg. # Word in Input Title"), ("extra", "Avg. # Word in Input Outline"),
               ("phrases", "Avg. # Phrase in Input Outline"), ("chars", "Avg. # Char in Output Text"),
               ("words", "Avg. # Word in Output Text"), ("sents", "Avg. # Sent in Output Text")],
}


def _context(story: PreparedStory, indices: Iterable[int], removed: int | None) -> dict[str, Any]:
    keep = [i for i in indices if i != removed]
    kept_words = [story.words[i] for i in keep]
    return {"chars": sum(len(story.sentences[i]) for i in keep), "words": sum(map(len, kept_words)),
            "sents": len(keep), "vocab": kept_words}


def example_stats(task: str, story: PreparedStory, *, removed: int | None = None,
                  indices: Iterable[int] | None = None, extra_texts: Iterable[str] = (),
                  candidates: int = 0, title_words: Sequence[str] = (),
                  phrase_words: Sequence[Sequence[str]] = ()) -> dict[str, Any]:
    """Per-example numbers; `extra_texts` are averaged (ClozeT: both candidates). The story's,
    the title's and the outline's words come in already cut (PreparedStory, the outline).
    `vocab` is the list of the example's word sequences (Table3Accumulator adds them to its
    set: no set is built per example)."""
    stats = _context(story, range(len(story.sentences)) if indices is None else indices, removed)
    jieba_words = get_tokenizer("jieba")
    extra = [jieba_words.tokens(t) for t in extra_texts]
    if removed is not None and not extra:
        extra = [list(story.words[removed])]
    stats["vocab"] = [*stats["vocab"], *extra, *phrase_words, title_words]
    stats["extra"] = sum(len(ws) for ws in extra) / len(extra) if extra else 0.0
    if phrase_words:
        stats["extra"] = float(sum(len(ws) for ws in phrase_words))
    stats.update(candidates=candidates, phrases=len(phrase_words), title=len(title_words))
    stats["task"] = task
    return stats


class Table3Accumulator:
    """Mergeable sums for one (task, split); `result()` is JSON-able."""

    def __init__(self):
        self.n, self.sums, self.vocab = 0, {}, set()

    def add(self, stats: dict[str, Any]) -> "Table3Accumulator":
        self.n += 1
        self.vocab.update(*stats["vocab"])
        for key in ("chars", "words", "sents", "extra", "candidates", "phrases", "title"):
            self.sums[key] = self.sums.get(key, 0) + stats[key]
        return self

    def merge(self, other: "Table3Accumulator") -> "Table3Accumulator":
        self.n += other.n
        self.vocab |= other.vocab
        for key, value in other.sums.items():
            self.sums[key] = self.sums.get(key, 0) + value
        return self

    def result(self, task: str) -> dict[str, Any]:
        out: dict[str, Any] = {"# Examples": self.n, "Vocabulary Size": len(self.vocab)}
        for key, label in COLUMNS[task]:
            out[label] = round(self.sums.get(key, 0) / self.n, 2) if self.n else 0.0
        return out


def table3_markdown(table3: dict[str, dict[str, dict[str, Any]]]) -> str:
    """The paper's Table 3 layout: one block per task, columns train/val/test."""
    lines = ["| Datasets | Train | Val | Test |", "|---|---:|---:|---:|"]
    for task in ("clozet", "senpos", "plotcom", "outgen"):
        splits = table3.get(task, {})
        lines.append(f"| **Task: {task}** | | | |")
        labels = ["# Examples", "Vocabulary Size"] + [label for _, label in COLUMNS[task]]
        for label in labels:
            cells = [str(splits.get(s, {}).get(label, 0)) for s in ("train", "val", "test")]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
