"""Chinese text cleaning (LOT section 3 and its appendix: "all spaces are deleted").

`clean_chinese` deletes whitespace next to Chinese characters or full-width punctuation,
turns ASCII punctuation used in Chinese prose into its full-width form, folds full-width
letters and digits to ASCII, and makes ellipses uniform ("..." / "。。。" -> "……").
Spaces between two Latin words survive ("Harry Potter"); decimals ("3.5") are untouched.
"""
from __future__ import annotations

import os
import re
import unicodedata

HAN = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HAN_RE = re.compile(f"[{HAN}]")
_HAN_RUN = re.compile(f"[{HAN}]+")
_SPACE_RUN = re.compile(r"\s+")
# Full-width punctuation used in Chinese prose (after normalisation).
ZH_PUNCT = "，。！？；：、“”‘’（）《》〈〉「」『』【】…—～·"
_WIDE = f"{HAN}{re.escape(ZH_PUNCT)}"
# The second form starts only where a run of spaces starts and never gives spaces back (the
# wide characters are not spaces): linear on a long run of spaces (issue 28).
_SPACE_NEAR_WIDE = re.compile(f"(?<=[{_WIDE}])[ \\t\\u3000\\u00a0]+"
                              f"|(?<![ \\t\\u3000\\u00a0])[ \\t\\u3000\\u00a0]++(?=[{_WIDE}])")
_ASCII_TO_WIDE = {",": "，", "!": "！", "?": "？", ";": "；", ":": "：", "(": "（", ")": "）"}
_ASCII_NEAR_HAN = re.compile(f"(?<=[{HAN}])[,!?;:()]|[,!?;:()](?=[{HAN}])")
_ELLIPSIS = re.compile(r"\.{3,}|。{3,}|…+")
_DOT_AFTER_HAN = re.compile(f"(?<=[{HAN}])\\.(?!\\d)")
_MANY_BLANK_LINES = re.compile(r"\n\s*\n+")
_DASHES = re.compile(r"[－—]{2,}|-{2,}")


def python_han_count(text: str) -> int:
    """Number of Chinese (Han) characters in `text`."""
    return sum(map(len, _HAN_RUN.findall(text)))


def _native_han_count():
    """The native module's `han_count` (one C scan, no match objects) once it counts exactly
    as `python_han_count` on the ranges' edges; else None (not built, or STORYBENCH_ZH_NATIVE=0)."""
    if os.environ.get("STORYBENCH_ZH_NATIVE", "1") == "0":
        return None
    try:
        from annotators.text._zhcut import han_count as native
    except ImportError:
        return None
    edges = [chr(c) for lo, hi in ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF))
             for c in (lo - 1, lo, hi, hi + 1)]
    probes = ["", "abc", "é", "一个星期天，小狗熊。", "".join(edges), "\U00020000\U0001f600中", *edges]
    return native if all(native(t) == python_han_count(t) for t in probes) else None


# Number of Chinese (Han) characters in a text: the native count when built and proven equal
# (about 10x faster; SenPos and sentence merging call it per sentence), else python_han_count.
han_count = _native_han_count() or python_han_count


def han_ratio(text: str) -> float:
    """Share of Han characters among the non-space characters (0.0 for empty text)."""
    non_space = len(text) - sum(map(len, _SPACE_RUN.findall(text)))
    return han_count(text) / non_space if non_space else 0.0


# full-width digits and letters -> ASCII (U+FF10-FF19, FF21-FF3A, FF41-FF5A); nothing else
_WIDTH_FOLD = {code: code - 0xFEE0 for lo, hi in ((0xFF10, 0xFF19), (0xFF21, 0xFF3A), (0xFF41, 0xFF5A))
               for code in range(lo, hi + 1)}


def _fold_width(text: str) -> str:
    """Full-width ASCII letters/digits -> ASCII; leaves Chinese punctuation alone."""
    return text.translate(_WIDTH_FOLD)


def normalize_punctuation(text: str) -> str:
    """ASCII punctuation beside Chinese -> full-width; ellipses -> "……"; dash runs -> "——"."""
    text = _ASCII_NEAR_HAN.sub(lambda m: _ASCII_TO_WIDE[m.group(0)], text)
    text = _ELLIPSIS.sub("……", text)
    text = _DOT_AFTER_HAN.sub("。", text)
    return _DASHES.sub("——", text)


def clean_chinese(text: str, *, keep_paragraphs: bool = True) -> str:
    """Normalise a Chinese story: NFC, width folding, punctuation, no spaces near Chinese.

    Paragraph breaks are kept as single newlines when `keep_paragraphs`, else removed.
    Known-bad inputs guarded against: CRLF, NBSP/ideographic spaces, zero-width characters.
    """
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
    text = _fold_width(re.sub("[\u200b-\u200d\ufeff]", "", text))
    # Spaces go before and after punctuation is normalised: "说 :" -> "说:" -> "说："
    lines = [_SPACE_NEAR_WIDE.sub("", normalize_punctuation(_SPACE_NEAR_WIDE.sub("", line))).strip()
             for line in text.split("\n")]
    lines = [re.sub(r"[ \t]{2,}", " ", line) for line in lines if line]
    return ("\n" if keep_paragraphs else "").join(lines)
