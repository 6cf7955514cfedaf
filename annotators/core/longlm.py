"""The `.source`/`.target` lines the public LongLM baselines read (PEERS.md 1.4), shared by
LOT's exports and GLGE's `lot_outgen` task.

- OutGen (generation, `baselines/generation`): source `title#phrase1#...#phrase8<extra_id_1>`,
  target `<extra_id_1>` + the story. A `#` inside the title or a phrase would add a field, so
  it is written full-width (`＃`); line breaks become spaces (a line is one example: `one_line`).
- ClozeT (pointer classifier, `baselines/understanding`): source `plot0<extra_id_1>plot1<extra_id_2>`
  + the story with its `<mask>` written `<sep>` + a final `<mask>` query; target = source +
  the right candidate's sentinel (`<extra_id_1>` for plot0, `<extra_id_2>` for plot1: the
  sentinel follows its candidate).
- SenPos (the same pointer scheme; LongLM ships no SenPos example, so this is storybench's
  reading of it): source = the removed sentence + `<sep>` + the story with its k-th `[MASK]`
  written `<extra_id_k>` + a final `<mask>`; target = source + `<extra_id_label>`. T5 has
  `<extra_id_0>`..`<extra_id_99>`, so a SenPos example has at most 99 candidate positions
  (annotators.lot.senpos keeps windows within that).
The files hold one example per line, separated by newlines with none after the last line,
byte for byte as ../shared/data/lot/official_examples. A line holds no character that
`str.splitlines()` breaks a line at (Hugging Face `datasets`' "text" loader reads so), so
line i of a `.source` is always the example of line i of its `.target`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from schemas.lot import CLOZET_MASK, SENPOS_MASK, to_jsonl

SEP, QUERY, MAX_SENTINEL = "<sep>", "<mask>", 99
SOURCE_TARGET_TASKS = ("clozet", "senpos", "outgen")


def sentinel(k: int) -> str:
    if not 0 <= k <= MAX_SENTINEL:
        raise ValueError(f"T5 has no <extra_id_{k}>")
    return f"<extra_id_{k}>"


# every character str.splitlines() ends a line at: \n, \r, VT, FF, FS, GS, RS, NEL, U+2028, U+2029
LINE_BREAKS = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def one_line(text: str) -> str:
    """`text` as one line of a line-per-example file: each line break `str.splitlines()` knows
    (\\r\\n as one) becomes a space, a final one goes. Not only \\n and \\r: a \\x0b or U+2028
    inside a story split its line for readers that use splitlines(), and the `.source` and
    `.target` lines no longer paired up."""
    return " ".join(text.splitlines()) if LINE_BREAKS.search(text) else text


def _field(text: str) -> str:
    return one_line(text).replace("#", "＃")


def outgen_source_target(row: dict[str, Any]) -> tuple[str, str]:
    source = "#".join([_field(row["title"]), *(_field(p) for p in row["outline"])]) + sentinel(1)
    return source, sentinel(1) + one_line(row["story"])


def clozet_source_target(row: dict[str, Any]) -> tuple[str, str]:
    story = one_line(row["story"]).replace(CLOZET_MASK, SEP)
    source = one_line(row["plot0"]) + sentinel(1) + one_line(row["plot1"]) + sentinel(2) + story + QUERY
    return source, source + sentinel(int(row["label"]) + 1)


def senpos_source_target(row: dict[str, Any]) -> tuple[str, str]:
    parts = one_line(row["story"]).split(SENPOS_MASK)
    story = parts[0] + "".join(sentinel(k) + part for k, part in enumerate(parts[1:], 1))
    source = one_line(row["sentence"]) + SEP + story + QUERY
    return source, source + sentinel(int(row["label"]))


def source_target(task: str, row: dict[str, Any]) -> tuple[str, str]:
    """(source line, target line) of one table row of `task` (clozet, senpos or outgen)."""
    return {"clozet": clozet_source_target, "senpos": senpos_source_target, "outgen": outgen_source_target}[task](row)


def export_group(task: str, row: dict[str, Any]) -> str:
    """The file group of a row: its split, and for SenPos val/test not yet reviewed by a
    person `<split>.unreviewed` (so `val.jsonl`/`test.jsonl` only ever hold reviewed
    examples, as the paper's did)."""
    if task == "senpos" and row["split"] != "train" and not row["reviewed"]:
        return f"{row['split']}.unreviewed"
    return row["split"]


def export_groups(task: str) -> tuple[str, ...]:
    """Every file group of a task, in order (each gets its files, empty or not)."""
    groups = ("train", "val", "test")
    return groups + ("val.unreviewed", "test.unreviewed") if task == "senpos" else groups


def export_files(task: str) -> list[str]:
    """Every file a task's export writes: `<group>.jsonl`, and `<group>.source`/`.target`
    for the tasks the baselines read that way."""
    groups = export_groups(task)
    files = [f"{g}.jsonl" for g in groups]
    if task in SOURCE_TARGET_TASKS:
        files += [f"{g}.{end}" for g in groups for end in ("source", "target")]
    return files


def export_lines(task: str, row: dict[str, Any], encode: Callable[[dict], str]) -> list[tuple[str, str]]:
    """(file, line) of one written row: its LongLM record as `encode` writes JSON text
    (schemas.lot.to_jsonl) and, for the tasks the baselines read as `.source`/`.target`,
    those lines."""
    group = export_group(task, row)
    lines = [(f"{group}.jsonl", encode(to_jsonl(task, row)))]
    if task in SOURCE_TARGET_TASKS:
        source, target = source_target(task, row)
        lines += [(f"{group}.source", source), (f"{group}.target", target)]
    return lines
