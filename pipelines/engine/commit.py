"""Outputs committed as a whole: a job writes into a staging folder beside its output, and
only a run that finished replaces the output's contents.

A failed, interrupted or dry run leaves the previous output untouched, and a run that writes
fewer files than the last one leaves no stale file behind (consumers read every file of a
folder). Nothing here runs while the graph is built: `prepare` runs just before the pipeline,
`commit` just after it finished, on the machine that launched the job (local paths or
`gs://`, through Beam's FileSystems).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence

from apache_beam.io.filesystems import FileSystems

from pipelines.engine.paths import is_local_path, match_files, read_bytes
from pipelines.engine.usage import ForeignOutput

LOG = logging.getLogger("storybench")
STAGING_SUFFIX = ".incomplete"
MARKER = "stats.json"  # every job writes it: a folder without it is not a storybench output
# A pipeline's attribute JobReport.finish sets: {"job": its name, "inputs": its input paths},
# which `prepare` checks the output against before the run replaces it.
OWNER = "storybench_output_of"
GLOB_CHARS = "*?["


def staging_path(output: str) -> str:
    """Where a job writes while it runs: `<output>.incomplete`, beside the output (a local
    output named `.` or `..` is named by its absolute path: `..incomplete` lay inside it)."""
    base = output.rstrip("/")
    if is_local_path(output) and os.path.basename(base) in ("", ".", ".."):
        base = os.path.abspath(base or "/").rstrip("/")
    return base + STAGING_SUFFIX


def _files(folder: str) -> list[str]:
    try:
        return sorted(m.path for m in FileSystems.match([folder.rstrip("/") + "/**"])[0].metadata_list)
    except Exception:  # no such folder: nothing in it
        return []


def _delete(paths: list[str]) -> None:
    if paths:
        FileSystems.delete(paths)


def prepare(output: str, job: str | None = None, inputs: Sequence[str] = ()) -> None:
    """Before a run: refuse to replace a folder that is not `job`'s own output, or that holds
    one of the job's `inputs`; clear staging.

    The run replaces everything in the output folder, so it must be a storybench output of
    this job: its top-level stats.json names `job` (checked when `job` is given), and no
    folder inside it holds another output's stats.json (an audit written into a LOT build's
    folder, a crawl inside the folder given as the stories job's output). A job's input inside
    the output would be deleted by the run that reads it."""
    if is_local_path(output) and os.path.exists(output) and not os.path.isdir(output):
        raise ForeignOutput(f"--output {output!r} is a file, not a folder; choose another --output")
    existing = _files(output)
    root = output.rstrip("/")
    for name in inputs:
        inside = _inside(name, root)
        if inside:
            raise ForeignOutput(
                f"--output {output!r} holds this job's input {inside!r}, which replacing the output "
                "would delete; choose another --output"
            )
    if existing:
        top = root + "/" + MARKER
        if top not in existing:
            raise ForeignOutput(
                f"{output!r} holds files but no {MARKER}: it is not a storybench output, "
                "so it will not be replaced; choose another --output"
            )
        nested = [p for p in existing if p != top and p.endswith("/" + MARKER)]
        if nested:
            raise ForeignOutput(
                f"{output!r} holds another output ({nested[0][len(root) + 1 :]!r}), which replacing it "
                "would delete; move that folder out or choose another --output"
            )
        if job:
            owner = output_job(top)
            if owner != job:
                what = f"the output of job {owner!r}" if owner else f"a folder whose {MARKER} is unreadable"
                raise ForeignOutput(
                    f"{output!r} is {what}, not of {job!r}, so it will not be replaced; choose another --output"
                )
    _delete(_files(staging_path(output)))


def output_job(stats_path: str) -> str | None:
    """The `job` a stats.json names, or None when it cannot be read."""
    try:
        job = json.loads(read_bytes(stats_path).decode("utf-8")).get("job")
    except (OSError, ValueError, AttributeError):
        return None
    return job if isinstance(job, str) else None


def _absolute(path: str) -> str:
    return path.rstrip("/") if "://" in path else os.path.abspath(path)


def _inside(name: str, root: str) -> str | None:
    """`name` (an input file, folder or glob) or a file it matches, when it lies in the folder
    `root` (or is it), else None."""
    folder = _absolute(root)
    candidates = [name] + (match_files(name) if any(c in name for c in GLOB_CHARS) else [])
    for path in candidates:
        full = _absolute(path)
        if full == folder or full.startswith(folder + "/"):
            return path
    return None


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


def discard(output: str, staged: bool = True) -> bool:
    """After an interrupted run: its staging folder goes (unless `staged` is False: a remote
    job may still be writing there), the output stays as it was; returns whether the output
    holds files (a previous run's)."""
    staging = staging_path(output)
    if staged:
        _delete(_files(staging))
        if is_local_path(staging) and os.path.isdir(staging):
            _remove_empty_dirs(staging)
    return bool(_files(output))


def _remove_empty_dirs(folder: str, *, keep_root: bool = False) -> None:
    """Local folders left empty by a delete or a rename (object stores have no folders)."""
    for root, _, _ in os.walk(folder, topdown=False):
        if not os.listdir(root) and not (keep_root and os.path.samefile(root, folder)):
            os.rmdir(root)
