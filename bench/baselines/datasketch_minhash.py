"""Baseline for `make bench`: the plain script a researcher would write with datasketch's
MinHashLSH (storybench's shingles, threshold and permutations; no exact-Jaccard check).

    python datasketch_minhash.py STORIES.jsonl [SHINGLE THRESHOLD NUM_PERM]

Reads the stories, keeps the first of every exact duplicate (same text), queries each story
against the LSH of the stories kept so far and keeps it when nothing matches. Prints one JSON
line: stories read and kept.
"""

import json
import sys

from datasketch import MinHash, MinHashLSH


def main(path: str, shingle: int = 5, threshold: float = 0.8, num_perm: int = 128) -> None:
    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
    seen, read, kept = set(), 0, 0
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f):
            if not line.strip():
                continue
            read += 1
            text = "".join(json.loads(line)["story"].split())
            if text in seen:
                continue
            seen.add(text)
            grams = {text[i : i + shingle] for i in range(max(1, len(text) - shingle + 1))}
            mh = MinHash(num_perm=num_perm, seed=1)
            mh.update_batch([g.encode("utf-8") for g in grams])
            if lsh.query(mh):
                continue
            lsh.insert(str(n), mh)
            kept += 1
    print(json.dumps({"read": read, "kept": kept}))


if __name__ == "__main__":
    main(sys.argv[1], *(int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])) if len(sys.argv) > 4 else ())
