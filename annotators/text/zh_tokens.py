"""jieba word tokenising (precise mode), loaded once per process, with an optional faster backend.

Backends give the same tokens or are not used:
- `jieba` (0.42.1): the reference, always installed.
- `jieba_next` (the `fast` extra, a Rust-accelerated fork of jieba_fast): used only after a
  start-up self-check proves it splits every canary text (`zh_canary.txt`) exactly like
  jieba, with HMM on and off; otherwise a warning and the reference.

`auto` (the default) picks `jieba_next` when it is installed and passes, else `jieba`. The
dictionary load (~1 s) happens on first use or in `load()`, which Beam DoFns call from
`setup()`; never at import time. `jieba.enable_paddle()` is never called (it tries to
pip-install at run time). Part-of-speech tagging always uses the reference (the accelerated
tagger differs).
"""
from __future__ import annotations

import importlib
import logging
import os
import threading

LOG = logging.getLogger("storybench")
REFERENCE = "jieba"
ACCELERATED = "jieba_next"
BACKENDS = ("auto", REFERENCE, ACCELERATED)
_LOCK = threading.Lock()
_TOKENIZERS: dict[str, object] = {}
_RESOLVED: dict[str, str] = {}
_DEFAULT = {"backend": os.environ.get("STORYBENCH_ZH_BACKEND", "auto")}


def configure(backend: str) -> None:
    """Set this process's default backend (`auto`, `jieba` or `jieba_next`)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown jieba backend {backend!r}; choose one of {BACKENDS}")
    _DEFAULT["backend"] = backend


def _new_tokenizer(name: str):
    module = importlib.import_module(name)
    module.setLogLevel(logging.WARNING)
    tok = module.Tokenizer()
    tok.initialize()
    return tok


def _tokenizer(name: str):
    if name not in _TOKENIZERS:
        with _LOCK:
            if name not in _TOKENIZERS:
                _TOKENIZERS[name] = _new_tokenizer(name)
    return _TOKENIZERS[name]


def canary_texts() -> list[str]:
    path = os.path.join(os.path.dirname(__file__), "zh_canary.txt")
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f if line.strip() and not line.startswith("#")]


def self_check(candidate, reference) -> str | None:
    """None when `candidate` tokenises every canary text like `reference`, else the first difference."""
    for text in canary_texts():
        for hmm in (True, False):
            if candidate.lcut(text, HMM=hmm) != reference.lcut(text, HMM=hmm):
                return f"HMM={hmm}: {text[:40]!r}"
    return None


def resolve(backend: str | None = None) -> str:
    """The backend `backend` (default: the configured one) stands for in this process."""
    backend = backend or _DEFAULT["backend"]
    if backend == REFERENCE:
        return REFERENCE
    if backend not in _RESOLVED:
        _RESOLVED[backend] = _check_accelerated(required=backend == ACCELERATED)
    return _RESOLVED[backend]


def _check_accelerated(*, required: bool) -> str:
    try:
        candidate = _tokenizer(ACCELERATED)
    except ImportError:
        if required:
            LOG.warning("jieba_next is not installed (pip install 'storybench[fast]'); using jieba")
        return REFERENCE
    problem = self_check(candidate, _tokenizer(REFERENCE))
    if problem:
        LOG.warning("jieba_next splits a canary text differently from jieba (%s); using jieba", problem)
        return REFERENCE
    return ACCELERATED


def backend_info(backend: str | None = None) -> dict:
    """{"backend", "version"} of what `backend` resolves to, for stats.json and cards."""
    from importlib.metadata import version

    name = resolve(backend)
    return {"backend": name, "version": version(name.replace("_", "-"))}


def load(backend: str | None = None):
    """The process-wide initialised tokenizer (`lcut`, `tokenize`) of the resolved backend."""
    return _tokenizer(resolve(backend))


def words(text: str) -> list[str]:
    """jieba precise-mode tokens of `text`, HMM on, whitespace tokens removed."""
    return [t for t in load().lcut(text, HMM=True) if t.strip()]
