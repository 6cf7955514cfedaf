"""Every choice the STORIUM packed context makes, with its source and the flag that flips
it, as the card lists them (issue 30: "list every choice in the card with its source").

Where the paper (004, section 3.1 and 3.1.1, footnote 9) says what the final model did, the
paper decides; where it is silent, the original code (dojoteef/storium-gpt2,
data/preprocess/gpt2.py and data/preprocess/__init__.py) decides. Each flippable choice is a
field of ContextConfig, PackConfig or SplitConfig; `choice_rows` renders them for the config
a run used (stats.json `config`).
"""

from __future__ import annotations

import dataclasses

GPT2 = "storium-gpt2 data/preprocess/gpt2.py"
SPLIT = "storium-gpt2 data/preprocess/__init__.py `split_dataset`"
BEFORE = "storybench before issue 30"


@dataclasses.dataclass(frozen=True)
class Choice:
    what: str
    section: str  # key of stats.json config: context, pack or split
    field: str
    values: dict  # value -> (what it does, its source)


CHOICES = (
    Choice(
        "history: entries before the example",
        "context",
        "history_offset",
        {
            0: (
                "both windows end at the immediately preceding entry",
                'paper 3.1 ("the immediately preceding story entry") and footnote 9',
            ),
            1: (
                "each window ends one entry early, so the preceding entry is never shown",
                f"{GPT2} `get_entry_summary` (end_index = index - 1, range excludes it)",
            ),
        },
    ),
    Choice(
        "history: the establishment in the window",
        "context",
        "history_counts_establishment",
        {
            True: (
                "the scene's establishment takes a place in the window and is then left out",
                f"{GPT2} `get_entry_summary` (`continue` on the establishment)",
            ),
            False: ("the establishment is left out before the window is taken", BEFORE),
        },
    ),
    Choice(
        "history: what an entry contributes",
        "context",
        "history_content",
        {
            "summary": (
                "its card summary (move: challenge and cards played; establishment: place card; "
                "addition: challenge cards), its text keeping the end when it has none",
                f"{GPT2} `summarize_entry`, `process_entry` (Trim.start)",
            ),
            "text": (
                "its text, keeping the end",
                'paper 3.1 wording ("the text of the immediately preceding story entry"); ' + BEFORE,
            ),
        },
    ),
    Choice(
        "establishment: what it contributes",
        "context",
        "establishment_content",
        {
            "place_or_text": (
                "its place card, or the end of its text when it has none",
                f"{GPT2} `summarize_entry`, `process_entry`",
            ),
            "place_and_text": ("its place card and its text (keeping the end)", BEFORE),
        },
    ),
    Choice(
        "establishment: which one",
        "context",
        "establishment_scope",
        {
            "scene": (
                "the latest establishment of the example's scene",
                'paper 3.1 ("the scene\'s introductory text")',
            ),
            "story": (
                "the latest establishment of the story so far",
                f"{GPT2} `process_story` (establishment_list[-1])",
            ),
        },
    ),
    Choice(
        "solver leaves",
        "context",
        "solver_leaves",
        {
            "field": (
                "one length variable per character or card field (name, description, success and failure "
                "stakes), each with its separator, so each field is pulled toward 100 tokens; a missing "
                "character name or description is the one token `<|MISSING|>`",
                f"{GPT2} `summarize_character`, `summarize_card`, `extract_string`",
            ),
            "segment": ("one length variable per character or card (all its fields), an empty one left out", BEFORE),
        },
    ),
    Choice(
        "smallest segment",
        "pack",
        "min_text_tokens",
        {
            0: (
                "a segment may shrink to its separator (and the entry to separator and end token)",
                f"{GPT2} `Segment.hard_constraints` (length >= 1)",
            ),
            1: ("every segment keeps at least one text token", BEFORE),
        },
    ),
    Choice(
        "field length before packing",
        "pack",
        "field_token_cap",
        {
            1024: (
                "each text is cut to its first 1024 tokens before packing (a text kept by its end keeps "
                "the end of those)",
                f"{GPT2} `Preprocessor.encode` (tokenizer.encode(max_length=1024))",
            ),
            0: ("no cap", BEFORE),
        },
    ),
    Choice(
        "special tokens in the budget",
        "pack",
        "separator_tokens",
        {
            1: (
                "a separator before every leaf and an end token after the entry count in the budget",
                f"{GPT2} `Segment.unconstrained_length` (+1 separator, +1 eos)",
            ),
            0: ("text tokens only (with `--end-tokens 0`)", "no source: a lower bound for comparison"),
        },
    ),
    Choice(
        "split: stories of equal size",
        "split",
        "split_ties",
        {
            "original": (
                "ordered by entries, scenes, then input path, all descending; equal split keys go "
                "where the original's heap puts them",
                SPLIT,
            ),
            "story_id": (
                "ordered by smaller story_id; equal split keys go to train, then validation, then test",
                BEFORE,
            ),
        },
    ),
)

