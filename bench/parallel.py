"""`make bench`, part 5: every core and bounded memory (issue 27), in one run.

- **Workers.** lot (80,000 stories), stories (80,000), chapterbreak (the scale table's 16x
  books) and the overlap audit (a reference that holds the test stories, 4 copies) each run
  with `--direct_num_workers 1` and with no runner flag (the default: a process per core),
  in fresh child processes, alternated, three times each (STORYBENCH_BENCH_REPEATS): the
  median wall-clock and CPU (the process and its workers), the highest peak RSS of the whole
  process tree (sampled), the speed-up of the medians and of each pair, and whether every
  pair wrote the same bytes.
- **The machine's ceiling** (`plain_ceiling`): a plain script that cuts the 20,000 stories
  with `jieba.lcut` in one process and in one per core, alternated: the most any job can
  gain from more processes on this machine, measured in the same run.
- **Memory growth.** Peak tree RSS of the default run at the 1x and 4x inputs of each job
  (20,000 and 80,000 stories; the reference with 1 and 4 copies), for sentence-shuffled and
  distinct stories.
- **The overlap audit's reference side when every document matches** (`contaminated_reference_rate`):
  one worker's characters per CPU-second between the 1- and 4-copy references, against
  plain `jieba.lcut` on the same text (issue 29: at least 5x).
- **Against what users would pick instead** for deduplication, on 80,000 distinct stories:
  datatrove's four-stage MinHash dedup (its own virtual environment, made here from PyPI;
  skipped with a note when it cannot be made) and a plain datasketch MinHashLSH script, with
  storybench's shingles and bands.
A benchmark, not a test: it prints numbers and never fails on speed.
"""

from __future__ import annotations

import filecmp
import json
import os
import pathlib
import random
import shutil
import statistics
import subprocess
import sys
import time

from bench.common import _CHILD, ROOT, lot_source, scaled_corpus  # the child reports its own wall and CPU

BASELINES = ROOT / "bench" / "baselines"
DATATROVE = ["datatrove==0.10.1", "xxhash<4", "regex", "tokenizers", "orjson", "spacy"]


def _tree_rss(proc) -> int:
    import psutil

    try:
        root = psutil.Process(proc.pid)
        procs = [root] + root.children(recursive=True)
    except psutil.Error:
        return 0
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total


def measure_tree(cmd: list[str], cwd: pathlib.Path = ROOT, env: dict | None = None) -> dict:
    """Wall, CPU (self + reaped children, from the child's own rusage when it reports it, else
    from ours) and the peak RSS of the process tree, sampled every 50 ms."""
    before = os.times()
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )
    peak = 0
    while proc.poll() is None:
        peak = max(peak, _tree_rss(proc))
        time.sleep(0.05)
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    after = os.times()
    if proc.returncode:
        raise RuntimeError(f"{cmd[:4]} failed: {err[-2000:]}")
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    result = {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "peak_rss_mib": round(peak / 2**20, 1)}
    last = out.strip().splitlines()[-1] if out.strip() else ""
    if last.startswith("{"):
        result["reported"] = json.loads(last)
    return result


def job(module: str, args: list[str], workers: int | None = None) -> dict:
    flags = [] if workers is None else ["--direct_num_workers", str(workers)]
    return measure_tree([sys.executable, "-c", _CHILD, module, *args, *flags])


