"""jieba word tokenising (precise mode), loaded once per process, with an optional faster backend.

One `Segmenter` per process cuts a text with HMM on and off **in one pass**: both modes of
jieba's precise cut follow the same best route through the dictionary DAG and differ only in
what they do with runs of single characters (HMM on: `finalseg` re-segments unknown runs;
HMM off: runs of ASCII letters and digits join). `Segmenter.cut_both` computes the route once
per block and gives both token lists, exactly as `jieba.lcut(text, HMM=True)` and
`jieba.lcut(text, HMM=False)` would; blocks are split with jieba 0.42.1's own patterns whatever
the backend.

Backends differ only in who computes the route and the HMM re-segmentation:
- `jieba` (0.42.1): the reference, always installed (pure Python `get_DAG`/`calc`).
- `jieba_next` (the `fast` extra, a Rust-accelerated fork of jieba_fast): used only after a
  start-up self-check proves that it cuts every canary text (`zh_canary.txt`) into exactly the
  tokens jieba 0.42.1 gives (`zh_canary_tokens.json`, HMM on and off); otherwise a warning and
  the reference. The reference itself is checked the same way against `jieba.lcut`, and falls
  back to calling `lcut` twice if this module's one-pass cut ever disagrees.

`auto` (the default) picks `jieba_next` when it is installed and passes, else `jieba`. Only the
backend in use is loaded (the accelerated one never loads jieba's dictionary a second time).
The dictionary load (~1 s) happens on first use or in `load()`, which Beam DoFns call from
`setup()`; never at import time. `jieba.enable_paddle()` is never called (it tries to
pip-install at run time).
"""
from __future__ import annotations

import importlib
import json
import logging
import math
import os
import re
import threading

LOG = logging.getLogger("storybench")
REFERENCE = "jieba"
ACCELERATED = "jieba_next"
BACKENDS = ("auto", REFERENCE, ACCELERATED)
_LOCK = threading.RLock()
_SEGMENTERS: dict[str, "Segmenter"] = {}
_RESOLVED: dict[str, str] = {}
_DEFAULT = {"backend": os.environ.get("STORYBENCH_ZH_BACKEND", "auto")}
_HERE = os.path.dirname(__file__)

# jieba 0.42.1's block patterns (jieba/__init__.py: re_han_default, re_skip_default, re_eng).
RE_HAN = re.compile("([\u4E00-\u9FD5a-zA-Z0-9+#&\\._%\\-]+)", re.U)
RE_SKIP = re.compile("(\r\n|\\s)", re.U)
_ENG = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