FIXED = (  # choices without a flag: the paper and the original agree, or nothing else is meaningful
    (
        "examples",
        "one per character entry (role not narrator) with text; narrator entries are context only",
        f"{GPT2} `get_move`, `process_entry`",
    ),
    (
        "order",
        "character, establishment, history (oldest first), the entry's challenge and cards, the entry",
        f"{GPT2} `get_entry_summary`, `get_move`",
    ),
    (
        "the entry's own cards",
        "a move's challenge and the cards played on it; other formats (a subplot, a refresh) none, even with cards",
        f"{GPT2} `summarize_entry`",
    ),
    (
        "solver wishes",
        "entry text == 256 at ten times strong, every other leaf == 100 at strong; sum == "
        "min(budget, true total); the original adds its strong list twice and never its medium "
        "list, which changes no solution",
        f'{GPT2} `Segment.strong_constraints`, `_constrain`; paper 3.1.1 ("at least 250 tokens from an entry")',
    ),
    (
        "cuts",
        "the entry, character and cards keep their beginning; text standing for history or an "
        "establishment keeps its end",
        f"{GPT2} `Trim.end` default, `Trim.start` for text summaries",
    ),
    (
        "solver values",
        "rounded, then repaired so lengths sum exactly (the original truncates with int())",
        "storybench: the budget is filled exactly",
    ),
)


def _value(config: dict, choice: Choice):
    return config.get(choice.section, {}).get(choice.field, next(iter(choice.values)))


def _flag(field: str, value) -> str:
    name = "--" + field.replace("_", "-")
    if isinstance(value, bool):
        return name if value else "--no-" + field.replace("_", "-")
    return f"{name} {value}"


def choice_rows(config: dict) -> list[str]:
    """The card's table: each choice, what this build did, its source, and the flag that flips it."""
    context, pack = config.get("context", {}), config.get("pack", {})
    rows = [
        "| choice | this build | source | flag that flips it |",
        "|---|---|---|---|",
        f"| history length | the last {context.get('history', 1)} story entries and the last "
        f"{context.get('character_history', 1)} entries by the same character | paper 3.1 and footnote 9 "
        "(the final model: 1 and 1) | `--history 0 --character-history 0`: no history (the original "
        f"script's defaults, {GPT2} `Preprocessor`) |",
        f"| budget | {pack.get('budget', 1024)} tokens per example | {GPT2} `Preprocessor(max_length=1024)` "
        "(GPT-2's context) | `--budget N` |",
    ]
    for choice in CHOICES:
        value = _value(config, choice)
        does, source = choice.values.get(value, (f"`{choice.field}` = {value}", "set for this run"))
        flips = "; ".join(
            f"`{_flag(choice.field, other)}`: {choice.values[other][0]} ({choice.values[other][1]})"
            for other in choice.values
            if other != value
        )
        rows.append(f"| {choice.what} | {does} | {source} | {flips} |")
    for what, does, source in FIXED:
        rows.append(f"| {what} | {does} | {source} | none |")
    return rows