def _write_jsonl(path: pathlib.Path, records: list[dict]) -> pathlib.Path:
    with path.open("w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path


def shuffled_stories(work: pathlib.Path, n: int) -> pathlib.Path:
    """`n` real stories, each copy's sentences shuffled (about a hundred near-duplicates each)."""
    source = lot_source()
    per_copy = sum(1 for line in source.read_text(encoding="utf-8").splitlines() if line.strip())
    return _write_jsonl(work / f"shuffled_{n}.jsonl", scaled_corpus(source, -(-n // per_copy))[:n])


def distinct_stories(work: pathlib.Path, n: int, seed: int = 0) -> pathlib.Path:
    """`n` stories of real sentences drawn at random from every real story (rare near-duplicates):
    each as many sentences as a real story, from the whole pool."""
    from annotators.text.zh_sentences import split_sentences

    base = [json.loads(line) for line in lot_source().read_text(encoding="utf-8").splitlines() if line.strip()]
    per_story = [split_sentences(r.get("story") or r.get("text", "")) for r in base]
    pool = [s for sentences in per_story for s in sentences]
    rng = random.Random(seed)
    records = []
    for i in range(n):
        k = len(per_story[i % len(per_story)])
        records.append({"id": f"distinct-{i}", "title": "", "story": "".join(rng.sample(pool, min(k, len(pool))))})
    return _write_jsonl(work / f"distinct_{n}.jsonl", records)


def same_files(a: pathlib.Path, b: pathlib.Path) -> bool:
    """Whether two output folders hold the same files with the same bytes."""
    names_a = sorted(str(p.relative_to(a)) for p in a.rglob("*") if p.is_file())
    names_b = sorted(str(p.relative_to(b)) for p in b.rglob("*") if p.is_file())
    if names_a != names_b:
        return False
    return all(filecmp.cmp(a / n, b / n, shallow=False) for n in names_a)


REPEATS_ENV = "STORYBENCH_BENCH_REPEATS"  # pairs of runs per job in the workers rows (default 3)


def repeats() -> int:
    text = os.environ.get(REPEATS_ENV, "").strip()
    return max(1, int(text)) if text.isdigit() else 3


def summary(runs: list[dict]) -> dict:
    """Several runs of one job as one: the median wall and CPU, and the highest peak RSS."""
    return {
        "wall_s": round(statistics.median(r["wall_s"] for r in runs), 2),
        "cpu_s": round(statistics.median(r["cpu_s"] for r in runs), 2),
        "peak_rss_mib": max(r["peak_rss_mib"] for r in runs),
    }


def plain_ceiling(stories: pathlib.Path, reps: int | None = None) -> dict:
    """The machine's ceiling: a plain script that cuts the stories with `jieba.lcut` in one
    process and in one process per core (bench/baselines/plain_jieba_processes.py), alternated
    `reps` times: the medians, their ratio and each pair's. No job can beat this speed-up here
    (two busy cores of this machine run slower than one, and the script has no serial part
    but loading jieba)."""
    reps, cores = reps or repeats(), os.cpu_count() or 1
    script = str(BASELINES / "plain_jieba_processes.py")
    runs: dict[str, list[dict]] = {"one_process": [], "every_core": []}
    for _ in range(reps):
        runs["one_process"].append(measure_tree([sys.executable, script, str(stories), "1"]))
        runs["every_core"].append(measure_tree([sys.executable, script, str(stories), str(cores)]))
    row = {"processes": cores, "one_process": summary(runs["one_process"]), "every_core": summary(runs["every_core"])}
    row["speedup_wall"] = round(row["one_process"]["wall_s"] / max(row["every_core"]["wall_s"], 1e-9), 2)
    row["speedup_wall_per_pair"] = [
        round(a["wall_s"] / max(b["wall_s"], 1e-9), 2) for a, b in zip(runs["one_process"], runs["every_core"])
    ]
    print(f"plain jieba script, 1 against {cores} processes: {json.dumps(row)}", flush=True)
    return row


def workers_row(work: pathlib.Path, name: str, module: str, args: list[str], reps: int | None = None) -> dict:
    """One job with one worker and with the default, `reps` times, the two alternated (on this
    2-core machine the ratio of a single pair moves by 0.1-0.35 between runs of the same
    code): every run, the medians and their ratio, and whether every pair wrote the same bytes."""
    reps = reps or repeats()
    one, default = work / f"{name}_w1", work / f"{name}_default"
    runs: dict[str, list[dict]] = {"one_worker": [], "default": []}
    same = True
    for _ in range(reps):
        runs["one_worker"].append(job(module, args + ["--output", str(one)], 1))
        runs["default"].append(job(module, args + ["--output", str(default)]))
        same = same and same_files(one, default)
        shutil.rmtree(one, ignore_errors=True)
        shutil.rmtree(default, ignore_errors=True)
    row = {"one_worker": summary(runs["one_worker"]), "default": summary(runs["default"]), "runs": runs}
    row["speedup_wall"] = round(row["one_worker"]["wall_s"] / max(row["default"]["wall_s"], 1e-9), 2)
    row["speedup_wall_per_pair"] = [
        round(a["wall_s"] / max(b["wall_s"], 1e-9), 2) for a, b in zip(runs["one_worker"], runs["default"])
    ]
    row["same_bytes"] = same
    print(
        f"{name}: 1 worker {row['one_worker']}, default {row['default']} (medians of {reps}): "
        f"x{row['speedup_wall']} wall (pairs: {row['speedup_wall_per_pair']}), same bytes: {same}",
        flush=True,
    )
    return row


def datatrove_python(work: pathlib.Path) -> str | None:
    """The python of a virtual environment with datatrove (made once per bench folder)."""
    venv = pathlib.Path(os.environ.get("STORYBENCH_DATATROVE_VENV", work / "datatrove-venv"))
    py = venv / "bin" / "python"
    if not py.exists():
        made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True)
        if made.returncode:
            return None
        pip = subprocess.run([str(py), "-m", "pip", "install", "--quiet", *DATATROVE], capture_output=True, text=True)
        if pip.returncode:
            print(f"datatrove baseline skipped: {pip.stderr[-500:]}", flush=True)
            return None
    return str(py)


def dedup_baselines(work: pathlib.Path, stories: pathlib.Path) -> dict:
    out = {}
    py = datatrove_python(work)
    if py:
        scratch = work / "datatrove-work"
        shutil.rmtree(scratch, ignore_errors=True)
        out["datatrove"] = measure_tree([py, str(BASELINES / "datatrove_minhash.py"), str(stories), str(scratch)])
        shutil.rmtree(scratch, ignore_errors=True)
    out["datasketch"] = measure_tree([sys.executable, str(BASELINES / "datasketch_minhash.py"), str(stories)])
    return out


def overlap_inputs(work: pathlib.Path, stories: pathlib.Path) -> tuple[pathlib.Path, dict[int, pathlib.Path]]:
    """(the OutGen test split of a LOT build of `stories` (LOT's default split sizes: about
    1,300 examples from 20,000 stories), references of 1 and 4 copies of the stories'
    texts): the reference holds every test story."""
    lot_out = work / "overlap_lot"
    subprocess.run(
        [sys.executable, "-m", "pipelines.lot", "--stories", str(stories), "--output", str(lot_out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    texts = [json.loads(line)["story"] for line in stories.read_text(encoding="utf-8").splitlines() if line.strip()]
    refs = {}
    for copies in (1, 4):
        path = work / f"reference_{copies}copies.txt"
        path.write_text("".join(t + "\n" for _ in range(copies) for t in texts), encoding="utf-8")
        refs[copies] = path
    return lot_out / "outgen" / "test-*.parquet", refs


# plain jieba (the reference library, HMM on) over a text file's lines: CPU-seconds of the cut
# alone (the dictionary is loaded first) and the characters cut
_JIEBA_CPU_CHILD = (
    "import sys, time, jieba; tok = jieba.Tokenizer(); tok.initialize(); "
    "lines = open(sys.argv[1], encoding='utf-8').read().split(chr(10)); "
    "t = time.process_time(); [tok.lcut(x, HMM=True) for x in lines]; "
    "print(time.process_time() - t, sum(map(len, lines)))"
)


def contaminated_reference_rate(work: pathlib.Path, test: pathlib.Path, refs: dict[int, pathlib.Path]) -> dict:
    """The overlap audit's reference side where every reference document matches (the
    references hold the test stories: 1 and 4 copies of the 20,000 stories the test split was
    built from), against plain jieba on the same text: characters per CPU-second of one worker
    process (`--direct_num_workers 1`), the marginal rate between the two references (start-up,
    the test side and the report removed), and `jieba.lcut`'s on the 1-copy reference."""
    runs = {}
    for copies in (1, 4):
        out = work / f"contaminated_{copies}"
        runs[copies] = job(
            "pipelines.overlap", ["--test", str(test), "--reference", str(refs[copies]), "--output", str(out)], 1
        )
        text = refs[copies].read_text(encoding="utf-8")
        runs[copies]["reference_chars"] = len(text) - text.count("\n")  # as the jieba child counts
        shutil.rmtree(out, ignore_errors=True)
    plain = subprocess.run(
        [sys.executable, "-c", _JIEBA_CPU_CHILD, str(refs[1])], capture_output=True, text=True, check=True
    )
    jieba_cpu, jieba_chars = (float(x) for x in plain.stdout.split()[-2:])
    extra_cpu = runs[4]["cpu_s"] - runs[1]["cpu_s"]  # none on an input too small to measure
    audit_rate = (runs[4]["reference_chars"] - runs[1]["reference_chars"]) / extra_cpu if extra_cpu > 0 else None
    jieba_rate = jieba_chars / max(jieba_cpu, 1e-9)
    whole = runs[4]["reference_chars"] / max(runs[4]["cpu_s"], 1e-9)  # nothing removed: a floor
    return {
        "runs": runs,
        "jieba_cpu_s": round(jieba_cpu, 2),
        "audit_chars_per_cpu_s": None if audit_rate is None else round(audit_rate),
        "jieba_chars_per_cpu_s": round(jieba_rate),
        "audit_vs_jieba": None if audit_rate is None else round(audit_rate / jieba_rate, 2),
        "whole_run_4x_vs_jieba": round(whole / jieba_rate, 2),
    }


def run_parallel_bench(work: pathlib.Path, books_16x: pathlib.Path | None = None, base: int = 20_000) -> dict:
    work.mkdir(parents=True, exist_ok=True)
    shuffled = {1: shuffled_stories(work, base), 4: shuffled_stories(work, 4 * base)}
    distinct = {1: distinct_stories(work, base), 4: distinct_stories(work, 4 * base)}
    test, refs = overlap_inputs(work, shuffled[1])
    results: dict = {
        "inputs": {
            "stories": base,
            "stories_4x": 4 * base,
            "stories_source": str(lot_source()),
            "reference_mb": {c: round(p.stat().st_size / 1e6, 1) for c, p in refs.items()},
        }
    }
    results["ceiling"] = plain_ceiling(shuffled[1])
    results["workers"] = {
        "lot": workers_row(work, "lot", "pipelines.lot", ["--stories", str(shuffled[4])]),
        "stories": workers_row(work, "stories", "pipelines.stories", ["--input", str(shuffled[4])]),
        "overlap": workers_row(
            work, "overlap", "pipelines.overlap", ["--test", str(test), "--reference", str(refs[4])]
        ),
    }
    if books_16x is not None:
        results["workers"]["chapterbreak"] = workers_row(
            work, "chapterbreak", "pipelines.chapterbreak", ["--gutenberg", str(books_16x / "*.txt")]
        )
    growth = {}
    for name, (module, args_of) in {
        "lot": ("pipelines.lot", lambda s: ["--stories", str(shuffled[s])]),
        "stories": ("pipelines.stories", lambda s: ["--input", str(shuffled[s])]),
        "stories_distinct": ("pipelines.stories", lambda s: ["--input", str(distinct[s])]),
        "overlap_contaminated": ("pipelines.overlap", lambda s: ["--test", str(test), "--reference", str(refs[s])]),
    }.items():
        rows = {}
        for scale in (1, 4):
            out = work / f"growth_{name}_{scale}"
            rows[scale] = job(module, args_of(scale) + ["--output", str(out)])
            shutil.rmtree(out, ignore_errors=True)
        rows["rss_growth_4x"] = round(rows[4]["peak_rss_mib"] / max(rows[1]["peak_rss_mib"], 1e-9), 2)
        growth[name] = rows
        print(f"{name}: 1x {rows[1]}, 4x {rows[4]}: peak RSS x{rows['rss_growth_4x']}", flush=True)
    results["growth"] = growth
    rate = results["overlap_reference_contaminated"] = contaminated_reference_rate(work, test, refs)
    print(f"overlap reference side, every document matching: {json.dumps(rate)}", flush=True)
    dedup = dedup_baselines(work, distinct[4])
    dedup["storybench"] = growth["stories_distinct"][4]
    if "datatrove" in dedup:
        dedup["cpu_vs_datatrove"] = round(dedup["storybench"]["cpu_s"] / max(dedup["datatrove"]["cpu_s"], 1e-9), 2)
    results["dedup_80k_distinct"] = dedup
    print(f"dedup of {4 * base} distinct stories: {json.dumps(dedup)}", flush=True)
    return results


def _number(value) -> str:
    return "n/a" if value is None else f"{value:,}"


def _ratio(value) -> str:
    return "n/a" if value is None else f"x{value}"


def parallel_markdown(results: dict) -> str:
    lines = [
        "| job | 1 worker: wall s / CPU s / peak MiB | default: wall s / CPU s / peak MiB "
        "| wall speed-up (medians) | each pair | same bytes |",
        "|---|---|---|---:|---|---|",
    ]
    for name, row in results["workers"].items():
        a, b = row["one_worker"], row["default"]
        pairs = ", ".join(f"x{r}" for r in row.get("speedup_wall_per_pair", [row["speedup_wall"]]))
        lines.append(
            f"| {name} | {a['wall_s']} / {a['cpu_s']} / {a['peak_rss_mib']} | {b['wall_s']} / {b['cpu_s']} / "
            f"{b['peak_rss_mib']} | x{row['speedup_wall']} | {pairs} | {row['same_bytes']} |"
        )
    ceiling = results.get("ceiling")
    if ceiling:
        a, b = ceiling["one_process"], ceiling["every_core"]
        pairs = ", ".join(f"x{r}" for r in ceiling["speedup_wall_per_pair"])
        lines.append(
            f"| the machine's ceiling: plain `jieba.lcut` script, 1 against {ceiling['processes']} processes "
            f"(1x stories) | {a['wall_s']} / {a['cpu_s']} / {a['peak_rss_mib']} | {b['wall_s']} / {b['cpu_s']} / "
            f"{b['peak_rss_mib']} | x{ceiling['speedup_wall']} | {pairs} | - |"
        )
    lines += ["", "| job (default run) | 1x peak MiB | 4x peak MiB | growth |", "|---|---:|---:|---:|"]
    for name, rows in results["growth"].items():
        lines.append(f"| {name} | {rows[1]['peak_rss_mib']} | {rows[4]['peak_rss_mib']} | x{rows['rss_growth_4x']} |")
    rate = results.get("overlap_reference_contaminated")
    if rate:
        lines += [
            "",
            "| overlap reference side, every document matching (1 worker) | 1 copy: CPU s | 4 copies: CPU s "
            "| chars per CPU s (marginal) | plain jieba chars per CPU s | ratio | whole 4-copy run's ratio |",
            "|---|---:|---:|---:|---:|---:|---:|",
            f"| {rate['runs'][1]['reference_chars']:,} to {rate['runs'][4]['reference_chars']:,} chars "
            f"| {rate['runs'][1]['cpu_s']} | {rate['runs'][4]['cpu_s']} | {_number(rate['audit_chars_per_cpu_s'])} "
            f"| {rate['jieba_chars_per_cpu_s']:,} | {_ratio(rate['audit_vs_jieba'])} "
            f"| x{rate['whole_run_4x_vs_jieba']} |",
        ]
    dedup = results["dedup_80k_distinct"]
    lines += ["", "| dedup of the 4x distinct stories | wall s | CPU s | peak MiB |", "|---|---:|---:|---:|"]
    for name in ("storybench", "datatrove", "datasketch"):
        if name in dedup:
            r = dedup[name]
            lines.append(f"| {name} | {r['wall_s']} | {r['cpu_s']} | {r['peak_rss_mib']} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import tempfile

    books = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else None
    with tempfile.TemporaryDirectory() as tmp:
        res = run_parallel_bench(pathlib.Path(tmp), books)
        print(parallel_markdown(res))
