"""User edits: parse JSON lines, score them with USER and ROUGE-L, and summarise
(paper section 4.2 and appendix C; the frontend's dashboard, PEERS.md 4.4).

An edit line is {"id", "generated", "published"} with optional "model", "story_id" and
"characters" (names, for the preserved-entity analysis). Guards against: malformed JSON
(bytes that are not UTF-8 included), a non-object line, missing or wrongly typed
id/generated/published (`missing_field` when absent or null, `bad_field_type` otherwise),
blank lines.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from typing import Any, NamedTuple

from annotators.core import jsonl
from annotators.core.metrics import prf
from annotators.core.outcome import Drop
from annotators.core.sniff import not_text_reason
from annotators.storium.user_metric import UserConfig, matched_blocks, rouge_l_scores, user_tokens


@dataclasses.dataclass(frozen=True)
class Edit:
    id: str
    generated: str
    published: str
    model: str = ""
    story_id: str | None = None
    characters: tuple = ()


class EditLine(NamedTuple):
    """A parsed edit and the line it came from ("file:line"), which decides keep-first dedup."""

    input_id: str
    edit: Edit


def field_problem(value: Any) -> str:
    """Why a required field is unusable: absent or null (`missing_field`), else the wrong type."""
    return "missing_field" if value is None else "bad_field_type"


def parse_edit_line(data: bytes) -> Edit | Drop:
    """One JSON line -> Edit, or why it cannot be scored."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:  # JSON must be UTF-8 (RFC 8259, 8.1): say what the bytes are instead
        return not_text_reason(data)
    try:
        raw = jsonl.loads(text)
    except (ValueError, RecursionError) as exc:  # RecursionError: JSON nested too deeply
        return Drop("malformed_json", jsonl.malformed_detail(str(exc)[:300], text))
    if not isinstance(raw, dict):
        return Drop("not_an_object", type(raw).__name__)
    edit_id = raw.get("id")
    if isinstance(edit_id, int) and not isinstance(edit_id, bool):
        edit_id = str(edit_id)
    if not isinstance(edit_id, str) or not edit_id.strip():
        code = "missing_field" if edit_id is None or isinstance(edit_id, str) else "bad_field_type"
        return Drop(code, "id must be a non-empty string or integer")
    for field in ("generated", "published"):
        if not isinstance(raw.get(field), str):
            return Drop(field_problem(raw.get(field)), f"edit {edit_id}: {field} must be a string")

    if not raw["generated"].strip() and not raw["published"].strip():  # once scored 0/0/0 into the means
        return Drop("empty_text", f"edit {edit_id}: generated and published are both empty: nothing to score")
    chars = raw.get("characters")
    names = tuple(c for c in chars if isinstance(c, str)) if isinstance(chars, list) else ()
    story = raw.get("story_id")
    return Edit(
        edit_id,
        raw["generated"],
        raw["published"],
        raw.get("model") if isinstance(raw.get("model"), str) else "",
        story if isinstance(story, str) else None,
        names,
    )


def score_edit(edit: Edit, config: UserConfig = UserConfig()) -> dict:
    """The edits-table row of one edit: USER and ROUGE-L on the same tokens."""
    gen, pub = user_tokens(edit.generated), user_tokens(edit.published)
    matched = sum(n for _, n in matched_blocks(gen, pub, config))
    p, r, f1 = prf(matched, len(gen), len(pub))
    rouge = rouge_l_scores(edit.generated, edit.published)
    return {
        "id": edit.id,
        "model": edit.model,
        "story_id": edit.story_id,
        "n_generated_tokens": len(gen),
        "n_published_tokens": len(pub),
        "matched_tokens": matched,
        "user_precision": p,
        "user_recall": r,
        "user_f1": f1,
        "rouge_l_precision": rouge.precision,
        "rouge_l_recall": rouge.recall,
        "rouge_l_f1": rouge.f1,
    }


METRICS = ("user_precision", "user_recall", "user_f1", "rouge_l_precision", "rouge_l_recall", "rouge_l_f1")


def summarize(rows: Iterable[dict]) -> list[dict]:
    """Means per model and over all edits ("*"); kept_token_share = sum(matched)/sum(generated).

    Sums use math.fsum over rows sorted by id, so the result never depends on arrival order.
    """
    rows = sorted(rows, key=lambda r: r["id"])
    groups = {"*": rows}
    for r in rows:
        if r["model"]:
            groups.setdefault(r["model"], []).append(r)
    out = []
    for model, members in sorted(groups.items()):
        n = len(members)
        gen = sum(r["n_generated_tokens"] for r in members)
        row = {
            "model": model,
            "n_edits": n,
            "kept_token_share": sum(r["matched_tokens"] for r in members) / gen if gen else 0.0,
        }
        row.update({m: math.fsum(r[m] for r in members) / n if n else 0.0 for m in METRICS})
        out.append(row)
    return out
