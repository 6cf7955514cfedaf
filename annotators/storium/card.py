"""The STORIUM- and edits-specific sections of CARD.md: every definition the outputs rely on,
stated exactly (the issue asks the card to state the split and USER definitions), and the
reject reasons each job can give. The jobs only call `storium_card` / `edits_card`."""

from __future__ import annotations

from annotators.core.card import default_card
from annotators.core.reasons import reasons_markdown
from annotators.storium.choices import choice_rows
from annotators.storium.reasons import EDITS_REASONS, STORIUM_REASONS

SPLIT_DEFINITION = (
    "A story's size is the number of whitespace-separated words over the `description` of "
    "all its entries (every entry of every scene in the file, including entries rejected for "
    "other reasons; cards are ignored). Stories are taken by size, largest first ({ties}); "
    "each goes to the split whose assigned words divided by its ratio is smallest. A split "
    "with ratio 0 receives nothing. Duplicate `game_pid`s: only the smallest input path is kept."
)
SPLIT_TIES = {
    "original": "ties: more entries, then more scenes, then the larger input path first, as the "
    "original's `sorted(..., reverse=True)`; equal split keys (floating point, as the "
    "original) go where its heap puts them; `--split-ties story_id` flips this",
    "story_id": "ties: smaller `story_id` first; equal split keys, compared as exact fractions, go "
    "to train, then validation, then test; `--split-ties original` gives the original's",
}

PACK_DEFINITION = (
    "One example per character entry (role not `narrator`, not redacted) with text. Segments "
    "in order: `character`; the scene's establishment as `place` (its place card) and/or "
    "`establishment` (its text); `history`; `challenge` (the card played on) and `card` (cards "
    "played); `entry`. Each segment is one solver leaf; `field` says which part of a card or "
    "character it holds (`text` for entry text, `all` for a whole card or character). Empty "
    "segments are left out; `true_tokens` counts a text's tokens up to the field cap below. "
    "The budget counts the serialised example: every leaf starts with "
    "{sep} separator token(s) and the entry ends with {end} end token(s), so `total_tokens` = "
    "sum of `tokens` + `special_tokens` <= budget. Lengths (text + special tokens per leaf) "
    "from the Cassowary solver (kiwisolver): required minimum <= length <= true length and "
    "sum = min(budget, sum of true lengths); strong: entry == {entry} at {weight:g}x strong, "
    "every other leaf == {other} at strong. Examples whose leaves cannot all get their minimum "
    "within the budget are rejected (`budget_below_segments`). Every choice below follows the "
    "paper where it says what the final model did (section 3.1, footnote 9) and the original "
    "code where it is silent; each flippable one names its flag."
)

USER_DEFINITION = (
    "Tokens = the text lower-cased, every character outside a-z and 0-9 replaced by a space, "
    "split on whitespace. Generated tokens are aligned against published tokens with "
    "`difflib.SequenceMatcher(None, gen, pub, autojunk={autojunk})`; every `equal` block "
    "holding at least one token outside spaCy's English stop-word list ({n_stop} words) adds "
    "its whole length to `matched`. Precision = matched / len(gen), recall = matched / "
    "len(pub), F1 = 2PR/(P+R); each is 0 when undefined. ROUGE-L: longest common subsequence "
    "of the same tokens (no stop-word removal), same P/R/F1 formulas. Summary means are "
    "unweighted means over edits; `kept_token_share` = sum(matched) / sum(len(gen)). "
    "Bounded work: an edit whose alignment would compare more than 10,000,000 token pairs "
    "(repetitive text makes difflib cubic) is an `over_size_limit` rejects row, never a hang."
)