def configure(backend: str) -> None:
    """Set this process's default backend (`auto`, `jieba` or `jieba_next`)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown jieba backend {backend!r}; choose one of {BACKENDS}")
    _DEFAULT["backend"] = backend


class Segmenter:
    """jieba's precise cut over one backend's route and HMM re-segmentation."""

    def __init__(self, name: str, route, freq: dict, hmm_cut, tokenizer):
        self.name = name
        self._route, self._freq, self._hmm_cut = route, freq, hmm_cut
        self.tokenizer = tokenizer  # the backend's own object (dictionary, FREQ)
        self.one_pass = True  # False after a failed self-check: cut_both calls lcut twice
        self.checked = False  # the reference's one-pass cut was compared with jieba.lcut
        self._hmm_cache: dict[str, tuple[str, ...]] = {}

    _MAX_CACHED = 200_000  # HMM results kept per process (unknown runs recur: names, places)

    def _runs(self, buf: str, on: list) -> None:
        """A run of single characters, HMM on: unknown runs are re-segmented by `finalseg`."""
        if len(buf) == 1:
            on.append(buf)
        elif not self._freq.get(buf):
            cut = self._hmm_cache.get(buf)
            if cut is None:
                if len(self._hmm_cache) > self._MAX_CACHED:
                    self._hmm_cache.clear()
                cut = self._hmm_cache[buf] = tuple(self._hmm_cut(buf))
            on.extend(cut)
        else:
            on.extend(buf)

    def _block(self, blk: str, on: list | None, off: list | None) -> None:
        route = self._route(blk)
        x, n, buf, eng = 0, len(blk), "", ""
        while x < n:
            y = route[x] + 1
            if y - x == 1:
                c = blk[x]
                buf += c
                if off is not None:
                    if c in _ENG:
                        eng += c
                    else:
                        if eng:
                            off.append(eng)
                            eng = ""
                        off.append(c)
            else:
                word = blk[x:y]
                if off is not None:
                    if eng:
                        off.append(eng)
                        eng = ""
                    off.append(word)
                if on is not None:
                    if buf:
                        self._runs(buf, on)
                    on.append(word)
                buf = ""
            x = y
        if eng:
            off.append(eng)
        if buf and on is not None:
            self._runs(buf, on)

    def _cut(self, text: str, on: list | None, off: list | None) -> None:
        for blk in RE_HAN.split(text):
            if not blk:
                continue
            if RE_HAN.match(blk):
                self._block(blk, on, off)
                continue
            for piece in RE_SKIP.split(blk):
                if RE_SKIP.match(piece):
                    for out in (on, off):
                        if out is not None:
                            out.append(piece)
                else:
                    for out in (on, off):
                        if out is not None:
                            out.extend(piece)

    def cut_both(self, text: str) -> tuple[list[str], list[str]]:
        """(`jieba.lcut(text, HMM=True)`, `jieba.lcut(text, HMM=False)`) from one route per block."""
        if not self.one_pass:
            return self.tokenizer.lcut(text, HMM=True), self.tokenizer.lcut(text, HMM=False)
        on: list[str] = []
        off: list[str] = []
        self._cut(text, on, off)
        return on, off

    def lcut(self, text: str, HMM: bool = True) -> list[str]:  # noqa: N803 (jieba's spelling)
        """`jieba.lcut(text, HMM=HMM)`."""
        if not self.one_pass:
            return self.tokenizer.lcut(text, HMM=HMM)
        out: list[str] = []
        self._cut(text, out if HMM else None, None if HMM else out)
        return out

    def tokenize(self, text: str, HMM: bool = True):  # noqa: N803
        """(word, start, end) per token, like `jieba.tokenize`."""
        start = 0
        for word in self.lcut(text, HMM=HMM):
            yield word, start, start + len(word)
            start += len(word)


def _best_route(freq: dict, total: int):
    """jieba 0.42.1's `get_DAG` + `calc` in one backward pass: for each position, the end of
    the word that starts the most probable segmentation of the rest (the same floating-point
    sums in the same order, ties to the longer word, as `max` over (score, end) tuples)."""
    logtotal = math.log(total)
    log = math.log
    weight: dict[str, float] = {}  # word -> log(freq) - log(total), filled as words are met

    def route(block: str) -> list[int]:
        n = len(block)
        score = [0.0] * (n + 1)
        ends = [0] * n
        for k in range(n - 1, -1, -1):
            best, end = None, k
            i, frag = k, block[k]
            while i < n and frag in freq:
                if freq[frag]:
                    w = weight.get(frag)
                    if w is None:
                        w = weight[frag] = log(freq[frag]) - logtotal
                    s = w + score[i + 1]
                    if best is None or s >= best:
                        best, end = s, i
                i += 1
                frag = block[k:i + 1]
            if best is None:  # no dictionary word starts here: the character alone
                best = log(freq.get(block[k]) or 1) - logtotal + score[k + 1]
            score[k], ends[k] = best, end
        return ends

    return route


def _reference_segmenter() -> Segmenter:
    import jieba
    from jieba import finalseg

    jieba.setLogLevel(logging.WARNING)
    tok = jieba.Tokenizer()
    tok.initialize()
    return Segmenter(REFERENCE, _best_route(tok.FREQ, tok.total), tok.FREQ, finalseg.cut, tok)


def _accelerated_segmenter() -> Segmenter:
    module = importlib.import_module(ACCELERATED)
    from jieba_next import finalseg

    module.setLogLevel(logging.WARNING)
    tok = module.Tokenizer()
    tok.initialize()
    return Segmenter(ACCELERATED, tok._route_from_rust, tok.FREQ, finalseg.cut, tok)


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


def canary_tokens() -> dict[str, list[list[str]]]:
    """jieba 0.42.1's tokens of every canary text: {"hmm": [...], "no_hmm": [...]}."""
    with open(os.path.join(_HERE, "zh_canary_tokens.json"), encoding="utf-8") as f:
        return json.load(f)


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


def reference_tokens() -> dict[str, list[list[str]]]:
    """The canary tokens as the installed reference jieba cuts them with `lcut`."""
    tok = _segmenter(REFERENCE).tokenizer
    texts = canary_texts()
    return {"hmm": [tok.lcut(t, HMM=True) for t in texts], "no_hmm": [tok.lcut(t, HMM=False) for t in texts]}


def resolve(backend: str | None = None) -> str:
    """The backend `backend` (default: the configured one) stands for in this process."""
    backend = backend or _DEFAULT["backend"]
    if backend not in BACKENDS:
        raise ValueError(f"unknown jieba backend {backend!r}; choose one of {BACKENDS}")
    with _LOCK:
        if backend not in _RESOLVED:
            _RESOLVED[backend] = REFERENCE if backend == REFERENCE else _check_accelerated(
                required=backend == ACCELERATED)
        return _RESOLVED[backend]


def _check_accelerated(*, required: bool) -> str:
    try:
        candidate = _segmenter(ACCELERATED)
    except ImportError:
        if required:
            LOG.warning("jieba_next is not installed (pip install 'storybench[fast]'); using jieba")
        return REFERENCE
    problem = self_check(candidate)
    if problem:
        LOG.warning("jieba_next splits a canary text differently from jieba 0.42.1 (%s); using jieba", problem)
        _SEGMENTERS.pop(ACCELERATED, None)
        return REFERENCE
    return ACCELERATED


def _checked_reference() -> Segmenter:
    seg = _segmenter(REFERENCE)
    if seg.one_pass and not seg.checked:
        problem = self_check(seg, reference_tokens())
        if problem:
            LOG.warning("one-pass cut differs from jieba.lcut (%s); cutting twice", problem)
            seg.one_pass = False
        seg.checked = True
    return seg


def backend_info(backend: str | None = None) -> dict:
    """{"backend", "version"} of what `backend` resolves to, for stats.json and cards."""
    from importlib.metadata import version

    name = resolve(backend)
    return {"backend": name, "version": version(name.replace("_", "-"))}


def load(backend: str | None = None) -> Segmenter:
    """The process-wide initialised Segmenter (`cut_both`, `lcut`, `tokenize`) of the resolved backend."""
    name = resolve(backend)
    return _checked_reference() if name == REFERENCE else _segmenter(name)


def words(text: str) -> list[str]:
    """jieba precise-mode tokens of `text`, HMM on, whitespace tokens removed."""
    return [t for t in load().lcut(text, HMM=True) if t.strip()]
