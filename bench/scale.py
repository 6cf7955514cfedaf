"""`make bench` scale table: wall time, CPU time and peak RSS of four jobs at 1x, 4x and 16x.

Each run is a fresh child process running the job in-process (Beam's FnApiRunner, one
worker), which reports its own wall time, CPU time (user + system, its children included)
and peak RSS (`VmHWM` of /proc/self/status: `ru_maxrss` survives exec, so it would report the
parent's size). Inputs are realistic and made in the same run:
- lot, stories: real LOT stories (../shared/data, else the embedded sample) copied with their
  sentences shuffled per copy, so copies are distinct stories;
- chapterbreak: the real Gutenberg books of ../shared/data copied under new names, each copy
  after the first with the inner words of every line of 4+ words shuffled (`distinct_copy`):
  the job collapses copies of one book, so copies must be different books, while their
  lines, headings, chapters, quotes and cue words stay where they were;
- overlap: a 161-story test set against a reference of that many shuffled-story characters.
The growth ratios (4x/1x, 16x/1x) show what grows with the input: time should grow about
linearly, memory much less (flat for the overlap audit).
"""

from __future__ import annotations

import json
import pathlib
import random
import shutil
import sys

from bench.common import SHARED_DATA, lot_source, measure, scaled_corpus

BOOKS = SHARED_DATA / "gutenberg"
SCALES = (1, 4, 16)


def _write_jsonl(path: pathlib.Path, records: list[dict]) -> int:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path.stat().st_size


def _stories(work: pathlib.Path, base_stories: int) -> dict[int, tuple[pathlib.Path, int]]:
    source = lot_source()
    per_copy = sum(1 for line in source.read_text(encoding="utf-8").splitlines() if line.strip())
    made = {}
    for scale in SCALES:
        n = base_stories * scale
        records = scaled_corpus(source, -(-n // per_copy))[:n]
        path = work / f"stories_{scale}x.jsonl"
        made[scale] = (path, _write_jsonl(path, records))
    return made


def books_folders(work: pathlib.Path) -> dict[int, tuple[pathlib.Path, int]]:
    """The Gutenberg books of ../shared/data at each scale (folder, bytes)."""
    return _books(work)


def _books(work: pathlib.Path) -> dict[int, tuple[pathlib.Path, int]]:
    books = sorted(BOOKS.rglob("*.txt"))
    made = {}
    for scale in SCALES:
        folder = work / f"books_{scale}x"
        folder.mkdir()
        for copy in range(scale):
            for book in books:
                target = folder / f"c{copy:02d}_{book.parent.name}_{book.name}"
                if copy:
                    target.write_bytes(distinct_copy(book.read_bytes(), copy))
                else:
                    shutil.copy(book, target)
        made[scale] = (folder, sum(p.stat().st_size for p in folder.iterdir()))
    return made


def distinct_copy(raw: bytes, copy: int) -> bytes:
    """A book made distinct from the original (no shared 8-word runs): in every line of 4+
    words, the words between the first and the last are shuffled (seeded by copy and line)."""
    lines = raw.split(b"\n")
    out = []
    for n, line in enumerate(lines):
        words = line.split(b" ")
        if len(words) >= 4:
            middle = words[1:-1]
            random.Random(copy * 1_000_003 + n).shuffle(middle)
            line = b" ".join([words[0], *middle, words[-1]])
        out.append(line)
    return b"\n".join(out)


def _references(work: pathlib.Path, stories: dict) -> dict[int, tuple[pathlib.Path, int]]:
    made = {}
    for scale, (path, _) in stories.items():
        ref = work / f"reference_{scale}x.txt"
        with ref.open("w", encoding="utf-8") as out:
            for line in path.read_text(encoding="utf-8").splitlines():
                out.write(json.loads(line)["story"] + "\n")
        made[scale] = (ref, ref.stat().st_size)
    return made


def _jobs(work: pathlib.Path, base_stories: int) -> dict:
    stories = _stories(work, base_stories)
    test = work / "test.jsonl"
    source = lot_source()
    shutil.copy(source, test)
    jobs = {
        "lot": {s: ("pipelines.lot", ["--stories", str(p)], b) for s, (p, b) in stories.items()},
        "stories": {s: ("pipelines.stories", ["--input", str(p)], b) for s, (p, b) in stories.items()},
        "overlap": {
            s: ("pipelines.overlap", ["--test", str(test), "--test-fields", "story", "--reference", str(p)], b)
            for s, (p, b) in _references(work, stories).items()
        },
    }
    if BOOKS.exists():
        jobs["chapterbreak"] = {
            s: ("pipelines.chapterbreak", ["--gutenberg", str(p / "*.txt")], b) for s, (p, b) in _books(work).items()
        }
    return jobs


def run_scale_bench(work: pathlib.Path, base_stories: int = 2000) -> dict:
    """The scale table: {job: {scale: {input_mb, wall_s, cpu_s, peak_rss_mib}, growth: ...}}."""
    table = {}
    for job, runs in _jobs(work, base_stories).items():
        rows = {}
        for scale, (module, args, size) in runs.items():
            out = work / f"out_{job}_{scale}x"
            rows[scale] = {
                "input_mb": round(size / 1e6, 1),
                **measure(module, args + ["--output", str(out), "--direct_num_workers", "1"]),
            }
            shutil.rmtree(out, ignore_errors=True)
        lo = rows[SCALES[0]]
        rows["growth"] = {
            f"{s}x/1x": {k: round(rows[s][k] / max(lo[k], 1e-9), 2) for k in ("wall_s", "cpu_s", "peak_rss_mib")}
            for s in SCALES[1:]
        }
        table[job] = rows
        print(scale_lines(job, rows), flush=True)
    return table


def scale_lines(job: str, rows: dict) -> str:
    lines = [
        f"{job}: "
        + "  ".join(
            f"{s}x {rows[s]['input_mb']} MB: {rows[s]['wall_s']} s wall, "
            f"{rows[s]['cpu_s']} s CPU, {rows[s]['peak_rss_mib']} MiB"
            for s in SCALES
        )
    ]
    lines += [f"  growth {k}: " + ", ".join(f"{m} x{v}" for m, v in g.items()) for k, g in rows["growth"].items()]
    return "\n".join(lines)


def scale_markdown(table: dict) -> str:
    """The scale table as markdown (output/bench/scale.md)."""
    lines = ["| job | scale | input MB | wall s | CPU s | peak RSS MiB |", "|---|---:|---:|---:|---:|---:|"]
    for job, rows in table.items():
        lines += [
            f"| {job} | {s}x | {rows[s]['input_mb']} | {rows[s]['wall_s']} | {rows[s]['cpu_s']} "
            f"| {rows[s]['peak_rss_mib']} |"
            for s in SCALES
        ]
    lines += ["", "| job | growth | wall | CPU | peak RSS |", "|---|---|---:|---:|---:|"]
    for job, rows in table.items():
        lines += [
            f"| {job} | {k} | {g['wall_s']} | {g['cpu_s']} | {g['peak_rss_mib']} |" for k, g in rows["growth"].items()
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        print(json.dumps(run_scale_bench(pathlib.Path(tmp), int(sys.argv[1]) if len(sys.argv) > 1 else 2000), indent=2))
