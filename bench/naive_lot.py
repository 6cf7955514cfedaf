"""The baseline `make bench` holds the LOT build to: SenPos, PlotCom and OutGen in one plain loop.

This is the script a researcher would write in an afternoon (no Beam, no accounting, no
rejects): split sentences with a regex, count jieba words, drop a random sentence for SenPos
and PlotCom, and take rake-nltk's top 8 phrases with jieba as its word tokenizer for OutGen.
It is a yardstick for speed only; its outputs are not LOT's.

    python -m bench.naive_lot STORIES.jsonl
"""

from __future__ import annotations

import json
import random
import re
import sys
import time

SENTENCE = re.compile(r"[^。！？；…]+[。！？；…]+[”」』）]?|[^。！？；…]+$")
PUNCTUATION = set("，。！？；：、“”‘’（）《》「」『』…—·,.!?;:()\"' \n")


def build(stories: list[dict]) -> dict:
    import jieba
    from rake_nltk import Rake
    from spacy.lang.zh.stop_words import STOP_WORDS

    rng = random.Random(0)
    rake = Rake(
        stopwords=set(STOP_WORDS),
        punctuations=PUNCTUATION,
        max_length=8,
        sentence_tokenizer=lambda text: SENTENCE.findall(text),
        word_tokenizer=jieba.lcut,
    )
    senpos, plotcom, outgen = [], [], []
    for record in stories:
        story = record["story"]
        sentences = SENTENCE.findall(story)
        if len(sentences) < 3:
            continue
        if len(jieba.lcut(story)) < 500:
            k = rng.randrange(1, len(sentences) - 1)
            rest = sentences[:k] + sentences[k + 1 :]
            senpos.append({"story": "[MASK]".join(rest), "sentence": sentences[k], "label": k})
        k = rng.randrange(1, len(sentences))
        plotcom.append({"story": "".join(sentences[:k]) + "<MASK>" + "".join(sentences[k + 1 :]), "plot": sentences[k]})
        rake.extract_keywords_from_text(story)
        outline = [p.replace(" ", "") for p in rake.get_ranked_phrases()[:8]]
        outgen.append({"title": record.get("title", ""), "outline": outline, "story": story})
    return {"senpos": len(senpos), "plotcom": len(plotcom), "outgen": len(outgen)}


def main(path: str) -> None:
    with open(path, encoding="utf-8") as f:
        stories = [json.loads(line) for line in f if line.strip()]
    start = time.process_time()
    counts = build(stories)
    print(json.dumps({"cpu_s": time.process_time() - start, **counts}))


if __name__ == "__main__":
    main(sys.argv[1])
