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

Whichever backend runs, the whole cut (jieba's blocks, the walk along the route and, for the
reference, the route itself) runs in the optional native module `_zhcut` (C, built at install
time when a compiler is there), only after it gives exactly the pure-Python cut's tokens, tags
and routes on every canary text; otherwise (or with STORYBENCH_ZH_NATIVE=0) the pure-Python
code runs.

`auto` (the default) picks `jieba_next` when it is installed and passes, else `jieba`. Only the
backend in use is loaded (the accelerated one never loads jieba's dictionary a second time).
The dictionary load (~1 s) happens on first use or in `load()`, which Beam DoFns call from
`setup()`; never at import time. `jieba.enable_paddle()` is never called (it tries to
pip-install at run time).
"""
from __future__ import annotations

import hashlib
import importlib
import json
import logging
import math
import os
import re
import tempfile
import threading
import zlib

LOG = logging.getLogger("storybench")
REFERENCE = "jieba"
ACCELERATED = "jieba_next"
BACKENDS = ("auto", REFERENCE, ACCELERATED)
_LOCK = threading.RLock()
_SEGMENTERS: dict[str, "Segmenter"] = {}
_RESOLVED: dict[str, str] = {}
_DEFAULT = {"backend": os.environ.get("STORYBENCH_ZH_BACKEND", "auto")}
_HERE = os.path.dirname(__file__)


def _native_module():
    """The native route/walk module, or None (not built, or turned off by STORYBENCH_ZH_NATIVE=0)."""
    if os.environ.get("STORYBENCH_ZH_NATIVE", "1") == "0":
        return None
    try:
        from annotators.text import _zhcut
    except ImportError:
        return None
    return _zhcut


def native_function(name: str):
    """A function of the native module, or None (not built, too old to have it, or turned off
    by STORYBENCH_ZH_NATIVE=0): for callers that check it against their Python code first."""
    return getattr(_native_module(), name, None)


_NATIVE = _native_module()
_NATIVE_POS_LOADED: list = []  # [True] once the native Viterbi holds jieba.posseg's tables

# jieba 0.42.1's block patterns (jieba/__init__.py: re_han_default, re_skip_default, re_eng).
RE_HAN = re.compile("([\u4E00-\u9FD5a-zA-Z0-9+#&\\._%\\-]+)", re.U)
RE_SKIP = re.compile("(\r\n|\\s)", re.U)
# jieba.posseg's block pattern (re_han_internal): RE_HAN without "%" and "-".
RE_POS_HAN = re.compile("([\u4E00-\u9FD5a-zA-Z0-9+#&\\._]+)", re.U)
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
        self._pos = None  # (jieba.posseg's word -> tag table, its HMM tagger), on first tagged cut
        self.pos_exact = True  # False after the tagged cut failed its canary check
        self._pos_cache: dict[str, tuple[tuple[str, str], ...]] = {}
        self.native = None  # the native module, once `use_native` proved it equal to the Python walk

    def _tagging(self):
        """posseg's tag table and HMM tagger, loaded on the first tagged cut, which is then
        checked once against the stored canary pairs (jieba 0.42.1's `posseg.lcut`): if it
        ever differs, tagged cuts call `jieba.posseg` itself from then on."""
        if self._pos is None:
            with _LOCK:
                if self._pos is None:
                    tags = _word_tags(self._freq)
                    table = getattr(self._route, "table", None)
                    if table is not None and hasattr(self.native, "freq_table_tags"):
                        # the native cut then tags a word of the route by its table entry
                        # (no lookup in this large dict); the canary check below covers it
                        self.native.freq_table_tags(table, tags)
                    self._pos = (tags, _PosHMM().detail)
                    expected = canary_tokens().get("pos") or []
                    for text, want in zip(canary_texts(), expected):
                        got: list = []
                        self._cut(text, None, None, got)
                        if [list(p) for p in got] != want:
                            LOG.warning("one-pass part-of-speech cut differs from jieba.posseg on a canary "
                                        "text (%r); using jieba.posseg", text[:40])
                            self.pos_exact = False
                            break
        return self._pos

    def _posseg(self, text: str) -> list[tuple[str, str]]:
        from jieba import posseg

        return [(p.word, p.flag) for p in posseg.lcut(text)]

    def _pos_runs(self, buf: str, pos: list) -> None:
        """A run of single characters, tagged as `jieba.posseg` does: unknown runs go through
        its part-of-speech HMM (cached), known ones split into tagged characters."""
        tags, detail = self._pos
        if len(buf) == 1:
            pos.append((buf, tags.get(buf, "x")))
        elif not self._freq.get(buf):
            cut = self._pos_cache.get(buf)
            if cut is None:
                if len(self._pos_cache) > self._MAX_CACHED:
                    self._pos_cache.clear()
                cut = self._pos_cache[buf] = tuple(detail(buf))
            pos.extend(cut)
        else:
            for c in buf:
                pos.append((c, tags.get(c, "x")))

    @staticmethod
    def _pos_other(piece: str, pos: list) -> None:
        """Text outside posseg's blocks: whitespace runs and every other character, tagged x."""
        if len(piece) == 1 and not piece.isspace():  # most often one punctuation mark
            pos.append((piece, "x"))
            return
        for part in RE_SKIP.split(piece):
            if RE_SKIP.match(part):
                pos.append((part, "x"))
            else:
                pos.extend((c, "x") for c in part)

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

    def use_native(self, native) -> str | None:
        """Walk with `native` from now on if it cuts every canary text (HMM on and off)
        exactly as the Python walk does; returns the first difference, else None. (Tagged
        cuts are checked against jieba.posseg's own pairs on the first tagged cut, `_tagging`.)"""
        if native is None:
            return "not built"
        for text in canary_texts():
            python = ([], [])
            self._cut(text, *python)
            self.native = native
            try:
                mine = ([], [])
                self._cut(text, *mine)
            except Exception as exc:  # a native failure is a difference, never a crash
                mine = (repr(exc),)
            finally:
                self.native = None
            if mine != python:
                self._hmm_cache.clear()
                return f"{text[:40]!r}"
        self._hmm_cache.clear()  # later self-checks must run the HMM step, not this check's cache
        self.native = native
        return None

    def _block(self, blk: str, on: list | None, off: list | None, pos: list | None = None) -> None:
        route = self._route(blk)
        tags = self._pos[0] if pos is not None else None
        if self.native is not None:
            self.native.walk(blk, route, on, off, pos, tags, self._runs, self._pos_runs, self._hmm_cache,
                             self._pos_cache)
            return
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
                if buf:
                    if on is not None:
                        self._runs(buf, on)
                    if pos is not None:
                        self._pos_runs(buf, pos)
                if on is not None:
                    on.append(word)
                if pos is not None:
                    pos.append((word, tags.get(word, "x")))
                buf = ""
            x = y
        if eng:
            off.append(eng)
        if buf:
            if on is not None:
                self._runs(buf, on)
            if pos is not None:
                self._pos_runs(buf, pos)

    def _pos_block(self, blk: str, pos: list) -> None:
        """A block of this module's pattern that holds "%" or "-": posseg splits it further."""
        for part in RE_POS_HAN.split(blk):
            if not part:
                continue
            if RE_POS_HAN.match(part):
                self._block(part, None, None, pos)
            else:
                self._pos_other(part, pos)

    def _cut(self, text: str, on: list | None, off: list | None, pos: list | None = None) -> None:
        if pos is not None:
            self._tagging()
        if self.native is not None:
            # the whole cut in C: blocks, the route (its own table when the route is the
            # native one, else a call of the backend's route per block), the walk
            route = self._route
            self.native.cut(text, getattr(route, "table", None), getattr(route, "logtotal", 0.0), route,
                            on, off, pos, self._pos[0] if pos is not None else None,
                            self._runs, self._pos_runs, self._pos_block, self._hmm_cache, self._pos_cache)
            return
        for blk in RE_HAN.split(text):
            if not blk:
                continue
            if RE_HAN.match(blk):
                if pos is not None and ("%" in blk or "-" in blk):
                    if on is not None or off is not None:
                        self._block(blk, on, off)
                    self._pos_block(blk, pos)
                else:
                    self._block(blk, on, off, pos)
                continue
            if pos is not None:
                self._pos_other(blk, pos)
            if on is None and off is None:
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

    def cut_all(self, text: str, *, off: bool = True, pos: bool = True
                ) -> tuple[list[str], list[str] | None, list[tuple[str, str]] | None]:
        """(HMM-on words, HMM-off tokens, `jieba.posseg` pairs) from one route per block, as
        `cut_both(text)` and `cut_tagged(text)` give them; a mode turned off is None."""
        if pos:
            self._tagging()
        if not self.one_pass or (pos and not self.pos_exact):
            on, no_hmm = self.cut_both(text)
            return on, no_hmm if off else None, self.cut_tagged(text) if pos else None
        on_list: list[str] = []
        off_list = [] if off else None
        pos_list = [] if pos else None
        self._cut(text, on_list, off_list, pos_list)
        return on_list, off_list, pos_list

    def cut_sentences(self, sentences, *, off: bool = True, pos: bool = True
                      ) -> tuple[tuple[tuple[str, ...], ...], list[str] | None, list[tuple[str, str]] | None]:
        """(the HMM-on words of each sentence without whitespace tokens, the HMM-off tokens and
        the `jieba.posseg` pairs of the sentences one after another; a mode turned off is
        None): `cut_all` of each sentence, in one native call when the native cut is in use."""
        if pos:
            self._tagging()
        native = self.native
        if native is None or not self.one_pass or (pos and not self.pos_exact) or not hasattr(native, "cut_many"):
            words, off_tokens, pos_tokens = [], [] if off else None, [] if pos else None
            for sentence in sentences:
                on_part, off_part, pos_part = self.cut_all(sentence, off=off, pos=pos)
                words.append(tuple(filter(str.strip, on_part)))  # whitespace tokens dropped
                if off:
                    off_tokens.extend(off_part)
                if pos:
                    pos_tokens.extend(pos_part)
            return tuple(words), off_tokens, pos_tokens
        route = self._route
        return native.cut_many(sentences, getattr(route, "table", None), getattr(route, "logtotal", 0.0), route,
                               off, pos, self._pos[0] if pos else None, self._runs, self._pos_runs,
                               self._pos_block, self._hmm_cache, self._pos_cache)

    def cut_tagged(self, text: str) -> list[tuple[str, str]]:
        """(word, part-of-speech flag) pairs, exactly `jieba.posseg.lcut(text)` (HMM on): the
        same best route, posseg's blocks, tags from jieba's dictionary and posseg's HMM for
        unknown runs."""
        self._tagging()
        if not self.one_pass or not self.pos_exact:
            return self._posseg(text)
        pos: list[tuple[str, str]] = []
        self._cut(text, None, None, pos)
        return pos

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


def _jieba_file(*parts: str) -> str:
    import importlib.util

    spec = importlib.util.find_spec("jieba")
    return os.path.join(spec.submodule_search_locations[0], *parts)


def _word_tags(freq: dict) -> dict[str, str]:
    """jieba.posseg's word -> part-of-speech table (one `word freq tag` line per word of jieba's
    dict.txt, the last line of a word wins), built without importing jieba.posseg, whose import
    builds a table of its own: keys are the segmenter's own dictionary strings and tags are
    interned, so the table costs a dict, not 349k words and tags over again."""
    read: dict[str, str] = {}
    names: dict[str, str] = {}
    with open(_jieba_file("dict.txt"), "rb") as f:
        lines = f.read().decode("utf-8").splitlines()
    for line in lines:
        line = line.strip()
        if line:
            word, _, tag = line.split(" ")
            read[word] = names.setdefault(tag, tag)
    del lines
    if not isinstance(freq, dict):  # no FREQ dict built (the cached table): dict.txt's own strings
        return read
    table = {}
    for word in freq:
        tag = read.pop(word, None)
        if tag is not None:
            table[word] = tag
    table.update(read)  # words of dict.txt the segmenter's dictionary lacks (none for jieba's own)
    return table


def _load_file(name: str, path: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _PosHMM:
    """jieba.posseg's tagger for runs of unknown characters (`POSTokenizer.__cut_detail`): its
    HMM tables and Viterbi, loaded from its files without running `jieba.posseg`'s import."""

    RE_HAN = re.compile("([\u4E00-\u9FD5]+)")
    RE_SKIP = re.compile("([\\.0-9]+|[a-zA-Z0-9]+)")
    RE_ENG = re.compile("[a-zA-Z0-9]+")
    RE_NUM = re.compile("[\\.0-9]+")

    def __init__(self):
        tables = [_load_file(f"storybench_posseg_{n}", _jieba_file("posseg", f"{n}.py")).P
                  for n in ("char_state_tab", "prob_start", "prob_trans", "prob_emit")]
        self._tables = tables
        self._viterbi = _load_file("storybench_posseg_viterbi", _jieba_file("posseg", "viterbi.py")).viterbi
        self._native_path = self._native(_NATIVE)

    def _states(self) -> list[str]:
        char_state, start, trans, emit = self._tables
        return sorted(set(trans) | set(start) | set(emit) | {y for d in trans.values() for y in d}
                      | {y for v in char_state.values() for y in v})

    def check_texts(self) -> list[str]:
        """The runs the native Viterbi is checked on: every Han run of the canary texts, and
        40 rare characters of the tables forwards and backwards."""
        emit = self._tables[3]
        rare = "".join(sorted(c for c in emit[self._states()[0]] if len(c) == 1)[-40:])
        return [blk for t in canary_texts() for blk in self.RE_HAN.findall(t)] + [rare, rare[::-1]]

    def python_paths(self) -> list[list[str]]:
        """jieba's own Viterbi path of every check text, as stored in `zh_canary_viterbi.json`."""
        return [[f"{state}/{tag}" for state, tag in self._viterbi(text, *self._tables)[1]]
                for text in self.check_texts()]

    def _native(self, native):
        """The native Viterbi over these tables, if it gives jieba's own path on every check
        text (`check_texts`): the paths jieba's Python Viterbi gives are stored
        (`zh_canary_viterbi.json`, ~1 s of Python Viterbi saved per process); if the stored
        texts are not this installation's check texts, jieba's Viterbi computes the paths
        here. Else None (jieba's Python Viterbi runs)."""
        if native is None:
            return None
        char_state, start, trans, emit = self._tables
        try:
            with _LOCK:  # the module holds one table set per process: jieba.posseg's, loaded once
                if not _NATIVE_POS_LOADED:
                    native.posseg_tables(self._states(), char_state, start, trans, emit)
                    _NATIVE_POS_LOADED.append(True)
            texts = self.check_texts()
            stored = canary_viterbi()
            paths = (stored["paths"] if stored.get("texts") == texts and len(stored.get("paths", ())) == len(texts)
                     else self.python_paths())
            for text, want in zip(texts, paths):
                if [f"{state}/{tag}" for state, tag in native.posseg_viterbi(text)] != want:
                    LOG.warning("the native part-of-speech Viterbi differs from jieba's on %r; using jieba's", text[:40])
                    return None
        except Exception as exc:  # a native failure means jieba's own Viterbi, never a crash
            LOG.warning("the native part-of-speech Viterbi failed (%s); using jieba's", exc)
            return None
        return native.posseg_viterbi

    def _hmm(self, text: str) -> list[tuple[str, str]]:
        path = self._native_path(text) if self._native_path else self._viterbi(text, *self._tables)[1]
        out, begin, nexti = [], 0, 0
        for i, char in enumerate(text):
            state, tag = path[i]
            if state == "B":
                begin = i
            elif state == "E":
                out.append((text[begin:i + 1], tag))
                nexti = i + 1
            elif state == "S":
                out.append((char, tag))
                nexti = i + 1
        if nexti < len(text):
            out.append((text[nexti:], path[nexti][1]))
        return out

    def detail(self, text: str) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        for blk in self.RE_HAN.split(text):
            if self.RE_HAN.match(blk):
                out.extend(self._hmm(blk))
                continue
            for x in self.RE_SKIP.split(blk):
                if x:
                    out.append((x, "m" if self.RE_NUM.match(x) else "eng" if self.RE_ENG.match(x) else "x"))
        return out


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


def _native_route(freq: dict, total: int, native):
    """`_best_route` computed by the native module, over its own copy of `freq` (made once, so
    no string or dict lookup per prefix)."""
    logtotal = math.log(total)
    table, route_table = native.freq_table(freq), native.route_table

    def native_route(block: str) -> list[int]:
        return route_table(table, block, logtotal)

    native_route.table, native_route.logtotal = table, logtotal  # for the native cut's own route
    return native_route


def _reference_segmenter() -> Segmenter:
    import jieba
    from jieba import finalseg

    jieba.setLogLevel(logging.WARNING)
    tok = jieba.Tokenizer()
    tok.initialize()
    python_route = _best_route(tok.FREQ, tok.total)
    seg = Segmenter(REFERENCE, python_route, tok.FREQ, finalseg.cut, tok)
    if _NATIVE is not None:
        native_route = _native_route(tok.FREQ, tok.total, _NATIVE)
        blocks = [b for t in canary_texts() for b in RE_HAN.split(t) if b and RE_HAN.match(b)]
        if all(native_route(b) == python_route(b) for b in blocks):
            seg._route = native_route
        else:
            LOG.warning("the native jieba route differs from the Python one on a canary text; using Python")
    _use_native(seg)
    return seg


def _use_native(seg: Segmenter) -> None:
    problem = seg.use_native(_NATIVE)
    if problem and _NATIVE is not None:
        LOG.warning("the native jieba walk differs from the Python one (%s); using Python", problem)


def _path(ends: list[int], n: int) -> list[int]:
    """The word ends a walk of `ends` over a block of n characters visits from 0 (positions
    off the path do not matter; jieba_next's route has one entry more than the block)."""
    out, k = [], 0
    while k < n:
        out.append(ends[k])
        k = ends[k] + 1
    return out


def _accelerated_segmenter() -> Segmenter:
    module = importlib.import_module(ACCELERATED)
    from jieba_next import finalseg

    module.setLogLevel(logging.WARNING)
    tok = module.Tokenizer()
    cached = _read_table_cache(module)
    if cached is not None:
        # the native route over the cached table: jieba_next's own dictionary is not loaded
        # (its tokenizer initialises itself only if a fallback ever calls it); the caller's
        # canary check still proves the tokens
        table, total = cached
        seg = Segmenter(ACCELERATED, _table_route(table, math.log(total), _NATIVE), _TableFreq(table), finalseg.cut, tok)
        _use_native(seg)
        if seg.native is not None:
            return seg
    tok.initialize()
    seg = Segmenter(ACCELERATED, tok._route_from_rust, tok.FREQ, finalseg.cut, tok)
    if _NATIVE is not None:
        # the native table route is faster than jieba_next's own; taken when it routes the
        # canaries as jieba_next does (its HMM for unknown runs stays jieba_next's)
        native_route = _native_route(tok.FREQ, tok.total, _NATIVE)
        blocks = [b for t in canary_texts() for b in RE_HAN.split(t) if b and RE_HAN.match(b)]
        if all(_path(native_route(b), len(b)) == _path(tok._route_from_rust(b), len(b)) for b in blocks):
            seg._route = native_route
            _write_table_cache(module, native_route.table, tok.total)
    _use_native(seg)
    return seg


# ---------------------------------------------------------------------------------------
# The accelerated backend's dictionary table, cached: building jieba_next's FREQ dict (498k
# words and prefixes) costs about 0.8 CPU-s per process, while its native table, written once
# as bytes, loads in milliseconds. The cache is this build's alone (keyed by jieba_next's
# version, its dictionary file and the native module file) and is checked when read; a
# process that reads it never builds FREQ, and the canary checks still prove every token.
# STORYBENCH_ZH_CACHE=0 turns it off; STORYBENCH_CACHE_DIR moves it (default
# $XDG_CACHE_HOME/storybench, else ~/.cache/storybench).
_CACHE_FORMAT = 1


def _cache_path(module) -> str | None:
    if os.environ.get("STORYBENCH_ZH_CACHE", "1") == "0" or _NATIVE is None:
        return None
    from importlib.metadata import version

    try:
        parts = [ACCELERATED, version("jieba-next"), _CACHE_FORMAT]
        for path in (os.path.join(os.path.dirname(module.__file__), "dict.txt"), _NATIVE.__file__):
            st = os.stat(path)
            parts += [os.path.abspath(path), st.st_size, st.st_mtime_ns]
    except (OSError, AttributeError, ValueError):
        return None
    folder = os.environ.get("STORYBENCH_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "storybench")
    key = hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()[:24]
    return os.path.join(folder, f"zh-table-{key}.bin")


def _read_table_cache(module):
    """(native table, total) from the cache, or None (none yet, unusable, or turned off)."""
    path = _cache_path(module)
    if path is None or not os.path.exists(path):
        return None
    try:
        with open(path, "rb") as f:
            data = f.read()
        head_len = int.from_bytes(data[:4], "little")
        head = json.loads(data[4:4 + head_len].decode("utf-8"))
        body = memoryview(data)[4 + head_len:]
        if head.get("format") != _CACHE_FORMAT or zlib.crc32(body) != head.get("crc32"):
            raise ValueError("checksum")
        return _NATIVE.freq_table_from_bytes(body), head["total"]
    except Exception as exc:  # a bad cache is rebuilt, never trusted
        LOG.warning("ignoring the jieba table cache %s (%s); rebuilding it", path, exc)
        return None


def _write_table_cache(module, table, total) -> None:
    path = _cache_path(module)
    if path is None or not hasattr(_NATIVE, "freq_table_bytes"):
        return
    try:
        body = _NATIVE.freq_table_bytes(table)
        head = json.dumps({"format": _CACHE_FORMAT, "total": total, "crc32": zlib.crc32(body)}).encode("utf-8")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(len(head).to_bytes(4, "little") + head)
            f.write(body)
        os.replace(tmp, path)  # atomic: a reader sees the old file or the whole new one
        _prune_table_caches(os.path.dirname(path))
    except OSError as exc:  # a read-only or full disk only costs the next process its speed
        LOG.info("could not write the jieba table cache %s: %s", path, exc)


_CACHES_KEPT = 4  # table caches kept per folder (one per install or build; ~48 MB each)


def _prune_table_caches(folder: str) -> None:
    """Delete all but the newest _CACHES_KEPT table caches of `folder` (older builds')."""
    import glob

    found = sorted(glob.glob(os.path.join(folder, "zh-table-*.bin")), key=lambda p: (os.path.getmtime(p), p))
    for old in found[:-_CACHES_KEPT]:
        try:
            os.remove(old)
        except OSError:
            pass


def _table_route(table, logtotal: float, native):
    """The native route over a table (as `_native_route` gives it, without a FREQ dict)."""
    route_table = native.route_table

    def native_route(block: str) -> list[int]:
        return route_table(table, block, logtotal)

    native_route.table, native_route.logtotal = table, logtotal
    return native_route


class _TableFreq:
    """What the Segmenter asks of FREQ (`get(word)`: has the word a count?), answered by the
    native table when no FREQ dict was built."""

    def __init__(self, table):
        self.table = table

    def get(self, word: str, default=None):
        return _NATIVE.freq_has_count(self.table, word) or default


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


def canary_viterbi() -> dict:
    """{"texts": [...], "paths": [["B/nr", ...], ...]}: jieba 0.42.1's part-of-speech Viterbi
    path of every `_PosHMM.check_texts()` run ({} if the file is missing)."""
    path = os.path.join(_HERE, "zh_canary_viterbi.json")
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
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
