"""jieba word tokenising (precise mode, HMM on and off, and posseg), loaded once per process.

Backends (`--zh-backend` / STORYBENCH_ZH_BACKEND: auto, jieba or rjieba):
- `jieba` (0.42.1): the reference, always installed; `jieba.lcut` and `jieba.posseg.lcut`.
- `rjieba` (0.2.2, Python bindings of jieba-rs): its HMM-off cut equals jieba's on every
  jieba block of Han characters, ASCII letters and digits, but not on blocks holding one of
  `+#&._%-` (`e-mail` and `3.5%` stay one token), and its Han pattern also takes CJK
  Extension A and later, the compatibility ideographs and U+9FD6-9FFF, which jieba leaves out
  of its blocks. jieba's cut is block-local (a text's tokens are its blocks' tokens and the
  characters between them, in order), so `spans` sends each such block and character to
  jieba itself and each long stretch between them to ONE rjieba call. rjieba's HMM step
  differs from jieba's on some unknown runs (e.g. '今江江江来'), so the HMM-on words are
  jieba's `__cut_DAG` over rjieba's route (its HMM-off tokens of Han-only blocks are the route
  words) with jieba's own HMM for unknown runs (`finalseg`, in C when `_jieba_hmm` is built,
  which also walks the route for `cut_sentences`); blocks holding ASCII letters or digits go to
  jieba (`cut_sentences` takes their route from rjieba's HMM-off tokens, `_route`). The
  same tokens by construction, proven on the canary texts at start-up (else a warning and
  jieba) and in the tests on real stories and on generated strings. The tagged cut (posseg) is in `zh_posseg.py`.

`auto` (the default) picks `rjieba` when it is installed and passes, else `jieba`. The
dictionaries load on first use or in `load()`, which Beam DoFns call from `setup()`; never at
import time. `jieba.enable_paddle()` is never called (it tries to pip-install at run time).
"""

from __future__ import annotations

import importlib
import itertools
import json
import logging
import os
import re
import sys
import threading

LOG = logging.getLogger("storybench")
REFERENCE = "jieba"
ACCELERATED = "rjieba"
BACKENDS = ("auto", REFERENCE, ACCELERATED)
_LOCK = threading.RLock()
_SEGMENTERS: dict[str, Segmenter] = {}
_RESOLVED: dict[str, str] = {}
_DEFAULT = {"backend": os.environ.get("STORYBENCH_ZH_BACKEND", "auto")}
_HERE = os.path.dirname(__file__)
_MAX_CACHED = 200_000  # finalseg results kept per process (unknown runs recur: names, places)
_MAX_VOCAB = 500_000  # words the C walk keeps with their tags (about 100 MB at most)

# jieba 0.42.1's block patterns (jieba/__init__.py: re_han_default, re_skip_default).
RE_HAN = re.compile("([\u4e00-\u9fd5a-zA-Z0-9+#&\\._%\\-]+)", re.U)
RE_SKIP = re.compile("(\r\n|\\s)", re.U)
# Characters jieba-rs's Han pattern takes and jieba's does not (found over every code point).
EXTRA_HAN = "\u3400-\u4dbf\u9fd6-\u9fff\uf900-\ufaff\U00020000-\U0002a6df\U0002a700-\U0002ebef\U0002f800-\U0002fa1f"
# Where rjieba may cut differently from jieba: blocks holding one of these, and these characters.
RE_DIFFERS = re.compile(f"[+#&._%\\-{EXTRA_HAN}]")
# The same for the tagged cut, which walks rjieba's HMM-off tokens as the route of Han-only blocks.
RE_POS_DIFFERS = re.compile(f"[a-zA-Z0-9+#&._%\\-{EXTRA_HAN}]")
BLOCK_CHAR = re.compile("[\u4e00-\u9fd5a-zA-Z0-9+#&._%\\-]")
HAN_RUN = re.compile("[\u4e00-\u9fd5]+")