def storium_sections(stats: dict) -> str:
    cfg = stats.get("config", {})
    pack = cfg.get("pack", {})
    ties = SPLIT_TIES.get(cfg.get("split", {}).get("split_ties", "original"), SPLIT_TIES["original"])
    lines = [
        "## Split (paper section 2: 8:1:1 by stories and by tokens)",
        "",
        SPLIT_DEFINITION.format(ties=ties),
        "",
        "| split | stories | story share | words | word share | target share |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, s in stats.get("split", {}).items():
        lines.append(
            f"| {name} | {s['stories']} | {s['story_share']:.4f} | {s['words']} "
            f"| {s['word_share']:.4f} | {s['target_share']:.4f} |"
        )
    tables = stats.get("tables", {})
    lines += [
        "",
        "## Dataset counts beside the paper's (section 2, Table 1)",
        "",
        "| | this build | paper |",
        "|---|---:|---:|",
    ]
    for label, table, paper in (
        ("stories", "stories", "5,743"),
        ("scenes", "scenes", "25,092"),
        ("scene entries", "entries", "448,264"),
        ("cards", "cards", "232,596"),
    ):
        lines.append(f"| {label} | {tables.get(table, 0)} | {paper} |")
    splits = stats.get("split", {})
    lines += [
        f"| validation / test stories | {splits.get('validation', {}).get('stories', 0)} / "
        f"{splits.get('test', {}).get('stories', 0)} | 569 / 570 |",
        "",
        "The paper's entries hold 126,041,738 tokens; its 232,596 cards are 204,698 unique ones.",
        "",
    ]
    lines += [
        "",
        "## Packed contexts (paper section 3.1.1)",
        "",
        PACK_DEFINITION.format(
            entry=pack.get("entry_preferred"),
            weight=pack.get("entry_weight", 10),
            other=pack.get("other_preferred"),
            sep=pack.get("separator_tokens", 1),
            end=pack.get("end_tokens", 1),
        ),
        "",
        f"- budget: {pack.get('budget')} tokens",
        f"- tokenizer: `{cfg.get('tokenizer')}`",
        "",
        "### Packing choices, their sources and the flags that flip them",
        "",
        *choice_rows(cfg),
        "",
    ]
    return "\n".join(lines)


def edits_sections(stats: dict) -> str:
    cfg = stats.get("config", {})
    lines = [
        "## USER metric (paper section 4.2, appendix C)",
        "",
        USER_DEFINITION.format(autojunk=cfg.get("autojunk"), n_stop=cfg.get("n_stop_words")),
        "",
        "## Metric means (table `summary`; `*` = all edits)",
        "",
        "| model | edits | kept token share | USER P | USER R | USER F1 | ROUGE-L P | ROUGE-L R | ROUGE-L F1 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in stats.get("metrics") or []:
        lines.append(
            f"| {row['model']} | {row['n_edits']} | "
            + " | ".join(
                f"{row[k]:.4f}"
                for k in (
                    "kept_token_share",
                    "user_precision",
                    "user_recall",
                    "user_f1",
                    "rouge_l_precision",
                    "rouge_l_recall",
                    "rouge_l_f1",
                )
            )
            + " |"
        )
    if not stats.get("metrics"):
        lines.append("| - | 0 | | | | | | | |")
    lines += ["", "## Preserved text by part of speech (paper section 5)", ""]
    pres = stats.get("preserved", {})
    if pres.get("skipped"):
        lines.append(
            f"Skipped: {pres['skipped']}. Only the part-of-speech and named-entity "
            "table (`preserved_pos`) is missing; every other output is complete."
        )
    else:
        lines += [
            f"- spaCy pipeline: `{cfg.get('spacy_model')}`",
            f"- edits analysed: {pres.get('edits')} (unalignable: {pres.get('unaligned', 0)})",
            f"- generated entities: {pres.get('entities_generated')}, kept: "
            f"{pres.get('entities_kept')}, kept and naming a character: "
            f"{pres.get('entities_kept_in_characters')}",
            "- per part of speech: table `preserved_pos`",
        ]
    return "\n".join(lines + [""])


def storium_card(stats: dict) -> str:
    """CARD.md of the storium job: the common summary, the definitions, the reject reasons."""
    return default_card(stats) + "\n" + storium_sections(stats) + "\n" + reasons_markdown(STORIUM_REASONS)


def edits_card(stats: dict) -> str:
    """CARD.md of the edits job: the common summary, the definitions, the reject reasons."""
    return default_card(stats) + "\n" + edits_sections(stats) + "\n" + reasons_markdown(EDITS_REASONS)
