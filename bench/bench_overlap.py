"""Benchmark of the 8-gram overlap audit (LOT Table 14 at scale): reference throughput and
peak memory for a reference 1x, 4x and 16x as large.

Each scale runs `pipelines.overlap` in a fresh child process that reports its own peak RSS
(`VmHWM` from /proc/self/status, the in-process FnApiRunner included), so
runs do not share memory. Throughput of the reference side is the marginal rate between
the smallest and largest reference, beside plain
`jieba.lcut` on the same text in the same
run, with each jieba backend (rjieba, the default, and the jieba reference). Text is generated
from a seeded vocabulary (no data files needed).
"""

from __future__ import annotations

import json
import os
import pathlib
import random
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
_PARTS = [
    "小明",
    "老奶奶",
    "猎人",
    "小兔子",
    "邮递员",
    "在河边",
    "在森林里",
    "走了很久",
    "突然",
    "看见了",
    "一只受伤的小鸟",
    "一座旧房子",
    "因为下雨",
    "所以",
    "但是",
    "大家都",
    "高兴地",
    "笑了起来",
    "找到了",
    "回家的路",
    "第二天",
    "又来到了",
    "村口的大树下",
    "想了想",
    "决定",
    "帮助它",
    "悄悄地",
    "离开了",
]
_HAN = "天地人山水风雨花草树鸟鱼马牛羊狗猫米面书画歌舞春夏秋冬东西南北金木火土日月星云河湖海江门窗"
_JIEBA_CHILD = (
    "import sys, time, jieba; tok = jieba.Tokenizer(); tok.initialize(); "
    "lines = open(sys.argv[1], encoding='utf-8').read().split(chr(10)); "
    "t = time.perf_counter(); [tok.lcut(x, HMM=True) for x in lines]; "
    "print(time.perf_counter() - t, 0)"
)
# Peak RSS is the child's own VmHWM: ru_maxrss survives exec on Linux, so it would report the
# parent's size at fork time (e.g. ~1 GB after the LOT bench) instead of the audit's.
_CHILD = (
    "import resource, sys, time; from pipelines.overlap import run; t = time.perf_counter(); "
    "run(sys.argv[1:]); s = time.perf_counter() - t; "
    "hwm = [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')]; "
    "print(s, hwm[0] if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
)


def story(rng: random.Random, sentences: int = 6) -> str:
    """Sentences of common phrases mixed with random two-character names (rare 8-grams)."""

    def part() -> str:
        return rng.choice(_PARTS) if rng.random() < 0.6 else rng.choice(_HAN) + rng.choice(_HAN)

    return "".join("".join(part() for _ in range(rng.randint(5, 9))) + "。" for _ in range(sentences))


def make_inputs(work: pathlib.Path, scales, base_lines: int, seed: int = 0) -> dict:
    """A 40-story test table and reference text files; the 1x reference holds 2 test stories."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(seed)
    tests = [story(rng) for _ in range(40)]
    (work / "plotcom").mkdir(parents=True, exist_ok=True)
    pq.write_table(
        pa.Table.from_pylist(
            [{"example_id": f"t{i:02d}", "split": "test", "story": s, "plot": ""} for i, s in enumerate(tests)]
        ),
        work / "plotcom" / "part-0.parquet",
    )
    base = [story(rng) for _ in range(base_lines)] + tests[:2]
    refs = {}
    for scale in scales:
        path = work / f"reference_{scale}x.txt"
        path.write_text("\n".join(base * scale) + "\n", encoding="utf-8")
        refs[scale] = path
    return {"test": work / "plotcom", "refs": refs, "text": "\n".join(base)}


def run_child(code: str, args: list[str], backend: str = "jieba") -> tuple[float, int]:
    """(seconds, peak RSS KiB) reported by a fresh Python child running `code` (the audit with
    the given jieba backend; the baseline is always plain jieba)."""
    env = {**os.environ, "STORYBENCH_ZH_BACKEND": backend}
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, check=True, env=env
    )
    seconds, kib = proc.stdout.split()[-2:]
    return float(seconds), int(kib)


def run_overlap_bench(
    scales=(1, 4, 16), base_lines: int = 15000, workdir: str | None = None, backends=("rjieba", "jieba")
) -> dict:
    """Run the benchmark for each jieba backend (rjieba, the default, then the jieba reference);
    returns and prints {backend: {scale: seconds, peak MiB, chars}, rates} beside plain jieba."""
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        work = pathlib.Path(tmp)
        inputs = make_inputs(work, scales, base_lines)
        lo, hi = min(scales), max(scales)
        jieba_seconds, _ = run_child(_JIEBA_CHILD, [str(inputs["refs"][hi])])
        result: dict = {}
        for backend in backends:
            runs = {scale: _audit_run(work, inputs, scale, backend) for scale in scales}
            marginal = (runs[hi]["reference_chars"] - runs[lo]["reference_chars"]) / max(
                1e-9, runs[hi]["seconds"] - runs[lo]["seconds"]
            )
            plain = runs[hi]["reference_chars"] / jieba_seconds
            # audit_chars_per_s: marginal rate (fixed start-up cost removed); jieba on the same 16x text.
            result[backend] = {
                "runs": runs,
                "audit_chars_per_s": round(marginal),
                "jieba_chars_per_s": round(plain),
                "audit_vs_jieba": round(marginal / plain, 3),
                "peak_rss_growth": round(runs[hi]["peak_rss_mib"] / runs[lo]["peak_rss_mib"], 3),
            }
    print("overlap bench:", json.dumps(result, indent=2))
    return result


def _audit_run(work: pathlib.Path, inputs: dict, scale: int, backend: str) -> dict:
    """One audit of the `scale`x reference with one worker and `backend`."""
    chars = len(inputs["refs"][scale].read_text(encoding="utf-8"))
    out = work / f"out{scale}-{backend}"
    args = ["--test", str(inputs["test"]), "--reference", str(inputs["refs"][scale]), "--output", str(out)]
    seconds, kib = run_child(_CHILD, [*args, "--direct_num_workers", "1"], backend)
    over = json.loads((out / "stats.json").read_text())["tables"]["over_10pct"]
    return {
        "seconds": round(seconds, 2),
        "peak_rss_mib": round(kib / 1024, 1),
        "reference_chars": chars,
        "over_10pct": over,
    }


if __name__ == "__main__":
    run_overlap_bench()
