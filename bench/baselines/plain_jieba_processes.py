"""Baseline for `make bench` part 5: the machine's ceiling for a local speed-up, the plain
script a researcher would write to use every core.

    python plain_jieba_processes.py STORIES.jsonl WORKERS

Splits the stories into WORKERS contiguous parts and cuts each part with `jieba.lcut` in its
own process (multiprocessing; each process loads jieba's dictionary, as such a script does),
with no shuffle, no grouping and nothing written: whatever speed-up it gets from WORKERS
processes is the most any job can get on this machine. Prints one JSON line: stories and
tokens.
"""

import json
import multiprocessing
import sys


def cut_part(texts: list[str]) -> int:
    import jieba

    return sum(len(jieba.lcut(text)) for text in texts)


def main(path: str, workers: int) -> None:
    with open(path, encoding="utf-8") as f:
        texts = [json.loads(line)["story"] for line in f if line.strip()]
    size = -(-len(texts) // workers)
    parts = [texts[i : i + size] for i in range(0, len(texts), size)]
    if workers == 1:
        tokens = cut_part(texts)
    else:
        with multiprocessing.Pool(workers) as pool:
            tokens = sum(pool.map(cut_part, parts))
    print(json.dumps({"stories": len(texts), "tokens": tokens}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
