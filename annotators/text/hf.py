"""Subword tokens of the evaluated model: a Hugging Face `tokenizer.json`, read offline.

`hf:PATH` (PATH a `tokenizer.json` file or a folder holding one) loads the file with the
`tokenizers` library (Rust); `gpt2:DIR` builds the same library's byte-level BPE from GPT-2's
own `vocab.json` + `merges.txt` (what the README's conversion snippet writes to a file).
Nothing is downloaded. Texts are encoded without special tokens, truncation or padding;
spans are the library's character offsets, one per token (the byte pieces of a character
that has no token of its own each span the whole character), so `count` is the number of
token ids. A cut at token offsets can re-encode to other tokens (a word cut between two of
its pieces, a space a tokenizer prepends), so cuts are checked by encoding the cut text
(`context_free = False`, annotators.text.cuts).

The name written to rows and cards is `hf:<model type>:<sha256 prefix>` of the tokenizer's
canonical JSON (`Tokenizer.to_str()`): the same tokenizer gives the same name whether it is
read from a file, a folder or GPT-2's two files, wherever they are.
"""

from __future__ import annotations

import hashlib
import json
import os

from annotators.text.tokenizers import SpanTokenizer

FILE = "tokenizer.json"


class HfTokenizer(SpanTokenizer):
    """A `tokenizers.Tokenizer` behind the shared interface (spans, counts, verified cuts)."""

    context_free = False

    def __init__(self, tokenizer):
        tokenizer.no_truncation()  # a tokenizer.json may carry a model's max length or padding
        tokenizer.no_padding()
        self._tok = tokenizer
        canonical = tokenizer.to_str()
        kind = json.loads(canonical).get("model", {}).get("type") or "model"
        self.name = f"hf:{kind}:{hashlib.sha256(canonical.encode('utf-8')).hexdigest()[:12]}"

    def spans(self, text: str) -> list[tuple[int, int]]:
        return list(self._tok.encode(text, add_special_tokens=False).offsets)

    def count(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False).ids)

    def counts(self, texts: list[str]) -> list[int]:
        """Token counts of many texts in one batch (the library's threads)."""
        if not texts:
            return []
        return [len(e.ids) for e in self._tok.encode_batch(list(texts), add_special_tokens=False)]

    def tokens_many(self, texts: list[str]) -> list[list[str]]:
        """Each text's tokens (its slices at the token offsets), encoded in one batch."""
        if not texts:
            return []
        encoded = self._tok.encode_batch(list(texts), add_special_tokens=False)
        return [[t[s:e] for s, e in enc.offsets] for t, enc in zip(texts, encoded)]

    def window_spans(self, text: str, n: int) -> list[tuple[int, int]]:
        """Spans of a leading window of `text` long enough to hold more than `n` tokens (all of
        it when shorter): a head needs only the start of a long chapter."""
        size = 8 * n + 256
        while size < len(text):
            spans = self.spans(text[:size])
            if len(spans) > n + 1:
                return spans
            size *= 4
        return self.spans(text)


def tokenizer_file(path: str) -> str:
    """The `tokenizer.json` that PATH names (the file, or the one in the folder)."""
    if os.path.isdir(path):
        inner = os.path.join(path, FILE)
        if not os.path.isfile(inner):
            raise ValueError(f"hf:{path}: the folder holds no {FILE}")
        return inner
    if not os.path.isfile(path):
        raise ValueError(f"hf:{path}: no such file or folder (give a {FILE} or a folder holding one)")
    return path


def load_hf(path: str) -> HfTokenizer:
    """`hf:PATH`: a tokenizer.json file or a folder holding one; ValueError saying what is wrong."""
    from tokenizers import Tokenizer

    file = tokenizer_file(path)
    try:
        with open(file, encoding="utf-8") as f:
            text = f.read()
        return HfTokenizer(Tokenizer.from_str(text))
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"hf:{path}: cannot read {file}: {exc}") from None
    except Exception as exc:  # the library's own parse error (a Rust serde message)
        raise ValueError(f"hf:{path}: not a tokenizers tokenizer.json ({exc})") from None


def gpt2_tokenizer(folder: str):
    """GPT-2's byte-level BPE from its `vocab.json` + `merges.txt`, built with the library's
    own API (the README's conversion snippet)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    vocab, merges = (os.path.join(folder, f) for f in ("vocab.json", "merges.txt"))
    if not (os.path.isfile(vocab) and os.path.isfile(merges)):
        raise ValueError(f"gpt2:{folder}: no GPT-2 vocabulary (vocab.json + merges.txt) in the folder")
    try:
        tok = Tokenizer(models.BPE.from_file(vocab, merges))
    except Exception as exc:
        raise ValueError(f"gpt2:{folder}: unreadable vocab.json/merges.txt ({exc})") from None
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return tok


def load_gpt2(folder: str) -> HfTokenizer:
    """`gpt2:DIR`, an alias of `hf:` on the tokenizer `gpt2_tokenizer` builds."""
    return HfTokenizer(gpt2_tokenizer(folder))
