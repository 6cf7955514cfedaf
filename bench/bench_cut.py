"""`make bench` part 1b: the cut itself, with each jieba backend, against plain `jieba.lcut`.

On the real LOT stories (../shared/data, else the embedded sample) copied with their
sentences shuffled per copy, in ONE fresh child process that loads both backends first (so
no dictionary load is timed), CPU seconds (`time.process_time`) of:
- plain `jieba.lcut(story)` (HMM on): the yardstick;
- per backend (`jieba`, `rjieba`): `cut_both(story)` (HMM on and off, what SenPos and
  PlotCom need) and `cut_sentences(sentences, pos=True)` (every mode, sentence by sentence,
  with posseg pairs: what a story's preparation for OutGen's outline needs);
and the speed-up of rjieba over jieba on each. Every backend's tokens are also compared with
jieba's, so a speed-up never comes from a different cut.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile

from bench.common import ROOT, lot_source, scaled_corpus

_CHILD = """
import json, sys, time
import jieba
from annotators.text import zh_tokens
from annotators.text.zh_sentences import split_sentences
stories = [json.loads(line)["story"] for line in open(sys.argv[1], encoding="utf-8")]
sentences = [split_sentences(s) for s in stories]
segs = {b: zh_tokens.load(b) for b in ("jieba", "rjieba")}
for seg in segs.values():
    seg.load_tagging()
jieba.lcut("预热")


def cpu(fn, items):
    start = time.process_time()
    out = [fn(x) for x in items]
    return time.process_time() - start, out


result = {"backends": {b: zh_tokens.backend_info(b) for b in segs}}
result["plain jieba.lcut"], _ = cpu(jieba.lcut, stories)
outputs = {}
for name, seg in segs.items():
    result[f"{name} cut_both"], outputs[name, "both"] = cpu(seg.cut_both, stories)
    result[f"{name} cut_sentences(pos)"], outputs[name, "sent"] = cpu(
        lambda ss: seg.cut_sentences(ss, pos=True), sentences)
result["same_tokens"] = all(outputs["jieba", k] == outputs["rjieba", k] for k in ("both", "sent"))
print(json.dumps(result))
"""


def run_cut_bench(stories: int = 2000) -> dict:
    source = lot_source()
    per_copy = sum(1 for line in source.read_text(encoding="utf-8").splitlines() if line.strip())
    corpus = scaled_corpus(source, -(-stories // per_copy))[:stories]
    chars = sum(len(r["story"]) for r in corpus)
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "stories.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in corpus), encoding="utf-8")
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, str(path)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    if proc.returncode:
        raise RuntimeError(proc.stderr[-2000:])
    raw = json.loads(proc.stdout.strip().splitlines()[-1])
    base = raw.pop("plain jieba.lcut")
    result = {
        "source": str(source),
        "stories": len(corpus),
        "characters": chars,
        "backends": raw.pop("backends"),
        "same_tokens": raw.pop("same_tokens"),
        "plain jieba.lcut": {"cpu_s": round(base, 3), "chars_per_cpu_s": round(chars / base)},
        "runs": {},
    }
    for name, cpu_s in raw.items():
        result["runs"][name] = {
            "cpu_s": round(cpu_s, 3),
            "chars_per_cpu_s": round(chars / cpu_s),
            "ratio_to_jieba_lcut": round(base / cpu_s, 2),
        }
    for part in ("cut_both", "cut_sentences(pos)"):
        result[f"rjieba speed-up, {part}"] = round(raw[f"jieba {part}"] / raw[f"rjieba {part}"], 2)
    return result


def print_cut_bench(result: dict) -> None:
    names = ", ".join(f"{v['backend']} {v['version']}" for v in result["backends"].values())
    print(
        f"the cut ({names}): {result['stories']} stories, {result['characters']:,} characters, "
        f"tokens identical: {result['same_tokens']}"
    )
    base = result["plain jieba.lcut"]
    print(f"  {'plain jieba.lcut':<30} {base['cpu_s']:>8.2f} CPU-s  {base['chars_per_cpu_s']:>9,} chars/CPU-s")
    for name, run in result["runs"].items():
        print(
            f"  {name:<30} {run['cpu_s']:>8.2f} CPU-s  {run['chars_per_cpu_s']:>9,} chars/CPU-s  "
            f"x{run['ratio_to_jieba_lcut']} of jieba.lcut"
        )
    for part in ("cut_both", "cut_sentences(pos)"):
        print(f"  rjieba over jieba, {part}: x{result[f'rjieba speed-up, {part}']}")


if __name__ == "__main__":
    print_cut_bench(run_cut_bench(int(sys.argv[1]) if len(sys.argv) > 1 else 2000))
