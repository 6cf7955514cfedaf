"""Outputs committed as a whole: a job writes into a staging folder beside its output, and
only a run that finished replaces the output's contents.

A failed, interrupted or dry run leaves the previous output untouched, and a run that writes
fewer files than the last one leaves no stale file behind (consumers read every file of a
folder). Nothing here runs while the graph is built: `prepare` runs just before the pipeline,
`commit` just after it finished, on the machine that launched the job (local paths or
`gs://`, through Beam's FileSystems).
"""

from __future__ import annotations

import logging
import os

from apache_beam.io.filesystems import FileSystems

from pipelines.engine.paths import is_local_path
from pipelines.engine.usage import ForeignOutput

LOG = logging.getLogger("storybench")
STAGING_SUFFIX = ".incomplete"
MARKER = "stats.json"  # every job writes it: a folder without it is not a storybench output


def staging_path(output: str) -> str:
    """Where a job writes while it runs: `<output>.incomplete`, beside the output."""
    return output.rstrip("/") + STAGING_SUFFIX


def _files(folder: str) -> list[str]:
    try:
        return sorted(m.path for m in FileSystems.match([folder.rstrip("/") + "/**"])[0].metadata_list)
    except Exception:  # no such folder: nothing in it
        return []


def _delete(paths: list[str]) -> None:
    if paths:
        FileSystems.delete(paths)


def prepare(output: str) -> None:
    """Before a run: refuse to replace a folder that is not a storybench output; clear staging."""
    existing = _files(output)
    if existing and not any(p.rstrip("/").endswith("/" + MARKER) for p in existing):
        raise ForeignOutput(
            f"{output!r} holds files but no {MARKER}: it is not a storybench output, "
            "so it will not be replaced; choose another --output"
        )
    _delete(_files(staging_path(output)))


def commit(output: str) -> list[str]:
    """After a finished run: the staging folder's files replace the output's; returns them."""
    staging = staging_path(output).rstrip("/")
    new = _files(staging)
    _delete(_files(output))
    if is_local_path(output):
        _remove_empty_dirs(output, keep_root=True)
    final = [output.rstrip("/") + p[len(staging) :] for p in new]
    if is_local_path(output):
        for path in final:
            os.makedirs(os.path.dirname(path), exist_ok=True)
    if new:
        FileSystems.rename(new, final)
    if is_local_path(staging):
        _remove_empty_dirs(staging)
    LOG.info("committed %d files to %s", len(final), output)
    return final


def _remove_empty_dirs(folder: str, *, keep_root: bool = False) -> None:
    """Local folders left empty by a delete or a rename (object stores have no folders)."""
    for root, _, _ in os.walk(folder, topdown=False):
        if not os.listdir(root) and not (keep_root and os.path.samefile(root, folder)):
            os.rmdir(root)
