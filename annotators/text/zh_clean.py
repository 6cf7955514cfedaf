"""Chinese text cleaning (LOT section 3 and its appendix: "all spaces are deleted").

`clean_chinese` deletes whitespace next to Chinese characters or full-width punctuation,
turns ASCII punctuation used in Chinese prose into its full-width form, folds full-width
letters and digits to ASCII, and makes ellipses uniform ("..." / "。。。" -> "……").
Spaces between two Latin words survive ("Harry Potter"); decimals ("3.5") are untouched.
"""

from __future__ import annotations

import re
import sys
import unicodedata

# Han characters: the CJK Unified Ideographs block and Extension A, the compatibility
# ideographs, and beyond the BMP Extensions B-F and I (U+20000-U+2EE5F, but for the unassigned
# U+2A6E0-U+2A6FF), the compatibility supplement and Extensions G-H (U+30000-U+323AF).
# jieba's own blocks ([\u4e00-\u9fd5], annotators.text.zh_tokens) are not this: it cuts every
# other character as a token of its own, and the cut stays jieba's.
HAN_BMP = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
HAN_SUPPLEMENTARY = r"\U00020000-\U0002a6df\U0002a700-\U0002ee5f\U0002f800-\U0002fa1f\U00030000-\U000323af"
HAN = HAN_BMP + HAN_SUPPLEMENTARY
_HAN_RE = re.compile(f"[{HAN}]")
_HAN_RUN = re.compile(f"[{HAN}]+")
_SPACE_RUN = re.compile(r"\s+")
# Full-width punctuation used in Chinese prose (after normalisation).
ZH_PUNCT = "，。！？；：、“”‘’（）《》〈〉「」『』【】…—～·"
_WIDE = f"{HAN}{re.escape(ZH_PUNCT)}"
# The second form starts only where a run of spaces starts and never gives spaces back (the
# wide characters are not spaces): linear on a long run of spaces (issue 28).
_SPACE_NEAR_WIDE = re.compile(
    f"(?<=[{_WIDE}])[ \\t\\u3000\\u00a0]+|(?<![ \\t\\u3000\\u00a0])[ \\t\\u3000\\u00a0]++(?=[{_WIDE}])"
)
_ASCII_TO_WIDE = {",": "，", "!": "！", "?": "？", ";": "；", ":": "：", "(": "（", ")": "）"}
_ASCII_NEAR_HAN = re.compile(f"(?<=[{HAN}])[,!?;:()]|[,!?;:()](?=[{HAN}])")
_ELLIPSIS = re.compile(r"\.{3,}|。{3,}|…+")
_DOT_AFTER_HAN = re.compile(f"(?<=[{HAN}])\\.(?!\\d)")
_MANY_BLANK_LINES = re.compile(r"\n\s*\n+")
_DASHES = re.compile(r"[－—]{2,}|-{2,}")


def python_han_count(text: str) -> int:
    """Number of Chinese (Han) characters in `text`: the reference `han_count` is tested against."""
    return sum(map(len, _HAN_RUN.findall(text)))


# han_count reads the high byte of each UTF-16 code unit: 0x34-0x9F (U+3400-U+9FFF) and
# 0xF9-0xFA are Han but for U+4DC0-U+4DFF (Yijing hexagrams, high byte 0x4D), counted apart;
# a character beyond the BMP is two surrogates (high bytes 0xD8-0xDF, counted as nothing
# here): a text holding one (more code units than characters) has those counted apart
_HAN_HIGH_BYTE = bytes(1 if 0x34 <= b <= 0x9F or 0xF9 <= b <= 0xFA else 0 for b in range(256))
_FIRST_HIGH_BYTE = 3 if sys.byteorder == "little" else 2  # "utf-16" starts with a 2-byte BOM
_HEXAGRAM = re.compile("[\u4dc0-\u4dff]")
_HAN_SUPPLEMENTARY_RUN = re.compile(f"[{HAN_SUPPLEMENTARY}]+")


