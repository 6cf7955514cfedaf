"""A helper the writer tests share: per-group JSON lines added to a pipeline, the pipeline run,
and every file it wrote."""

from __future__ import annotations

import apache_beam as beam

from pipelines.engine import WriteJsonlGroups


def run_with_groups(p, made, out) -> dict[str, bytes]:
    """Add JSON lines of `made`'s rows grouped by "g" (groups a, b, c; c empty) under
    `out/j/`, run `p`, and return every file under `out` (relative path -> bytes)."""
    _ = (
        made
        | beam.Map(lambda r: (r["g"], r["id"], r))
        | WriteJsonlGroups(lambda g: f"{out}/j/{g}.jsonl", ["a", "b", "c"], "j")
    )
    p.run().wait_until_finish()
    return {str(f.relative_to(out)): f.read_bytes() for f in sorted(out.rglob("*")) if f.is_file()}
