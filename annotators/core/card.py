"""The human-readable CARD.md every job writes: a summary of its stats.json.

Job-specific cards (`annotators/<benchmark>/card.py`) add their sections below this one.
"""

from __future__ import annotations

import json

NO_SEED = "none (nothing in this job is drawn at random)"


def default_card(stats: dict) -> str:
    """A human-readable summary of stats.json: counts, accounting, config, provenance."""
    lines = [
        f"# storybench `{stats['job']}` output",
        "",
        f"- schema version: {stats['schema_version']}",
        f"- seed: {stats['seed'] if stats.get('seed') is not None else NO_SEED}",
        f"- runner: {stats.get('runner')}",
        f"- apache-beam: {stats.get('beam_version')}",
        f"- inputs: {', '.join(stats.get('inputs', [])) or '-'}",
    ]
    if stats.get("jieba_backend"):
        backend = stats["jieba_backend"]
        lines.append(f"- jieba backend: {backend['backend']} {backend['version']} (tokens identical to jieba 0.42.1)")
    lines += [
        "",
        "## Accounting (read = written + rejected per stage)",
        "",
        "`read`: records the stage received; `written`: records it kept; `rejected`: records it",
        "dropped (each is a `rejects` row with its reason); `outputs`: what the kept records",
        "became (one record may give several rows, e.g. a story gives one example per window,",
        "or none).",
        "",
        "| stage | read | written | rejected | outputs | balanced | reject reasons |",
        "|---|---:|---:|---:|---:|---|---|",
    ]
    for name, s in stats["stages"].items():
        reasons = ", ".join(f"{k}: {v}" for k, v in s["rejected_by_reason"].items()) or "-"
        lines.append(
            f"| {name} | {s['read']} | {s['written']} | {s['rejected']} | {s['outputs']} "
            f"| {'yes' if s['balanced'] else 'NO'} | {reasons} |"
        )
    lines += ["", "## Tables", "", "| table | rows | rows per split |", "|---|---:|---|"]
    splits = stats.get("table_splits", {})
    lines += [
        f"| {k} | {v} | {', '.join(f'{s}: {n}' for s, n in splits[k].items()) if k in splits else '-'} |"
        for k, v in stats["tables"].items()
    ]
    if stats.get("exports"):
        lines += ["", "## Exports", "", "| file | records |", "|---|---:|"]
        lines += [f"| {k} | {v} |" for k, v in stats["exports"].items()]
    lines += [
        "",
        "## Config",
        "",
        "```json",
        json.dumps(stats.get("config", {}), indent=2, ensure_ascii=False, sort_keys=True),
        "```",
        "",
    ]
    return "\n".join(lines)


def complete_card(text: str, stats: dict) -> str:
    """A job's card text, then its figures, licence and citation: CARD.md as README.md embeds it."""
    from annotators.core.figures import card_section
    from annotators.core.hf_card import licence_section
    from annotators.harness.common import card_section as harness_section

    warned = "".join(f"- {w}\n" for w in stats.get("warnings") or [])
    warnings = f"## Warnings\n\n{warned}" if warned else ""
    parts = [
        text.rstrip("\n"),
        warnings,
        card_section(stats.get("figures") or []),
        harness_section(stats),
        licence_section(stats),
    ]
    return "\n\n".join(p.rstrip("\n") for p in parts if p) + "\n"
