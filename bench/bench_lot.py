"""`make bench` part 1: the LOT build's CPU cost against plain jieba and a naive script, same run.

On 20,000 real LOT stories (../shared/data, else the embedded sample) copied with their
sentences shuffled per copy (so copies are distinct stories), in fresh child processes:
- plain `jieba.lcut` over every story (the yardstick: characters per CPU-second);
- `bench/naive_lot.py`: SenPos + PlotCom + OutGen in one plain loop, as a researcher would write it;
- `pipelines.lot` with each jieba backend (`jieba`, `rjieba`), 1 and 2 workers, and rjieba's
  speed-up over jieba (CPU seconds of the same build).
A build of the first FIXED_STORIES stories shows the cost every build pays whatever its size.
The copies make a corpus unlike a real one: every story has about a hundred near-duplicates,
and the copies of a story of one or two sentences are the same text (the dedup drops them,
about 3,000 of 20,000). So the same build also runs, once, on as many `distinct` stories
(`bench.parallel.distinct_stories`: real sentences drawn from every real story, near-duplicates
rare), beside plain jieba over that text.
The two numbers issue 29's bar compares, plain jieba and the default backend's build on one
worker, are each the median of REPEATS runs (each run's CPU seconds are listed): on a shared
machine one run of either moved by a third from run to run. They are taken in turns (jieba,
the build, jieba, ...), so both medians come from the same minutes, and each pair's ratio is
printed too (this machine's speed drifts from one quarter of an hour to the next, and the
jieba backend's builds alone take minutes). CPU seconds count the worker
processes too. Ratios are characters per CPU-second against
plain jieba's, so 1.0 means "as fast as tokenising once with jieba". Before anything is
timed, one process loads both backends, so jieba's dictionary cache exists as it does on any
machine after its first run; plain jieba's time leaves out its dictionary load altogether.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile

from bench.common import ROOT, lot_source, measure, scaled_corpus
from bench.parallel import distinct_stories

_JIEBA = """
import json, sys, time
import jieba
jieba.initialize()
texts = [json.loads(line)["story"] for line in open(sys.argv[1], encoding="utf-8")]
start = time.process_time()
for text in texts:
    jieba.lcut(text)
