"""jieba word tokenising (precise mode, HMM on), loaded once per process.

The dictionary load (~1 s) happens on first use or in `load()`, which Beam DoFns call
from `setup()`; never at import time. `jieba.enable_paddle()` is never called (it tries
to pip-install at run time).
"""
from __future__ import annotations

import logging
import threading

_LOCK = threading.Lock()
_TOKENIZER = None


def load():
    """Return the process-wide initialised `jieba.Tokenizer`."""
    global _TOKENIZER
    if _TOKENIZER is None:
        with _LOCK:
            if _TOKENIZER is None:
                import jieba

                jieba.setLogLevel(logging.WARNING)
                tok = jieba.Tokenizer()
                tok.initialize()
                _TOKENIZER = tok
    return _TOKENIZER


def words(text: str) -> list[str]:
    """jieba precise-mode tokens of `text`, HMM on, whitespace tokens removed."""
    return [t for t in load().lcut(text, HMM=True) if t.strip()]


def word_count(text: str) -> int:
    return len(words(text))
