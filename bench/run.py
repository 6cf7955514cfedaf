"""`make bench`: every storybench benchmark in one run, each against its baseline.

1. LOT build (`pipelines.lot`) vs plain `jieba.lcut` on the same text, 1 and 2 workers, with
   each jieba backend (jieba, rjieba) and rjieba's speed-up; then the cut itself
   (bench/bench_cut.py): cut_both and cut_sentences(pos=True) per backend vs jieba.lcut.
2. 8-gram overlap audit vs plain `jieba.lcut` on the reference, and peak memory for a
   reference 1x, 4x and 16x as large (it must stay flat).
3. OutGen outline agreement with LOT's official outlines (when ../shared/data is present).
4. The scale table (bench/scale.py): wall time, CPU time and peak RSS of lot, stories,
   chapterbreak and overlap at 1x, 4x and 16x of a realistic corpus, with growth ratios
   (one worker process).
5. Every core, bounded memory (bench/parallel.py): lot, stories, chapterbreak and the overlap
   audit with one worker against the default (a process per core) at their large inputs,
   three pairs each, alternated (medians; every pair's ratio listed), same bytes or not;
   peak RSS of the process tree at 1x and 4x (an overlap reference that holds the test
   stories included); the stories job's deduplication against datatrove's
   MinHash dedup (its own virtual environment) and a plain datasketch script.
A benchmark, not a test: it prints numbers and never fails on speed.
"""

from __future__ import annotations

import json
import pathlib
import tempfile

from bench.bench_cut import print_cut_bench, run_cut_bench
from bench.bench_lot import print_lot_bench, run_lot_bench
from bench.bench_overlap import run_overlap_bench
from bench.parallel import parallel_markdown, run_parallel_bench
from bench.scale import BOOKS, books_folders, run_scale_bench, scale_markdown


def main() -> None:
    results = {"lot": run_lot_bench()}
    print_lot_bench(results["lot"])
    results["cut"] = run_cut_bench()
    print_cut_bench(results["cut"])
    print()
    results["overlap"] = run_overlap_bench()
    try:
        from bench.outline_agreement import main as outline_main

        print()
        outline_main([])
    except FileNotFoundError as exc:
        print(f"outline agreement skipped: {exc}")
    out = pathlib.Path("output/bench")
    out.mkdir(parents=True, exist_ok=True)
    print("\nscale table (1 worker, fresh process per run):")
    with tempfile.TemporaryDirectory() as tmp:
        results["scale"] = run_scale_bench(pathlib.Path(tmp))
    (out / "scale.md").write_text(scale_markdown(results["scale"]), encoding="utf-8")
    print("\nevery core, bounded memory (default workers against one):")
    with tempfile.TemporaryDirectory() as tmp:
        books = books_folders(pathlib.Path(tmp))[16][0] if BOOKS.exists() else None
        results["parallel"] = run_parallel_bench(pathlib.Path(tmp) / "parallel", books)
    (out / "parallel.md").write_text(parallel_markdown(results["parallel"]), encoding="utf-8")
    (out / "results.json").write_text(json.dumps(results, indent=2, default=str) + "\n")
    print(f"\nresults written to {out / 'results.json'}")


if __name__ == "__main__":
    main()
