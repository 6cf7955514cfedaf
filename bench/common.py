"""What the benchmarks share: the realistic LOT corpus and a measured child process."""

from __future__ import annotations

import json
import os
import pathlib
import random
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
# ../shared/data beside the project, or where STORYBENCH_SHARED_DATA says (as the tests read
# it): a clone elsewhere would otherwise measure the embedded sample without saying so
SHARED_DATA = pathlib.Path(os.environ.get("STORYBENCH_SHARED_DATA", ROOT.parent / "shared" / "data"))
REAL = SHARED_DATA / "lot" / "outgen_val_sample.jsonl"
SAMPLE = ROOT / "samples" / "lot" / "stories.jsonl"
# The report is printed at exit, by the last atexit function (registered first): after the
# job's own (pipelines.engine.usage.end_process ends a run with a normal exit).
_CHILD = """
import atexit, json, resource, runpy, sys, time
start = time.perf_counter()
def report():
    self_, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    hwm = [int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")]
    print(json.dumps({"wall_s": time.perf_counter() - start,
                      "cpu_s": self_.ru_utime + self_.ru_stime + kids.ru_utime + kids.ru_stime,
                      "peak_rss_mib": (hwm[0] if hwm else self_.ru_maxrss) / 1024}), flush=True)
atexit.register(report)
sys.argv = sys.argv[1:]
runpy.run_module(sys.argv[0], run_name="__main__")
"""


def measure(module: str, args: list[str]) -> dict:
    """Wall, CPU and peak RSS of `python -m module args` in a fresh child process."""
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, module, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    if proc.returncode:
        raise RuntimeError(f"{module} failed: {proc.stderr[-2000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return {k: round(v, 2) for k, v in result.items()}


def scaled_corpus(path: pathlib.Path, copies: int) -> list[dict]:
    """Real stories copied `copies` times, each copy's sentences shuffled (copies are distinct)."""
    from annotators.text.zh_sentences import split_sentences

    base = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = []
    for c in range(copies):
        rng = random.Random(c)
        for i, rec in enumerate(base):
            sentences = split_sentences(rec.get("story") or rec.get("text", ""))
            if c:
                rng.shuffle(sentences)
            out.append({"id": f"bench-{c}-{i}", "title": rec.get("title", ""), "story": "".join(sentences)})
    return out


def lot_source() -> pathlib.Path:
    """The real LOT stories when the shared data is there, else the embedded sample (said once
    per process, so a run's log names what it measured)."""
    source = REAL if REAL.exists() else SAMPLE
    if source not in _SAID:
        _SAID.add(source)
        note = "" if source == REAL else " (no shared data: the embedded sample)"
        print(f"stories for the benchmarks: {source}{note}", flush=True)
    return source


_SAID: set = set()
