"""Linguistic properties of preserved text (paper section 5): kept versus deleted generated
tokens by part of speech, and how many kept named entities already name a character.

A spaCy token of the generated text counts as kept when any of its characters lie in a
USER-kept token (annotators.storium.user_metric); tokens holding no a-z/0-9 character are not
USER tokens and are not counted. A named entity is kept when all its USER tokens are kept,
and is "in the characters" when its USER tokens occur contiguously in a character's name
(so "Adira" matches "Adira Makarova"). Needs an installed spaCy English pipeline with a
tagger and NER; the job skips this table, and says so, when none is available.
"""

from __future__ import annotations

import functools
import os
from typing import Any

from annotators.storium.edits import Edit
from annotators.storium.user_metric import UserConfig, matched_blocks, user_tokens


def user_token_spans(text: str) -> list[tuple[int, int]] | None:
    """Character spans in `text` of its USER tokens, or None if they cannot be aligned."""
    spans, start = [], None
    for i, ch in enumerate(text):
        inside = any("a" <= c <= "z" or "0" <= c <= "9" for c in ch.lower())
        if inside and start is None:
            start = i
        elif not inside and start is not None:
            spans.append((start, i))
            start = None
    if start is not None:
        spans.append((start, len(text)))
    tokens = user_tokens(text)
    if len(spans) != len(tokens) or any(user_tokens(text[a:b]) != [t] for (a, b), t in zip(spans, tokens)):
        return None  # a case-folding oddity (e.g. a dotted capital I) splits a run
    return spans


def kept_token_flags(edit: Edit, config: UserConfig = UserConfig()) -> list[bool]:
    gen, pub = user_tokens(edit.generated), user_tokens(edit.published)
    flags = [False] * len(gen)
    for start, length in matched_blocks(gen, pub, config):
        flags[start : start + length] = [True] * length
    return flags


def _contains(name_tokens: list[str], tokens: list[str]) -> bool:
    n = len(tokens)
    return any(name_tokens[i : i + n] == tokens for i in range(len(name_tokens) - n + 1))


def analyze_doc(edit: Edit, doc: Any, config: UserConfig = UserConfig()) -> dict | None:
    """Counts for one edit from a spaCy Doc of its generated text; None if unalignable."""
    spans = user_token_spans(edit.generated)
    if spans is None:
        return None
    flags = kept_token_flags(edit, config)
    pos: dict[str, list[int]] = {}
    for tok in doc:
        inside = [k for (a, b), k in zip(spans, flags) if a < tok.idx + len(tok.text) and b > tok.idx]
        if inside:
            counts = pos.setdefault(tok.pos_ or "X", [0, 0])
            counts[0] += 1
            counts[1] += int(any(inside))
    names = [user_tokens(n) for n in edit.characters]
    ents = {"entities_generated": 0, "entities_kept": 0, "entities_kept_in_characters": 0}
    for ent in doc.ents:
        inside = [k for (a, b), k in zip(spans, flags) if a < ent.end_char and b > ent.start_char]
        if not inside:
            continue
        ents["entities_generated"] += 1
        if all(inside):
            ents["entities_kept"] += 1
            toks = user_tokens(ent.text)
            ents["entities_kept_in_characters"] += int(any(_contains(n, toks) for n in names))
    return {"pos": pos, **ents, "edits": 1}


def merge_counts(parts: list[dict]) -> dict:
    """Sum per-edit counts (order-independent)."""
    total: dict = {"pos": {}, "entities_generated": 0, "entities_kept": 0, "entities_kept_in_characters": 0, "edits": 0}
    for part in parts:
        for tag, (gen, kept) in part["pos"].items():
            cur = total["pos"].setdefault(tag, [0, 0])
            cur[0], cur[1] = cur[0] + gen, cur[1] + kept
        for key in ("entities_generated", "entities_kept", "entities_kept_in_characters", "edits"):
            total[key] += part[key]
    return total


def pos_rows(total: dict) -> list[dict]:
    return [
        {"pos": tag, "generated": g, "kept": k, "deleted": g - k, "kept_share": k / g if g else 0.0}
        for tag, (g, k) in sorted(total["pos"].items())
    ]


def spacy_status(name: str | None) -> str | None:
    """None when the pipeline can be loaded, else why the analysis is skipped."""
    if not name:
        return "no --spacy-model given"
    import spacy.util

    if os.path.isdir(name):
        if not os.path.isfile(os.path.join(name, "meta.json")):  # spacy.load raised E053, losing the job
            return f"{name!r} is a folder but not a spaCy pipeline (no meta.json)"
        return None
    if not spacy.util.is_package(name):
        return f"spaCy pipeline {name!r} is not installed"
    return None


@functools.lru_cache(maxsize=2)
def load_spacy(name: str):
    """Load once per worker (DoFn.setup), never at import time."""
    import spacy

    return spacy.load(name)
