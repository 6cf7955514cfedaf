"""Baseline for `make bench`: datatrove's four-stage MinHash deduplication of a JSON-lines
story file, run in its own virtual environment (bench/parallel.py makes it).

    python datatrove_minhash.py STORIES.jsonl WORKDIR [SHINGLE BANDS ROWS]

The shingles are storybench's (character n-grams of the text without whitespace, hashed by
datatrove's own hash function) and the bands are storybench's (b bands of r rows for
threshold 0.8 and 128 permutations), so both tools do the same work; datatrove has no
exact-Jaccard check. Prints one JSON line: documents read and kept.
"""

import json
import sys

import numpy as np
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.dedup.minhash import (
    MinhashConfig,
    MinhashDedupBuckets,
    MinhashDedupCluster,
    MinhashDedupFilter,
    MinhashDedupSignature,
)
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter


class CharShingleSignature(MinhashDedupSignature):
    """datatrove's signature stage over character n-grams (whitespace removed)."""

    def get_shingles(self, text):
        chars = "".join(text.split())
        n = self.config.n_grams
        grams = [chars[i : i + n] for i in range(max(1, len(chars) - n + 1))] if chars else []
        return np.fromiter((self._hash_func(g) for g in grams), dtype=np.uint64).reshape((-1, 1))


def main(stories: str, work: str, shingle: int = 5, bands: int = 9, rows: int = 13) -> None:
    config = MinhashConfig(n_grams=shingle, num_buckets=bands, hashes_per_bucket=rows)
    folder, name = stories.rsplit("/", 1)

    def reader():
        return JsonlReader(folder, glob_pattern=name, text_key="story", id_key="id")

    stages = [
        [reader(), CharShingleSignature(output_folder=f"{work}/sigs", config=config)],
        [MinhashDedupBuckets(input_folder=f"{work}/sigs", output_folder=f"{work}/buckets", config=config)],
        [MinhashDedupCluster(input_folder=f"{work}/buckets", output_folder=f"{work}/remove_ids", config=config)],
        [
            reader(),
            MinhashDedupFilter(input_folder=f"{work}/remove_ids"),
            JsonlWriter(f"{work}/kept", compression=None),
        ],
    ]
    for i, steps in enumerate(stages):
        tasks = bands if i == 1 else 1
        LocalPipelineExecutor(
            pipeline=steps, tasks=tasks, workers=1, logging_dir=f"{work}/logs{i}", skip_completed=False
        ).run()
    kept = 0
    import glob

    for path in glob.glob(f"{work}/kept/*.jsonl"):
        with open(path, encoding="utf-8") as f:
            kept += sum(1 for line in f if line.strip())
    read = sum(1 for line in open(stories, encoding="utf-8") if line.strip())
    print(json.dumps({"read": read, "kept": kept}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], *map(int, sys.argv[3:]))
