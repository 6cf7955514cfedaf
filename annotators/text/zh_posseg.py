"""`jieba.posseg.lcut` (jieba 0.42.1, HMM on), with rjieba computing the route where it is jieba's.

posseg cuts each of its blocks (`[\u4e00-\u9fd5a-zA-Z0-9+#&._]+`) along jieba's best route
through the dictionary DAG, tags every route word of two or more characters from jieba's
dictionary, and sends each run of single characters that is not itself a dictionary word
through its part-of-speech HMM (Viterbi); every other character is its own pair, tagged `x`.

For a block of Han characters only, the route words are exactly the tokens of
`jieba.lcut(block, HMM=False)` (which joins nothing but ASCII letters and digits), and rjieba
gives those tokens. So `Tagger.tagged` cuts each stretch of text whose blocks hold only Han
characters with ONE `rjieba.cut(stretch, False)` call and walks its tokens; each jieba block
holding an ASCII letter or digit, one of `+#&._%-` or a CJK character jieba-rs counts as Han
and jieba does not (`zh_tokens.RE_POS_DIFFERS`) is cut by `jieba.posseg.lcut` itself. Both
cuts are block-local, so the pairs are `jieba.posseg.lcut(text)`'s.

The Viterbi for unknown runs runs in the optional C module `_jieba_hmm` (built by `make
setup`; see docs/DEVELOPING.md), else in jieba's own `jieba.posseg.viterbi`: the same pairs.
STORYBENCH_ZH_NATIVE=0 forces the Python Viterbi.
"""

from __future__ import annotations

import logging
import os
import re

LOG = logging.getLogger("storybench")
_MAX_CACHED = 200_000  # HMM results kept per process (unknown runs recur: names, places)
# jieba.posseg's patterns for an unknown run (re_han_detail, re_skip_detail, re_num, re_eng).
RE_HAN_DETAIL = re.compile("([\u4e00-\u9fd5]+)")
RE_SKIP_DETAIL = re.compile("([\\.0-9]+|[a-zA-Z0-9]+)")
RE_NUM = re.compile("[\\.0-9]+")
RE_ENG = re.compile("[a-zA-Z0-9]+")
RE_SPECIAL = re.compile("[+#&._%\\-]")


def native_module():
    """The `_jieba_hmm` C module, or None (not built, or STORYBENCH_ZH_NATIVE=0)."""
    if os.environ.get("STORYBENCH_ZH_NATIVE", "1") == "0":
        return None
    try:
        from annotators.text import _jieba_hmm
    except ImportError:
        return None
    return _jieba_hmm


def hmm_states(tables) -> list:
    """Every (position, tag) state of posseg's HMM tables, in Python's sorted order (the C
    module breaks ties to the larger state, as viterbi.py's max over (prob, state) does)."""
    char_state, start, trans, emit = tables
    return sorted(
        set(trans)
        | set(start)
        | set(emit)
        | {y for d in trans.values() for y in d}
        | {y for v in char_state.values() for y in v}
    )


def python_hmm_cut(text: str, tables) -> list[tuple[str, str]]:
    """posseg's `__cut` of a Han run in Python: jieba's Viterbi path grouped into words (B..E
    and S; an unfinished word at the end takes its first character's tag)."""
    from jieba import posseg

    path = posseg.viterbi(text, *tables)[1]
    out, begin, nexti = [], 0, 0
    for i, char in enumerate(text):
        state, tag = path[i]
        if state == "B":
            begin = i
        elif state == "E":
            out.append((text[begin : i + 1], tag))
            nexti = i + 1
        elif state == "S":
            out.append((char, tag))
            nexti = i + 1
    if nexti < len(text):
        out.append((text[nexti:], path[nexti][1]))
    return out


