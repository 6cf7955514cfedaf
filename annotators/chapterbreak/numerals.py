"""Chapter numbers in arabic digits, roman numerals or English words, and their rewriting.

ChapterBreak (paper section 2) rewrites every negative's chapter index to the gold's ("if the
gold suffix begins with 'Chapter III', the chapter indices of all negatives is set to
'Chapter III'"). Headings must therefore be parsed into (value, literal numeral), and a
negative's literal replaced by the gold's literal, keeping the gold's style (roman stays
roman, arabic stays arabic, words stay words).
"""

from __future__ import annotations

import re

_UNITS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_ORD_UNITS = [
    "zeroth",
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
]
_ORD_TENS = [
    "",
    "",
    "twentieth",
    "thirtieth",
    "fortieth",
    "fiftieth",
    "sixtieth",
    "seventieth",
    "eightieth",
    "ninetieth",
]

WORD_VALUES: dict[str, int] = {}
for _n in range(1, 100):
    _t, _u = divmod(_n, 10)
    if _n < 20:
        WORD_VALUES[_UNITS[_n]], WORD_VALUES[_ORD_UNITS[_n]] = _n, _n
    elif _u == 0:
        WORD_VALUES[_TENS[_t]], WORD_VALUES[_ORD_TENS[_t]] = _n, _n
    else:
        for sep in ("-", " "):
            WORD_VALUES[f"{_TENS[_t]}{sep}{_UNITS[_u]}"] = _n
            WORD_VALUES[f"{_TENS[_t]}{sep}{_ORD_UNITS[_u]}"] = _n
WORD_VALUES.update({"one hundred": 100, "hundred": 100, "hundredth": 100, "one hundredth": 100})

_WORDS_ALT = "|".join(sorted((re.escape(w) for w in WORD_VALUES), key=len, reverse=True))
# A numeral: arabic digits, a roman numeral, or number words (optionally "the first").
NUMERAL = rf"(?:\d{{1,4}}|[IVXLCDM]+|(?:the\s+)?(?:{_WORDS_ALT}))"
_ROMAN = re.compile(r"^[IVXLCDM]+$", re.I)
_ROMAN_VALUES = [
    (1000, "M"),
    (900, "CM"),
    (500, "D"),
    (400, "CD"),
    (100, "C"),
    (90, "XC"),
    (50, "L"),
    (40, "XL"),
    (10, "X"),
    (9, "IX"),
    (5, "V"),
    (4, "IV"),
    (1, "I"),
]


def int_to_roman(n: int) -> str:
    out = []
    for value, letters in _ROMAN_VALUES:
        count, n = divmod(n, value)
        out.append(letters * count)
    return "".join(out)


def roman_to_int(text: str) -> int | None:
    """Value of a canonical roman numeral (any case), else None ("IIII", "VX" are not)."""
    if not text or not _ROMAN.match(text):
        return None
    upper, total, i = text.upper(), 0, 0
    for value, letters in _ROMAN_VALUES:
        while upper.startswith(letters, i):
            total, i = total + value, i + len(letters)
    if i != len(upper) or total == 0 or int_to_roman(total) != upper:
        return None
    return total


def numeral_value(literal: str) -> tuple[int, str] | None:
    """(value, style) of a numeral literal; style is arabic | roman | word. None if invalid."""
    text = literal.strip()
    if text.isdigit():
        value = int(text)
        return (value, "arabic") if 0 < value < 10000 else None
    roman = roman_to_int(text)
    if roman is not None:
        return roman, "roman"
    words = re.sub(r"\s+", " ", text.lower())
    words = words[4:] if words.startswith("the ") else words
    if words in WORD_VALUES:
        return WORD_VALUES[words], "word"
    return None
