"""Paths and whole files, local or remote (`gs://`), all through Beam's FileSystems: what an
input pattern matches (a file, a glob or a folder) and the stable names that input ids are
made of, whole-file reads and writes, a written table's parquet files and its split names.

Why a module of its own: every reader, writer, exporter and job names files the same way, and
nothing here builds a Beam graph, so the crawl job (not Beam) and the report use it too.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Sequence
from typing import NamedTuple

from apache_beam.io.filesystems import FileSystems

from pipelines.engine.merge_runs import is_local_path
from pipelines.engine.usage import MissingInput


def join(*parts: str) -> str:
    return FileSystems.join(*parts) if parts else ""


def match_files(pattern: str) -> list[str]:
    """The files a pattern matches. `**/` matches zero or more folders, as in Python's glob
    and the shells (`games/**/*.json` takes `games/a.json` too): Beam's FileSystems match it
    only with one or more, so the pattern is also matched without each `**/`."""
    found: set[str] = set()
    for variant in _globstar_variants(pattern):
        try:
            found.update(m.path for m in FileSystems.match([variant])[0].metadata_list)
        except Exception:  # a glob with no match raises on some filesystems
            pass
    return sorted(found)


def _globstar_variants(pattern: str) -> list[str]:
    """`pattern` and every pattern made by dropping some of its `**/` (at most 3 of them)."""
    parts = pattern.split("**/")
    if len(parts) == 1 or len(parts) > 4:
        return [pattern]
    variants = []
    for keep in itertools.product((True, False), repeat=len(parts) - 1):
        out = parts[0]
        for kept, part in zip(keep, parts[1:]):
            out += ("**/" if kept else "") + part
        variants.append(out)
    return list(dict.fromkeys(variants))


def _is_folder(pattern: str) -> bool:
    if is_local_path(pattern):
        return os.path.isdir(pattern)
    return not any(c in pattern for c in "*?[") and not match_files(pattern)


def expand_input(pattern: str, exts: Sequence[str] = (), *, mixed: bool = False) -> list[str]:
    """Matched file paths for a file, glob or folder (local or `gs://`).

    A folder means its files with the first of `exts` (in order of preference) that has any:
    a LOT task folder holds parquet parts and `<split>.jsonl` exports of the same rows, and
    must be read once. With `mixed`, a folder means its files with any of `exts` (an AO3
    folder of pages and JSON lines). A file with an extension and `.gz` or `.bz2` after it
    counts as one with the extension (the readers decompress it). Raises FileNotFoundError
    naming the pattern when nothing matches.
    """
    if _is_folder(pattern):
        folder = pattern.rstrip("/")
        found: list[str] = []
        for ext in exts or ("",):
            found += match_files(f"{folder}/*{ext}")
            if ext and ext != ".parquet":
                found = sorted(set(found + match_files(f"{folder}/*{ext}.gz") + match_files(f"{folder}/*{ext}.bz2")))
            if found and not mixed:
                return found
        if found:
            return sorted(set(found))
        raise MissingInput(f"no {'/'.join(exts) or ''} files in folder {pattern!r}")
    paths = match_files(pattern)
    if not paths:
        raise MissingInput(f"no input files match {pattern!r}")
    return paths


def input_names(paths: Sequence[str], pattern: str) -> dict[str, str]:
    """Each path relative to the glob-free folder of `pattern`: ids stable across machines."""
    cut = min([i for i, c in enumerate(pattern) if c in "*?["] or [len(pattern)])
    fixed = pattern[:cut]
    if is_local_path(fixed):
        fixed = fixed + "/" if os.path.isdir(fixed) and not fixed.endswith("/") else fixed
    prefix = fixed.rsplit("/", 1)[0] + "/" if "/" in fixed else ""
    return {p: p[len(prefix) :] if prefix and p.startswith(prefix) else p.rsplit("/", 1)[-1] for p in paths}


def listed_inputs(pattern: str, exts: Sequence[str] = (), *, mixed: bool = False) -> list[str]:
    """The stable names of a pattern's inputs, for stats.json and cards.

    A local pattern is listed now (offline and cheap; no match raises FileNotFoundError); a
    remote one is recorded as given, since nothing remote is listed while a graph is built.
    """
    if not is_local_path(pattern):
        return [pattern]
    paths = expand_input(pattern, exts, mixed=mixed)
    return sorted(input_names(paths, pattern).values())


def read_bytes(path: str) -> bytes:
    with FileSystems.open(path, mime_type="application/octet-stream", compression_type="uncompressed") as f:
        return f.read()


def write_bytes(path: str, data: bytes) -> None:
    with FileSystems.create(path, mime_type="application/octet-stream", compression_type="uncompressed") as f:
        f.write(data)


def write_text(path: str, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def write_text_to(text: str, path: str) -> None:
    """`write_text(path, text)` with the text first: `beam.Map(write_text_to, path)`."""
    write_text(path, text)


class Source(NamedTuple):
    """One input file and its stable name (relative to the pattern's fixed folder) for ids."""

    path: str
    name: str


def match_sources(pattern: str, exts: Sequence[str] = (), mixed: bool = False) -> list[Source]:
    paths = expand_input(pattern, exts, mixed=mixed)
    names = input_names(paths, pattern)
    return [Source(path, names[path]) for path in paths]


# Split names as Hugging Face datasets names them (its file-name patterns and `DatasetDict`
# keys): the parquet tables use these; the papers' own layouts (exports) keep "val" or "dev".
HF_SPLITS = {
    "train": "train",
    "val": "validation",
    "valid": "validation",
    "validation": "validation",
    "dev": "validation",
    "test": "test",
}
DEFAULT_SPLITS = ("train", "validation", "test")


def hf_split(split: str) -> str:
    """The Hugging Face name of a split ("val", "valid", "dev" -> "validation"); other names
    as they are (made file-name safe)."""
    return HF_SPLITS.get(split) or re.sub(r"[^\w.]+", "_", split or "unnamed")


def table_files(table_path: str) -> list[str]:
    """A written table's parquet files (`part-*` or per-split `<split>-*`), sorted."""
    return sorted(m.path for m in FileSystems.match([join(table_path, "*.parquet")])[0].metadata_list)


def file_name(path: str) -> str:
    """The last component of a local or remote path (what an export's tally is named by)."""
    return path.rstrip("/").rsplit("/", 1)[-1]


def delete_folder(_, folder: str) -> list:
    """Delete the spilled runs once every shard that reads them is written."""
    try:
        paths = [m.path for m in FileSystems.match([join(folder, "*")])[0].metadata_list]
    except Exception:  # nothing was spilled
        paths = []
    if paths:
        FileSystems.delete(paths)
    if is_local_path(folder) and os.path.isdir(folder) and not os.listdir(folder):
        os.rmdir(folder)
    return []