class Tagger:
    """jieba.posseg's tables (word tags, FREQ, HMM) and the tagged cut over rjieba's route."""

    def __init__(self, route_cut, native=None):
        import jieba
        from jieba import posseg

        jieba.dt.check_initialized()
        self._route_cut = route_cut  # rjieba.cut
        self.tags = posseg.dt.word_tag_tab
        self.freq = jieba.dt.FREQ
        self.tables = (posseg.char_state_tab_P, posseg.start_P, posseg.trans_P, posseg.emit_P)
        self._model = native.posseg_model(hmm_states(self.tables), *self.tables) if native is not None else None
        self._native = native
        self.runs: dict[str, tuple[tuple[str, str], ...]] = {}  # unknown run -> its pairs (`detail`)

    def hmm_cut(self, run: str) -> list[tuple[str, str]]:
        """posseg's HMM pairs of a run of Han characters."""
        return (
            self._native.posseg_cut(self._model, run) if self._model is not None else python_hmm_cut(run, self.tables)
        )

    def detail(self, run: str) -> tuple[tuple[str, str], ...]:
        """posseg's `__cut_detail` of an unknown run (cached): Han parts through the HMM, the
        rest as numbers (m), letters and digits (eng) or other characters (x)."""
        got = self.runs.get(run)
        if got is None:
            if len(self.runs) > _MAX_CACHED:
                self.runs.clear()
            pairs: list[tuple[str, str]] = []
            for blk in RE_HAN_DETAIL.split(run):
                if RE_HAN_DETAIL.match(blk):
                    pairs.extend(self.hmm_cut(blk))
                    continue
                for x in RE_SKIP_DETAIL.split(blk):
                    if x:
                        pairs.append((x, "m" if RE_NUM.match(x) else "eng" if RE_ENG.match(x) else "x"))
            got = self.runs[run] = tuple(pairs)
        return got

    def run(self, buf: str, out: list) -> None:
        """A run of single-character route steps, as posseg's `__cut_DAG` flushes it."""
        tags = self.tags
        if len(buf) == 1:
            out.append((buf, tags.get(buf, "x")))
        elif not self.freq.get(buf):
            out.extend(self.detail(buf))
        else:
            out.extend((c, tags.get(c, "x")) for c in buf)

    def walk(self, tokens: list[str], out: list) -> None:
        """posseg's pairs of a stretch from its HMM-off tokens, when its blocks hold Han only:
        a single Han character is one route step; any other single character (or "\\r\\n")
        lies outside posseg's blocks (tag x) and ends the block; longer tokens are words."""
        tags, buf = self.tags, ""
        for t in tokens:
            if len(t) == 1 and "\u4e00" <= t <= "\u9fd5":
                buf += t
                continue
            if buf:
                self.run(buf, out)
                buf = ""
            out.append((t, "x" if len(t) == 1 or t == "\r\n" else tags.get(t, "x")))
        if buf:
            self.run(buf, out)

    def dag_block(self, blk: str, out: list) -> None:
        """A posseg block holding ASCII letters or digits: jieba's own route (the public
        `Tokenizer.get_DAG` and `calc`), walked as posseg's `__cut_DAG` walks it."""
        import jieba

        route: dict = {}
        jieba.dt.calc(blk, jieba.dt.get_DAG(blk), route)
        x, n, buf = 0, len(blk), ""
        while x < n:
            y = route[x][1] + 1
            if y - x == 1:
                buf += blk[x]
            else:
                if buf:
                    self.run(buf, out)
                    buf = ""
                out.append((blk[x:y], self.tags.get(blk[x:y], "x")))
            x = y
        if buf:
            self.run(buf, out)

    def tagged(self, text: str) -> list[tuple[str, str]]:
        """`[(w.word, w.flag) for w in jieba.posseg.lcut(text)]`."""
        from jieba import posseg

        from annotators.text.zh_tokens import BLOCK_CHAR, RE_POS_DIFFERS, spans

        out: list[tuple[str, str]] = []
        for start, end, same in spans(text, RE_POS_DIFFERS):
            piece = text[start:end]
            if same:
                self.walk(self._route_cut(piece, False), out)
            elif BLOCK_CHAR.match(piece) and not RE_SPECIAL.search(piece):  # letters, digits, Han
                self.dag_block(piece, out)
            else:
                out.extend((p.word, p.flag) for p in posseg.lcut(piece))
        return out