def configure(backend: str) -> None:
    """Set this process's default backend (`auto`, `jieba` or `rjieba`)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown jieba backend {backend!r}; choose one of {BACKENDS}")
    _DEFAULT["backend"] = backend


def spans(text: str, differs: re.Pattern = RE_DIFFERS):
    """(start, end, same) pieces that make up `text`: `same` stretches rjieba cuts as jieba
    does, and pieces it may not (a whole jieba block holding a `differs` character, or such a
    character outside jieba's blocks), which start and end at jieba block edges."""
    start = at = 0
    while True:
        m = differs.search(text, at)
        if m is None:
            break
        k = m.start()
        if BLOCK_CHAR.match(text, k):
            begin = k
            while begin > start and BLOCK_CHAR.match(text, begin - 1):
                begin -= 1
            end = RE_HAN.match(text, k).end()
        else:
            begin, end = k, k + 1
        if begin > start:
            yield start, begin, True
        yield begin, end, False
        start = at = end
    if start < len(text):
        yield start, len(text), True


class Segmenter:
    """jieba's precise cut (HMM on and off) and posseg, by jieba or by rjieba where it is exact."""

    def __init__(self, name: str, fast=None):
        import jieba

        jieba.setLogLevel(logging.WARNING)
        jieba.dt.check_initialized()
        self.name = name
        self._fast = fast  # the rjieba module, or None for the reference
        self._tagger = None  # zh_posseg.Tagger, on the first tagged cut
        self.pos_exact = True  # False after the rjieba tagged cut failed its canary check
        self._freq = jieba.dt.FREQ
        self._hmm_cache: dict[str, tuple[str, ...]] = {}
        self._vocab: dict[str, tuple[str, str]] = {}  # word -> (interned word, posseg tag): the C walk's
        self._finalseg = _native_finalseg() if fast is not None else None

    def _cut(self, text: str, hmm: bool) -> list[str]:
        import jieba

        if self._fast is None:
            return jieba.lcut(text, HMM=hmm)
        return self._on(text) if hmm else self._off(text)

    def _off(self, text: str) -> list[str]:
        """HMM off: rjieba, and jieba on the pieces it may cut differently (`spans`)."""
        import jieba

        if RE_DIFFERS.search(text) is None:
            return self._fast.cut(text, False)
        out: list[str] = []
        for start, end, same in spans(text):
            piece = text[start:end]
            out.extend(self._fast.cut(piece, False) if same else jieba.lcut(piece, HMM=False))
        return out

    def _on(self, text: str, off: list[str] | None = None) -> list[str]:
        """HMM on. rjieba's own HMM step differs from jieba's finalseg on some unknown runs, so
        the route comes from rjieba's HMM-off tokens (on Han-only blocks they are the route
        words) and runs of single characters go through jieba's `finalseg.cut` as jieba's
        `__cut_DAG` sends them; blocks holding ASCII letters or digits (whose HMM-off tokens
        join them) and the `spans` pieces are cut by `jieba.lcut` itself. `off`: this text's
        HMM-off tokens, when already cut."""
        import jieba

        out: list[str] = []
        if off is not None and RE_POS_DIFFERS.search(text) is None:
            self._walk(off, out)
            return out
        for start, end, same in spans(text, RE_POS_DIFFERS):
            piece = text[start:end]
            if same:
                self._walk(self._fast.cut(piece, False), out)
            else:
                out.extend(jieba.lcut(piece, HMM=True))
        return out

    def _walk(self, tokens: list[str], out: list[str]) -> None:
        """HMM-on tokens from the route words of Han-only blocks (single Han characters are
        route steps; any other single character or "\r\n" lies outside jieba's blocks)."""
        buf = ""
        for t in tokens:
            if len(t) == 1 and "\u4e00" <= t <= "\u9fd5":
                buf += t
                continue
            if buf:
                self._run(buf, out)
                buf = ""
            out.append(t)
        if buf:
            self._run(buf, out)

    def _run(self, buf: str, out: list[str]) -> None:
        """A run of single-character route steps: unknown runs through finalseg (cached)."""
        if len(buf) == 1:
            out.append(buf)
        elif not self._freq.get(buf):
            got = self._hmm_cache.get(buf)
            out.extend(got if got is not None else self._hmm_words(buf))
        else:
            out.extend(buf)

    def _hmm_words(self, buf: str) -> tuple[str, ...]:
        """jieba's HMM words (`finalseg.cut`) of an unknown run, kept in the run cache."""
        from jieba import finalseg

        if len(self._hmm_cache) > _MAX_CACHED:
            self._hmm_cache.clear()
        native = self._finalseg if not finalseg.Force_Split_Words and HAN_RUN.fullmatch(buf) else None
        got = self._hmm_cache[buf] = tuple(native[0].finalseg_cut(native[1], buf) if native else finalseg.cut(buf))
        return got

    def _route(self, tokens: list[str]) -> list[str] | None:
        """jieba's route through a text with no `RE_DIFFERS` character from rjieba's HMM-off
        tokens, which are jieba's there: jieba's HMM-off cut joins consecutive single letters
        and digits of the route, so a token of two or more ASCII letters and digits is its
        characters, unless it is a dictionary word (the route might then hold it whole: None,
        and jieba cuts the text). The tokens themselves when none is such a token."""
        route = None
        for i, t in enumerate(tokens):
            if len(t) > 1 and t.isascii() and t.isalnum():
                if self._freq.get(t):
                    return None
                if route is None:
                    route = tokens[:i]
                route.extend(t)
            elif route is not None:
                route.append(t)
        return tokens if route is None else route

    def load_tagging(self):
        """Load posseg's tables (a DoFn's setup); with rjieba, check the tagged cut once on the
        canary texts (`jieba.posseg.lcut`'s stored pairs): if it differs, jieba.posseg cuts."""
        if self._tagger is None and self._fast is not None:
            with _LOCK:
                if self._tagger is None:
                    from annotators.text import zh_posseg

                    tagger = zh_posseg.Tagger(self._fast.cut, zh_posseg.native_module())
                    for text, want in zip(canary_texts(), canary_tokens().get("pos") or []):
                        if [list(p) for p in tagger.tagged(text)] != want:
                            LOG.warning(
                                "the rjieba tagged cut differs from jieba.posseg on a canary text "
                                "(%r); using jieba.posseg",
                                text[:40],
                            )
                            self.pos_exact = False
                            break
                    self._tagger = tagger
        elif self._fast is None:
            from jieba import posseg

            posseg.dt.tokenizer.check_initialized()
        return self._tagger

    _tagging = load_tagging  # the name annotators/lot/outline.py calls

    def cut_both(self, text: str) -> tuple[list[str], list[str]]:
        """(`jieba.lcut(text, HMM=True)`, `jieba.lcut(text, HMM=False)`)."""
        if self._fast is None:
            return self._cut(text, True), self._cut(text, False)
        off = self._off(text)
        return self._on(text, off), off

    def cut_tagged(self, text: str) -> list[tuple[str, str]]:
        """(word, part-of-speech flag) pairs, exactly `jieba.posseg.lcut(text)` (HMM on)."""
        tagger = self.load_tagging()
        if tagger is None or not self.pos_exact:
            from jieba import posseg

            return [(p.word, p.flag) for p in posseg.lcut(text)]
        return tagger.tagged(text)

    def cut_all(
        self, text: str, *, off: bool = True, pos: bool = True
    ) -> tuple[list[str], list[str] | None, list[tuple[str, str]] | None]:
        """(HMM-on words, HMM-off tokens, `jieba.posseg` pairs) as `cut_both(text)` and
        `cut_tagged(text)` give them; a mode turned off is None."""
        if self._fast is None or not (off or pos):
            return (
                self._cut(text, True),
                self._cut(text, False) if off else None,
                self.cut_tagged(text) if pos else None,
            )
        no_hmm = self._off(text)
        if not pos:
            return self._on(text, no_hmm), no_hmm if off else None, None
        tagger = self.load_tagging()
        if tagger is not None and self.pos_exact and RE_POS_DIFFERS.search(text) is None:
            on: list[str] = []
            tagged: list[tuple[str, str]] = []
            self._walk_both(no_hmm, on, tagged)  # Han-only blocks: the HMM-off tokens are the route
            return on, no_hmm if off else None, tagged
        return self._on(text, no_hmm), no_hmm if off else None, self.cut_tagged(text)

    def _walk_both(self, tokens: list[str], on: list[str], pos: list[tuple[str, str]]) -> bool:
        """`_walk` and `zh_posseg.Tagger.walk` of the same route (`_route` of the HMM-off
        tokens) in one loop (jieba's and posseg's `__cut_DAG`: single-character route steps
        gather into runs): a single Han character, ASCII letter or digit is a route step (they
        lie in jieba's blocks); any other single character lies outside them. False (and
        nothing walked) when the route is unsure."""
        route = self._route(tokens)
        if route is None:
            return False
        tagger, buf = self._tagger, ""
        tags = tagger.tags
        for t in route:
            if len(t) == 1 and ("\u4e00" <= t <= "\u9fd5" or (t.isascii() and t.isalnum())):
                buf += t
                continue
            if buf:
                self._run(buf, on)
                tagger.run(buf, pos)
                buf = ""
            on.append(t)
            pos.append((t, "x" if len(t) == 1 or t == "\r\n" else tags.get(t, "x")))
        if buf:
            self._run(buf, on)
            tagger.run(buf, pos)
        return True

    def cut_sentences(
        self, sentences, *, off: bool = True, pos: bool = True
    ) -> tuple[tuple[tuple[str, ...], ...], list[str] | None, list[tuple[str, str]] | None]:
        """(the HMM-on words of each sentence without whitespace tokens, the HMM-off tokens and
        the `jieba.posseg` pairs of the sentences one after another; a mode turned off is
        None): `cut_all` of each sentence, walked in C (`_native_walk`) where it can be.

        The words are interned, one object per distinct word: the examples' Table 3 numbers
        carry them back from a pool worker, where a pickle then holds each word once, and the
        job's process hashes each word object once when it counts the vocabulary."""
        sentences = tuple(sentences)  # read more than once below
        walk = self._native_walk() if pos else None
        words, off_tokens, pos_tokens = [], [] if off else None, [] if pos else None
        if walk is not None:
            # consecutive sentences with no character rjieba may cut differently: ONE rjieba
            # call, walked along jieba's route (`_route`) sentence by sentence in C (None when
            # two of them meet inside a block, or the route is unsure: then sentence by
            # sentence); the others piece by piece (`_cut_pieces`)
            joined = "".join(sentences)
            runs = (
                [(False, sentences)]
                if RE_DIFFERS.search(joined) is None
                else itertools.groupby(sentences, key=lambda s: RE_DIFFERS.search(s) is not None)
            )
            for differs, run in runs:
                run = list(run)
                walked = None
                if not differs:
                    tokens = self._fast.cut(joined if len(run) == len(sentences) else "".join(run), False)
                    walked = walk(tokens, list(itertools.accumulate(map(len, run))))
                if walked is not None:
                    words.extend(walked[0])
                    if off:
                        off_tokens.extend(tokens)
                    pos_tokens.extend(walked[1])
                    continue
                for sentence in run:
                    words.append(self._cut_pieces(sentence, walk, off_tokens, pos_tokens))
            return tuple(words), off_tokens, pos_tokens
        for sentence in sentences:
            on_part, off_part, pos_part = self.cut_all(sentence, off=off, pos=pos)
            words.append(tuple(map(sys.intern, filter(str.strip, on_part))))  # whitespace tokens dropped
            if off:
                off_tokens.extend(off_part)
            if pos:
                pos_tokens.extend(pos_part)
        return tuple(words), off_tokens, pos_tokens

    def _cut_pieces(self, sentence: str, walk, off_tokens: list[str] | None, pos_tokens: list) -> tuple[str, ...]:
        """One sentence's HMM-on words (whitespace left out, interned); its HMM-off tokens (when
        `off_tokens` is a list) and posseg pairs onto the lists. Each stretch rjieba cuts as
        jieba does is walked in C along jieba's route (`walk`, letters and digits included);
        each block it may cut differently (`spans`), and a stretch whose route is unsure, is
        cut by jieba on its own, as jieba's cut is block-local."""
        words: list[str] = []
        for start, end, same in spans(sentence):
            piece = sentence[start:end]
            walked = None
            if same:
                off_part = self._fast.cut(piece, False)
                walked = walk(off_part)
            if walked is not None:
                on_part, pos_part = walked
            else:
                on_part, off_part, pos_part = self.cut_all(piece, off=off_tokens is not None, pos=True)
                on_part = list(map(sys.intern, filter(str.strip, on_part)))
            words.extend(on_part)
            if off_tokens is not None:
                off_tokens.extend(off_part)
            pos_tokens.extend(pos_part)
        return tuple(words)

    def _native_walk(self):
        """`walk(tokens, ends=None) -> (words, pairs) | None`: `_walk_both` in C
        (`_jieba_hmm.walk`, the words without whitespace tokens and interned; with `ends`, per
        sentence; None where the route is unsure or, with `ends`, sentences meet in a block), or None
        (the reference backend, no C module, or a tagged cut that failed its canary check)."""
        if self._fast is None or self._finalseg is None:
            return None
        tagger = self.load_tagging()
        if tagger is None or not self.pos_exact or tagger._model is None:
            return None
        if len(self._vocab) > _MAX_VOCAB:
            self._vocab.clear()
        walk, freq, tags, vocab = self._finalseg[0].walk, self._freq, tagger.tags, self._vocab
        runs, hmm_words, tagged_runs, detail = self._hmm_cache, self._hmm_words, tagger.runs, tagger.detail
        return lambda tokens, ends=None: walk(tokens, freq, tags, vocab, runs, hmm_words, tagged_runs, detail, ends)

    def lcut(self, text: str, HMM: bool = True) -> list[str]:  # noqa: N803 (jieba's spelling)
        """`jieba.lcut(text, HMM=HMM)`."""
        return self._cut(text, HMM)

    def tokenize(self, text: str, HMM: bool = True):  # noqa: N803
        """(word, start, end) per token, like `jieba.tokenize`."""
        start = 0
        for word in self.lcut(text, HMM=HMM):
            yield word, start, start + len(word)
            start += len(word)


def _native_finalseg():
    """(the `_jieba_hmm` module, its model of jieba.finalseg's tables), or None (not built, or
    STORYBENCH_ZH_NATIVE=0): jieba's HMM step for a Han run, the words `finalseg.cut` gives."""
    from jieba import finalseg

    from annotators.text.zh_posseg import native_module

    native = native_module()
    if native is None:
        return None
    return native, native.finalseg_model(finalseg.start_P, finalseg.trans_P, finalseg.emit_P)


def _reference_segmenter() -> Segmenter:
    return Segmenter(REFERENCE)


def _accelerated_segmenter() -> Segmenter:
    return Segmenter(ACCELERATED, importlib.import_module(ACCELERATED))


_FACTORIES = {REFERENCE: _reference_segmenter, ACCELERATED: _accelerated_segmenter}


def _segmenter(name: str) -> Segmenter:
    if name not in _SEGMENTERS:
        with _LOCK:
            if name not in _SEGMENTERS:
                _SEGMENTERS[name] = _FACTORIES[name]()
    return _SEGMENTERS[name]


def canary_texts() -> list[str]:
    with open(os.path.join(_HERE, "zh_canary.txt"), encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f if line.strip() and not line.startswith("#")]


_CANARY: dict = {}


def canary_tokens() -> dict[str, list]:
    """jieba 0.42.1's tokens of every canary text: {"hmm": [...], "no_hmm": [...], "pos":
    [[word, tag], ...] per text from `jieba.posseg.lcut`}."""
    if not _CANARY:
        with open(os.path.join(_HERE, "zh_canary_tokens.json"), encoding="utf-8") as f:
            _CANARY.update(json.load(f))
    return _CANARY


def self_check(candidate, expected: dict[str, list[list[str]]] | None = None) -> str | None:
    """None when `candidate` cuts every canary text into the expected tokens (jieba 0.42.1's,
    HMM on and off, through `lcut` and `cut_both` alike), else the first difference."""
    expected = expected or canary_tokens()
    for text, on, off in zip(canary_texts(), expected["hmm"], expected["no_hmm"]):
        if candidate.lcut(text, HMM=True) != on:
            return f"HMM=True: {text[:40]!r}"
        if candidate.lcut(text, HMM=False) != off:
            return f"HMM=False: {text[:40]!r}"
        if hasattr(candidate, "cut_both") and candidate.cut_both(text) != (on, off):
            return f"one pass: {text[:40]!r}"
    return None


def resolve(backend: str | None = None) -> str:
    """The backend `backend` (default: the configured one) stands for in this process."""
    backend = backend or _DEFAULT["backend"]
    if backend not in BACKENDS:
        raise ValueError(f"unknown jieba backend {backend!r}; choose one of {BACKENDS}")
    with _LOCK:
        if backend not in _RESOLVED:
            _RESOLVED[backend] = (
                REFERENCE if backend == REFERENCE else _check_accelerated(required=backend == ACCELERATED)
            )
        return _RESOLVED[backend]


def _check_accelerated(*, required: bool) -> str:
    try:
        candidate = _segmenter(ACCELERATED)
    except ImportError:
        if required:
            LOG.warning("rjieba is not installed (pip install rjieba==0.2.2); using jieba")
        return REFERENCE
    problem = self_check(candidate)
    if problem:
        LOG.warning("rjieba splits a canary text differently from jieba 0.42.1 (%s); using jieba", problem)
        _SEGMENTERS.pop(ACCELERATED, None)
        return REFERENCE
    return ACCELERATED


def backend_info(backend: str | None = None) -> dict:
    """{"backend", "version"} of what `backend` resolves to, for stats.json and cards."""
    from importlib.metadata import version

    name = resolve(backend)
    return {"backend": name, "version": version(name)}


def backend_record(backend: str | None, _element=None) -> list[dict]:
    """[backend_info(backend)], a step's output for any element."""
    return [backend_info(backend)]


def load(backend: str | None = None) -> Segmenter:
    """The process-wide initialised Segmenter (`cut_both`, `lcut`, `tokenize`) of the resolved backend."""
    return _segmenter(resolve(backend))


def words(text: str) -> list[str]:
    """jieba precise-mode tokens of `text`, HMM on, whitespace tokens removed."""
    return [t for t in load().lcut(text, HMM=True) if t.strip()]
