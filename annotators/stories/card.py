"""CARD.md of the stories and crawl jobs: the default summary, the job's rules, its reject reasons."""

from __future__ import annotations

from annotators.core.card import default_card
from annotators.core.reasons import reasons_markdown
from annotators.stories.reasons import CRAWL_REASONS, JOB_REASONS

DEDUP_RULE = (
    "Exact duplicates share the cleaned text (SHA-256). Near-duplicates: character {shingle}-gram "
    "shingles, a MinHash sketch ({sketch}: {num_perm} values, seed {seed}) cut into LSH bands; "
    "stories sharing a band are candidates, and a candidate pair is merged only when the exact "
    "shingle Jaccard is >= {threshold} (a pair already joined through others is not checked again). "
    "Clusters are connected components; the representative "
    "kept is the member with the smallest (url, input_id); the others are rejects "
    "(`exact_duplicate` / `near_duplicate`, whose detail gives the member's exact Jaccard with the "
    "representative: below {threshold} for a member joined through others) and the kept row lists every "
    "member in `cluster_members` (input ids), with `cluster_id` a hash of them. A story id is a hash "
    "of the source and the given id (or the URL): a kept story whose id an earlier cleaned story has "
    "(in (url, input_id) order) is a `duplicate_id` reject, so every row has its own id."
)

REPLACED_RULE = (
    "{pages} page(s) that no charset decodes strictly were read as UTF-8 with their {sequences} invalid "
    "byte sequence(s) as U+FFFD, as a browser shows them (at most one per 1,000 characters, one in a "
    "shorter page; more is a wrong charset, `undecodable`). The U+FFFD stays in the text, and the row's "
    "`encoding` says how many it holds."
)

CRAWL_RULE = (
    "Polite single-process crawl: robots.txt obeyed (disallowed URLs recorded, "
    "never requested), one request at a time, `delay_seconds` between requests to a host, "
    "retries with exponential backoff honouring Retry-After, at most `max_redirects` "
    "redirects and only to `allowed_hosts`, each request within --timeout in all. `pages/` is "
    "the raw cache, written on exit and on SIGTERM/Ctrl-C too; re-running with the same --output "
    "requests nothing cached. This run: {this_run}."
)


def stories_card(stats: dict) -> str:
    """Summary, the dedup rule with this run's settings, the clusters found (first 200), reasons."""
    lines = [
        default_card(stats),
        "## Deduplication",
        "",
        DEDUP_RULE.format(**stats["config"]["near_dup"]),
        "",
        "| representative | members |",
        "|---|---|",
    ]
    lines += [
        f"| {c['representative']} | {', '.join(c['members'])} |" for c in stats.get("duplicate_clusters", [])[:200]
    ]
    replaced = stats.get("utf8_replaced") or {}
    if replaced.get("pages"):
        lines += ["", "## Decoding", "", REPLACED_RULE.format(**replaced)]
    return "\n".join(lines) + "\n\n" + reasons_markdown(JOB_REASONS)


def crawl_card(stats: dict) -> str:
    """Summary, the politeness rules and this run's progress, reasons."""
    return (
        default_card(stats)
        + "\n## Crawl\n\n"
        + CRAWL_RULE.format(this_run=stats["this_run"])
        + "\n\n"
        + reasons_markdown(CRAWL_REASONS)
    )