print(json.dumps({"cpu_s": time.process_time() - start}))
"""
_WARM = """
import json
from annotators.text import zh_tokens
print(json.dumps({b: zh_tokens.backend_info(b) for b in ("jieba", "rjieba")}))
"""
REPEATS = 3  # runs of each of the two measurements the bar compares (their median counts)
FIXED_STORIES = 10  # the build of this many stories shows what a build costs whatever its size
BAR_RUN = "pipelines.lot rjieba, 1 worker"  # the default backend's build on one worker
WORKERS = {
    "1 worker": ["--direct_num_workers=1"],
    "2 workers": ["--direct_num_workers=2"],  # the job's default local mode: a pool of 2
}


def _child_json(args: list[str]) -> dict:
    proc = subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    if proc.returncode:
        raise RuntimeError(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _median(results: list[dict]) -> dict:
    """The run of median CPU seconds, with every run's CPU seconds (`cpu_s_runs`) when there are several."""
    chosen = dict(sorted(results, key=lambda r: r["cpu_s"])[len(results) // 2])
    if len(results) > 1:
        chosen["cpu_s_runs"] = [round(r["cpu_s"], 2) for r in results]
    return chosen


def run_lot_bench(stories: int = 20000) -> dict:
    source = lot_source()
    per_copy = sum(1 for line in source.read_text(encoding="utf-8").splitlines() if line.strip())
    corpus = scaled_corpus(source, -(-stories // per_copy))[:stories]
    chars = sum(len(r["story"]) for r in corpus)
    result = {"source": str(source), "stories": len(corpus), "characters": chars, "runs": {}}
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "stories.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in corpus), encoding="utf-8")
        runs = result["runs"]
        result["backends"] = _child_json(["-c", _WARM])  # also writes jieba's dictionary cache

        def build_args(backend: str, name: str) -> list[str]:
            out = pathlib.Path(tmp) / f"out_{backend}_{name[0]}"
            return ["--stories", str(path), "--output", str(out), "--zh-backend", backend] + WORKERS[name]

        # the bar's two measurements one after the other, REPEATS times: the machine's speed
        # drifts over minutes, and each pair then shares its minute (`bar_pairs`)
        jieba_runs, bar_runs = [], []
        for _ in range(REPEATS):
            jieba_runs.append(_child_json(["-c", _JIEBA, str(path)]))
            bar_runs.append(measure("pipelines.lot", build_args("rjieba", "1 worker")))
        result["bar_pairs"] = [round(j["cpu_s"] / b["cpu_s"], 3) for j, b in zip(jieba_runs, bar_runs)]
        runs["plain jieba.lcut"] = _median(jieba_runs)
        runs["naive script"] = _child_json(["-m", "bench.naive_lot", str(path)])
        for backend in ("jieba", "rjieba"):
            for name in WORKERS:
                label = f"pipelines.lot {backend}, {name}"
                runs[label] = (
                    _median(bar_runs) if label == BAR_RUN else measure("pipelines.lot", build_args(backend, name))
                )
        # what a build costs before and after its stories (imports, dictionaries, Beam's graph,
        # the report): the same build of the first FIXED_STORIES stories
        few = pathlib.Path(tmp) / "few.jsonl"
        few.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in corpus[:FIXED_STORIES]), "utf-8")
        fixed = measure(
            "pipelines.lot",
            ["--stories", str(few), "--output", str(pathlib.Path(tmp) / "out_few"), "--zh-backend", "rjieba"]
            + WORKERS["1 worker"],
        )
        result["fixed"] = {"stories": FIXED_STORIES, **fixed}
        # the same build on as many distinct stories (near-duplicates rare, nothing dropped)
        distinct = distinct_stories(pathlib.Path(tmp), len(corpus))
        d_chars = sum(len(json.loads(line)["story"]) for line in distinct.read_text(encoding="utf-8").splitlines())
        d_jieba = _child_json(["-c", _JIEBA, str(distinct)])
        d_args = ["--stories", str(distinct), "--output", str(pathlib.Path(tmp) / "out_distinct"), "--zh-backend"]
        d_build = measure("pipelines.lot", d_args + ["rjieba"] + WORKERS["1 worker"])
        result["distinct"] = {
            "stories": len(corpus),
            "characters": d_chars,
            "plain jieba.lcut": d_jieba,
            BAR_RUN: d_build,
            "ratio_to_jieba": round(d_jieba["cpu_s"] / d_build["cpu_s"], 3),
        }
    jieba_rate = chars / runs["plain jieba.lcut"]["cpu_s"]
    for run in runs.values():
        run["chars_per_cpu_s"] = round(chars / run["cpu_s"])
        run["ratio_to_jieba"] = round(run["chars_per_cpu_s"] / jieba_rate, 3)
    stories_only = runs[BAR_RUN]["cpu_s"] - result["fixed"]["cpu_s"]
    result["fixed"]["stories_only_ratio_to_jieba"] = (
        round(runs["plain jieba.lcut"]["cpu_s"] / stories_only, 3) if stories_only > 0 else None
    )
    result["rjieba_speedup"] = {
        name: round(runs[f"pipelines.lot jieba, {name}"]["cpu_s"] / runs[f"pipelines.lot rjieba, {name}"]["cpu_s"], 2)
        for name in WORKERS
    }
    return result


def print_lot_bench(result: dict) -> None:
    print(f"LOT build: {result['stories']} stories, {result['characters']:,} characters from {result['source']}")
    for name, run in result["runs"].items():
        extra = f", {run['wall_s']} s wall, {run['peak_rss_mib']} MiB" if "wall_s" in run else ""
        if "cpu_s_runs" in run:
            extra += f" (median of {len(run['cpu_s_runs'])} runs: {', '.join(map(str, run['cpu_s_runs']))} CPU-s)"
        print(
            f"  {name:<34} {run['cpu_s']:>8.1f} CPU-s  {run['chars_per_cpu_s']:>9,} chars/CPU-s  "
            f"x{run['ratio_to_jieba']} of jieba{extra}"
        )
    if result.get("bar_pairs"):
        print(
            f"  plain jieba.lcut over {BAR_RUN}, run by run (each pair one after the other): "
            + ", ".join(f"x{r}" for r in result["bar_pairs"])
        )
    for name, speedup in result.get("rjieba_speedup", {}).items():
        print(f"  pipelines.lot with rjieba over jieba, {name}: x{speedup} (CPU-s)")
    fixed = result.get("fixed")
    if fixed:
        print(
            f"  {BAR_RUN} on {fixed['stories']} stories: {fixed['cpu_s']} CPU-s, what every build costs "
            f"whatever its size (imports, dictionaries, Beam's graph, the report); the "
            f"{result['stories']} stories alone: x{fixed['stories_only_ratio_to_jieba']} of jieba"
        )
    distinct = result.get("distinct")
    if distinct:
        print(
            f"  on {distinct['stories']} distinct stories ({distinct['characters']:,} characters, near-duplicates "
            f"rare): plain jieba.lcut {distinct['plain jieba.lcut']['cpu_s']:.1f} CPU-s, {BAR_RUN} "
            f"{distinct[BAR_RUN]['cpu_s']:.1f} CPU-s, x{distinct['ratio_to_jieba']} of jieba"
        )


if __name__ == "__main__":
    print_lot_bench(run_lot_bench(int(sys.argv[1]) if len(sys.argv) > 1 else 20000))
