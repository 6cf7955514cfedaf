"""jieba backends: the accelerated one is used only when it splits like the reference."""
from __future__ import annotations

import json
import logging

import pytest

from annotators.text import zh_tokens
from conftest import shared_path


class _Shifted:
    """A fake accelerated tokenizer that splits one canary text differently."""

    def __init__(self, reference):
        self.reference = reference

    def lcut(self, text, HMM=True):
        words = self.reference.lcut(text, HMM=HMM)
        return ["".join(words[:2])] + words[2:] if "诸葛亮" in text else words


def test_reference_backend_is_always_jieba():
    assert zh_tokens.resolve("jieba") == "jieba"
    assert zh_tokens.backend_info("jieba")["version"].startswith("0.42")


def test_a_backend_that_differs_on_a_canary_falls_back_to_jieba(monkeypatch, caplog):
    reference = zh_tokens._tokenizer("jieba")
    monkeypatch.setattr(zh_tokens, "_RESOLVED", {})
    monkeypatch.setattr(zh_tokens, "_tokenizer", lambda name: reference if name == "jieba" else _Shifted(reference))
    assert zh_tokens.self_check(_Shifted(reference), reference).startswith("HMM=True")
    with caplog.at_level(logging.WARNING, logger="storybench"):
        assert zh_tokens.resolve("jieba_next") == "jieba"
    assert "splits a canary text differently" in caplog.text


def test_a_missing_backend_falls_back_to_jieba(monkeypatch):
    def missing(name):
        if name == "jieba_next":
            raise ImportError("no jieba_next")
        return zh_tokens._TOKENIZERS.get(name) or zh_tokens._new_tokenizer(name)

    monkeypatch.setattr(zh_tokens, "_RESOLVED", {})
    monkeypatch.setattr(zh_tokens, "_tokenizer", missing)
    assert zh_tokens.resolve("auto") == "jieba"


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="jieba_next"):
        zh_tokens.configure("pkuseg")


def test_accelerated_backend_gives_identical_tokens_on_real_stories():
    pytest.importorskip("jieba_next")
    assert zh_tokens.resolve("auto") == "jieba_next"
    path = shared_path("lot", "outgen_val_sample.jsonl")
    stories = [json.loads(line)["story"] for line in path.read_text(encoding="utf-8").splitlines()]
    fast, reference = zh_tokens.load("jieba_next"), zh_tokens.load("jieba")
    for hmm in (True, False):
        assert [fast.lcut(s, HMM=hmm) for s in stories] == [reference.lcut(s, HMM=hmm) for s in stories]
