"""`make bench`: every storybench benchmark in one run, each against its baseline.

1. LOT build (`pipelines.lot`) vs plain `jieba.lcut` on the same text, 1 and 2 workers.
2. 8-gram overlap audit vs plain `jieba.lcut` on the reference, and peak memory for a
   reference 1x, 4x and 16x as large (it must stay flat).
3. OutGen outline agreement with LOT's official outlines (when ../shared/data is present).
4. The scale table (bench/scale.py): wall time, CPU time and peak RSS of lot, stories,
   chapterbreak and overlap at 1x, 4x and 16x of a realistic corpus, with growth ratios.
A benchmark, not a test: it prints numbers and never fails on speed.
"""
from __future__ import annotations

import json
import pathlib
import tempfile

from bench.bench_lot import print_lot_bench, run_lot_bench
from bench.bench_overlap import run_overlap_bench
from bench.scale import run_scale_bench, scale_markdown


def main() -> None:
    results = {"lot": run_lot_bench()}
    print_lot_bench(results["lot"])
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
    (out / "results.json").write_text(json.dumps(results, indent=2, default=str) + "\n")
    print(f"\nresults written to {out / 'results.json'}")


if __name__ == "__main__":
    main()
