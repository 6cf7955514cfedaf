"""`make bench` part 1: throughput of `pipelines.lot` against plain `jieba.lcut`, same run.

The corpus is the real LOT sample (../shared/data, else the embedded sample) scaled up by
re-ordering each story's sentences with a seeded shuffle per copy, so copies are distinct
stories (exact-duplicate removal would otherwise drop them).
"""
from __future__ import annotations

import json
import pathlib
import random
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
REAL = ROOT.parent / "shared" / "data" / "lot" / "outgen_val_sample.jsonl"
SAMPLE = ROOT / "samples" / "lot" / "stories.jsonl"


def scaled_corpus(path: pathlib.Path, copies: int) -> list[dict]:
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


def jieba_chars_per_second(texts: list[str]) -> float:
    import jieba

    jieba.lcut("预热")
    start = time.perf_counter()
    for text in texts:
        jieba.lcut(text)
    return sum(map(len, texts)) / (time.perf_counter() - start)


def pipeline_seconds(stories_path: pathlib.Path, out: pathlib.Path, extra: list[str]) -> float:
    from pipelines import lot

    start = time.perf_counter()
    lot.run(["--stories", str(stories_path), "--output", str(out)] + extra)
    return time.perf_counter() - start


def run_lot_bench(copies: int = 20) -> dict:
    source = REAL if REAL.exists() else SAMPLE
    corpus = scaled_corpus(source, copies)
    texts = [r["story"] for r in corpus]
    chars = sum(map(len, texts))
    result = {"source": str(source), "stories": len(corpus), "characters": chars}
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "stories.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in corpus), encoding="utf-8")
        baseline = jieba_chars_per_second(texts)
        for name, extra in (("1 worker", []), ("2 workers", ["--direct_running_mode=multi_processing",
                                                            "--direct_num_workers=2"])):
            seconds = pipeline_seconds(path, pathlib.Path(tmp) / name.replace(" ", "_"), extra)
            result[name] = {"seconds": round(seconds, 2), "stories_per_s": round(len(corpus) / seconds, 1),
                            "chars_per_s": round(chars / seconds), "ratio_to_jieba": round(chars / seconds / baseline, 3)}
    result["jieba_lcut_chars_per_s"] = round(baseline)
    return result


def print_lot_bench(result: dict) -> None:
    print(f"LOT build: {result['stories']} stories, {result['characters']} characters from {result['source']}")
    print(f"  plain jieba.lcut: {result['jieba_lcut_chars_per_s']:,} chars/s")
    for name in ("1 worker", "2 workers"):
        r = result[name]
        print(f"  pipelines.lot ({name}): {r['seconds']} s, {r['stories_per_s']} stories/s, "
              f"{r['chars_per_s']:,} chars/s, ratio to jieba {r['ratio_to_jieba']}")


if __name__ == "__main__":
    print_lot_bench(run_lot_bench())