def han_count(text: str) -> int:
    """Number of Chinese (Han) characters in `text` (`python_han_count`, 3-4x faster on a
    sentence: SenPos and sentence merging count every sentence)."""
    if text.isascii():
        return 0
    high = text.encode("utf-16", "surrogatepass")[_FIRST_HIGH_BYTE::2]
    count = high.translate(_HAN_HIGH_BYTE).count(1)
    if 0x4D in high:
        count -= len(_HEXAGRAM.findall(text))
    if len(high) > len(text):
        count += sum(map(len, _HAN_SUPPLEMENTARY_RUN.findall(text)))
    return count


def han_ratio(text: str) -> float:
    """Share of Han characters among the non-space characters (0.0 for empty text)."""
    non_space = len(text) - sum(map(len, _SPACE_RUN.findall(text)))
    return han_count(text) / non_space if non_space else 0.0


# full-width digits and letters -> ASCII (U+FF10-FF19, FF21-FF3A, FF41-FF5A); nothing else
_WIDTH_FOLD = {
    code: code - 0xFEE0
    for lo, hi in ((0xFF10, 0xFF19), (0xFF21, 0xFF3A), (0xFF41, 0xFF5A))
    for code in range(lo, hi + 1)
}


_WIDE_ALNUM = re.compile("[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]")
_ZERO_WIDTH = re.compile("[\u200b-\u200d\ufeff]")
_SPACE_OR_TAB = re.compile("[ \t\u3000\u00a0]")
_DOUBLE_SPACE = re.compile(r"[ \t]{2,}")


def _fold_width(text: str) -> str:
    """Full-width ASCII letters/digits -> ASCII; leaves Chinese punctuation alone."""
    return text.translate(_WIDTH_FOLD) if _WIDE_ALNUM.search(text) else text


# Each substitution below runs only on text holding a character every one of its matches
# needs (a scan for one character class is several times cheaper than trying a pattern with
# a look-behind at every position); the result is the substitution's.
def _has_any(text: str, chars: str) -> bool:
    return any(c in text for c in chars)


def normalize_punctuation(text: str) -> str:
    """ASCII punctuation beside Chinese -> full-width; ellipses -> "……"; dash runs -> "——"."""
    if _has_any(text, ",!?;:()"):
        text = _ASCII_NEAR_HAN.sub(lambda m: _ASCII_TO_WIDE[m.group(0)], text)
    if "..." in text or "。。。" in text or "…" in text:
        text = _ELLIPSIS.sub("……", text)
    if "." in text:
        text = _DOT_AFTER_HAN.sub("。", text)
    return _DASHES.sub("——", text) if _has_any(text, "-－—") else text


def _clean_line(line: str) -> str:
    if _SPACE_OR_TAB.search(line) is None:  # no space for _SPACE_NEAR_WIDE, before or after
        return normalize_punctuation(line).strip()
    return _SPACE_NEAR_WIDE.sub("", normalize_punctuation(_SPACE_NEAR_WIDE.sub("", line))).strip()


def clean_chinese(text: str, *, keep_paragraphs: bool = True) -> str:
    """Normalise a Chinese story: NFC, width folding, punctuation, no spaces near Chinese.

    Paragraph breaks are kept as single newlines when `keep_paragraphs`, else removed.
    Known-bad inputs guarded against: CRLF, NBSP/ideographic spaces, zero-width characters.
    """
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
    text = _fold_width(_ZERO_WIDTH.sub("", text) if _ZERO_WIDTH.search(text) else text)
    # Spaces go before and after punctuation is normalised: "说 :" -> "说:" -> "说："
    lines = [_clean_line(line) for line in text.split("\n")]
    lines = [_DOUBLE_SPACE.sub(" ", line) if "  " in line or "\t" in line else line for line in lines if line]
    return ("\n" if keep_paragraphs else "").join(lines)
