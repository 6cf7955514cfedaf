"""The `rake` outline method (`--outline-method rake`, annotators.lot.outline for the default).

storybench's earlier method: RAKE (`rake_scores`, the
same degree/frequency scores as rake-nltk, which it replaced: identical outlines, without
NLTK's import or any re-tokenising) over the story's jieba tokens, with spaCy's Chinese stop
words (read from spaCy's file without importing spaCy) and punctuation as delimiters. Its rules
were chosen by comparing with the official LOT outlines (`bench/outline_agreement.py`; plain
rake-nltk + jieba + spaCy stop words reaches F1 0.48); each is a general rule, none is per
story:

* jieba precise mode **without HMM**: every boundary of all 1,220 official sample
  phrases falls on an HMM-off token boundary (96.8% with HMM on). This is what yields
  partial words such as "驴夫狠狠" or "卫队心" (HMM-off splits unknown names).
* numeral/quantity words and localizers (jieba POS tags m, mq, f: 一只, 两个, 里, 前,
  身后...) delimit phrases like stop words: they bound official phrases and almost
  never occur inside them.
* a phrase has at least two words (single words only when nothing else exists); one that occurs more than once in the
  story (a name, a refrain) or starts in the opening clause (the setting, "从前有个...")
  ranks after all others. Official outlines almost never use either.
* RAKE score (degree/frequency) ties are broken by first position in the story.

Agreement on the 161-story official sample: F1 0.791 (first half, where rules were
chosen, 0.803; held-out second half 0.778). Without each rule: HMM on 0.723, no tag
delimiters 0.595, no repeat demotion 0.769, no opening-clause demotion 0.778, single
words allowed 0.770. posrake wins on both halves, so it is the default; rake stays an option.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from annotators.lot.outline import OutlineConfig, _frequencies_and_degrees, _opening_clause_end, _resources
from annotators.text import zh_tokens

_DELIM = "\x00"  # what a delimiter token becomes before RAKE sees it


def _paragraphs(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def _is_delimiter(token: str, delimiters: frozenset[str]) -> bool:
    """Punctuation, spaces, symbols, digit runs and numeral/localizer words end a phrase."""
    if token in delimiters:
        return True
    return not any(unicodedata.category(c)[0] == "L" for c in token)


def _key(token: str, delimiters: frozenset[str], stopwords: frozenset[str]) -> str:
    """A token's RAKE key: lower-cased, or "" for a delimiter or stop word (both end a phrase)."""
    if _is_delimiter(token, delimiters):
        return ""
    key = token.lower()
    return "" if key in stopwords else key


def _candidates(paragraph_tokens: Sequence[Sequence[str]], config: OutlineConfig):
    """Maximal runs of tokens that are neither delimiters nor stop words, per paragraph, as
    (keys, surface tokens) pairs (what rake-nltk's phrase split gives, with surfaces kept)."""
    res = _resources()
    delimiters = res.delimiter_words(config.delimiter_tags)
    stopwords = res.stopwords
    cache = res.key_cache(config.delimiter_tags)
    for tokens in paragraph_tokens:
        keys: list[str] = []
        surfaces: list[str] = []
        for token in tokens:
            key = cache.get(token)
            if key is None:
                key = cache[token] = _key(token, delimiters, stopwords)
            if key:
                keys.append(key)
                surfaces.append(token)
            elif keys:
                yield tuple(keys), tuple(surfaces)
                keys, surfaces = [], []
        if keys:
            yield tuple(keys), tuple(surfaces)


def rake_scores(phrases: Sequence[tuple[str, ...]]) -> list[tuple[float, str]]:
    """RAKE (Rose et al. 2010) as rake-nltk computes it: a word's score is its degree (summed
    lengths of the phrases it occurs in, once per occurrence) over its frequency; a phrase's
    score the sum of its words' scores, added in order. Returns the distinct
    (score, "w1 w2 ...") pairs, best first (ties: the phrase string, descending)."""
    freq, degree = _frequencies_and_degrees(phrases)
    scored = set()
    for phrase in set(phrases):
        rank = 0.0
        for word in phrase:
            rank += 1.0 * degree[word] / freq[word]
        scored.add((rank, " ".join(phrase)))
    return sorted(scored, reverse=True)


def ranked(
    story: str, paragraph_tokens: Sequence[Sequence[str]], config: OutlineConfig, limit: int | None = None
) -> list[tuple[str, tuple[str, ...]]]:
    """(phrase, its tokens) for every candidate phrase, best first; with `limit`, only the first
    `limit` of them (the same ones: phrases are met in falling RAKE score, so once `limit`
    phrases of the best class, neither repeated nor in the opening clause, are chosen, a
    phrase of lower score can no longer rank above them and the search stops)."""
    phrases, runs = [], {}
    for key, run in _candidates(paragraph_tokens, config):
        joined_key = " ".join(key)
        if joined_key not in runs:
            runs[joined_key] = run
        if len(key) <= config.max_words:
            phrases.append(key)
    opening_end = _opening_clause_end(story)
    keys: dict[str, tuple] = {}
    short: dict[str, tuple] = {}
    tokens_of: dict[str, tuple[str, ...]] = {}
    if limit is not None and limit <= 0:
        return []
    best_class: list[float] = []  # scores of chosen phrases with key (False, False, ...)
    for score, phrase in rake_scores(phrases):
        if limit is not None and len(best_class) >= limit and score < best_class[limit - 1]:
            break
        run = runs[phrase]
        surface = "".join(run)
        if surface in tokens_of:
            continue
        position = story.find(surface)
        if position < 0:
            continue
        repeated = story.find(surface, position + len(surface)) >= 0  # occurs more than once
        key = (
            config.demote_repeated and repeated,
            config.demote_opening_clause and position < opening_end,
            -score,
            position,
        )
        (keys if len(run) >= config.min_words else short)[surface] = key
        tokens_of[surface] = run
        if len(run) >= config.min_words and not key[0] and not key[1]:
            best_class.append(score)
    chosen = keys or short
    return [(p, tokens_of[p]) for p in sorted(chosen, key=chosen.__getitem__)][:limit]


def ranked_from_tokens(
    story: str, paragraph_tokens: Sequence[Sequence[str]], *, config: OutlineConfig = OutlineConfig()
) -> list[str]:
    """All candidate phrases of `story`, best first, from its jieba tokens (one token list per
    paragraph, cut with `config.hmm`): nothing is tokenised again.

    Order: (repeated in the story, starts in the opening clause, -RAKE score, first
    position). Phrases under `min_words` words are used only if nothing else exists.
    """
    return [p for p, _ in ranked(story, paragraph_tokens, config)]


def cut_paragraphs(story: str, config: OutlineConfig) -> list[list[str]]:
    segmenter = zh_tokens.load()
    return [segmenter.lcut(p, HMM=config.hmm) for p in _paragraphs(story)]
