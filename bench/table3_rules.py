"""Candidate rules for LOT Table 3's SenPos and OutGen figures, measured on real stories.

SenPos (LOT 3.2): the paper's removed sentences average 30.48 words where its average input
sentence has 254.11 / 9.61 = 26.4 (ratio 1.15), and it has 1.56 candidate positions fewer
than input sentences; the build removes an average sentence (ratio about 1) and has one
candidate fewer than sentences. Each rule below is applied to the build's own windows
(`annotators.lot.senpos.windows`, the removed sentence drawn as the build draws it) and its
figures are printed beside the paper's. No official SenPos file exists to decide between
them (the card says so); none is a default.

OutGen (LOT 3.4): phrases per outline and the share of outlines with 8, for the default
outline rules and the earlier ones, beside the official outlines of the same stories.

Usage: `python -m bench.table3_rules [PATH]` (default: ../shared/data/lot/outgen_val_sample.jsonl).
"""

from __future__ import annotations

import json
import pathlib
import sys
from statistics import mean

from annotators.core.ids import rng_for
from annotators.lot.outline import OutlineConfig, outline_with_words
from annotators.lot.senpos import SenPosConfig, _removable, windows
from annotators.lot.story import parse_story_record, prepare_story
from annotators.text.zh_clean import han_count
from bench.outline_agreement import DEFAULT_SAMPLE

PAPER = {"removed": 30.48, "avg_sent": 254.11 / 9.61, "sents": 9.61, "candidates": 8.05}


def _inside_quote(sentences, start: int, end_index: int) -> bool:
    """Whether the position after sentence `end_index` lies inside an open “quotation”."""
    text = "".join(sentences[start : end_index + 1])
    return text.count("“") > text.count("”")


def _positions(story, start: int, rest: list[int], removed: int, rule: str) -> int:
    slots = range(len(rest) - 1)  # the slot after rest[t]; the answer is after removed - 1
    answer = rest.index(removed - 1)
    if rule == "no positions next to the answer":
        return sum(1 for t in slots if abs(t - answer) != 1)
    if rule == "no positions inside quotes":
        return sum(1 for t in slots if t == answer or not _inside_quote(story.sentences, start, rest[t]))
    return len(slots)


def senpos_rule(stories, rule: str = "as built", min_words: int = 0) -> dict:
    removed, candidates, sents, lengths = [], [], [], []
    config = SenPosConfig()
    for story in stories:
        han = [han_count(s) for s in story.sentences]
        found = windows(story, config, han)
        whole = found == [(0, len(story.sentences))]
        for start, end in found:
            allowed = [k for k in _removable(han, start, end, config) if len(story.words[k]) >= min_words]
            if not allowed:
                continue
            key = (story.story_id,) if whole else (story.story_id, start)
            k = rng_for(0, "senpos", *key).choice(allowed)
            rest = [i for i in range(start, end) if i != k]
            removed.append(len(story.words[k]))
            candidates.append(_positions(story, start, rest, k, rule))
            sents.append(len(rest))
            lengths += [len(story.words[i]) for i in rest]
    return {
        "examples": len(removed),
        "removed": mean(removed),
        "avg_sent": mean(lengths),
        "sents": mean(sents),
        "candidates": mean(candidates),
    }


def outline_counts(records, stories, config: OutlineConfig) -> dict:
    counts = [len(outline_with_words(s.joined, seed=0, story_id=s.story_id, config=config)) for s in stories]
    official = [len(r["outline"]) for r in records if r.get("outline")]
    return {
        "phrases": mean(counts),
        "eight": sum(c == 8 for c in counts) / len(counts),
        "official_phrases": mean(official) if official else None,
        "official_eight": sum(c == 8 for c in official) / len(official) if official else None,
    }


def _line(name: str, f: dict) -> str:
    return (
        f"{name:34s} examples={f.get('examples', '-'):>5} removed={f['removed']:6.2f} "
        f"avg_sent={f['avg_sent']:6.2f} ratio={f['removed'] / f['avg_sent']:5.2f} sents={f['sents']:6.2f} "
        f"candidates={f['candidates']:6.2f} (sentences {f['candidates'] - f['sents']:+.2f})"
    )


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    path = pathlib.Path(argv[0]) if argv else DEFAULT_SAMPLE
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    stories = [
        s
        for s in (prepare_story(parse_story_record(f"{path.name}:{i}", dict(r))) for i, r in enumerate(records))
        if not hasattr(s, "reason")
    ]
    print(_line("paper (train)", {**PAPER, "examples": 20000}))
    print(_line("as built (the default)", senpos_rule(stories)))
    for words in (15, 20, 25):
        print(_line(f"removed sentence >= {words} words", senpos_rule(stories, min_words=words)))
    for rule in ("no positions next to the answer", "no positions inside quotes"):
        print(_line(rule, senpos_rule(stories, rule)))
    for name, config in (
        ("default (filled, opening last)", OutlineConfig()),
        ("earlier (not filled, scored)", OutlineConfig(fill="none", opening_clause="scored")),
    ):
        f = outline_counts(records, stories, config)
        official = (
            f" | official {f['official_phrases']:.2f} phrases, {f['official_eight']:.1%} with 8"
            if f["official_phrases"] is not None
            else ""
        )
        print(f"outline {name:30s} {f['phrases']:.2f} phrases, {f['eight']:.1%} with 8 | paper 8.00{official}")


if __name__ == "__main__":
    main()
