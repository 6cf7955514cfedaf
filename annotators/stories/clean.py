"""Clean one crawled story and filter it by language and length (LOT section 3, appendix).

LOT's annotators deleted "noisy words (e.g., links)" and all spaces, and worked on 50-500
word stories (paper section 3 "Story Filtering"; PEERS.md 1.3). Before cleaning,
`check_decoding` rejects text that is mostly U+0080-U+00FF characters (share above
`max_latin_share`) as `mojibake`: Chinese bytes read with a wrong Latin charset, which
cleaning would otherwise silently empty. In order:
1. e-mail addresses (also obfuscated: `name[at]host.com`, `name(at)host.com`,
   `name#host.com`), then URLs (scheme, `www.` and bare common-TLD domains) are deleted,
   matched on a width-folded copy so full-width forms (`ｈｔｔｐ：／／…`, `name＠host.com`)
   go too, and the empty brackets and doubled commas they leave are tidied;
2. `zh_clean.clean_chinese` deletes spaces near Chinese and normalises punctuation; ASCII
   double quotes in Chinese lines become “ ” pairs;
3. lines with no letter, digit or Han go, and so do boilerplate lines: short lines (at
   most `boilerplate_max_chars`) matching a site-furniture pattern (copyright, source or
   reprint notes, previous/next links, follow-us, submissions); a long paragraph that
   merely mentions such a word is kept;
4. filters: Han share of non-space characters below `min_han_ratio` -> `not_chinese`;
   fewer than `min_words` / more than `max_words` words (annotators.text.words: punctuation
   tokens are not words) -> `too_short` / `too_long`. Long texts are kept by default (no
   `max_words`; SenPos cuts windows from them); `paper_length_filter` applies LOT's 50-500.
"""

from __future__ import annotations

import dataclasses
import re

from annotators.core.outcome import Drop
from annotators.text.charset import latin_share
from annotators.text.runs import delete_in_runs, finditer_from_runs
from annotators.text.words import separable_prefix, zh_fewest_words, zh_most_words, zh_word_count
from annotators.text.zh_clean import HAN, clean_chinese, han_ratio

BOILERPLATE = (
    r"转载",
    r"版权",
    r"本文(由|来自|来源|整理)",
    r"(来源|出处)[:：]",
    r"原文(地址|链接)",
    r"上一篇",
    r"下一篇",
    r"点击(这里|查看|阅读|进入)",
    r"关注(我们|公众号|微信)",
    r"扫(码|一扫)",
    r"投稿",
    r"联系我们",
    r"责任编辑",
    r"免责声明",
    r"侵权",
    r"更多.{0,6}(故事|精彩|内容)",
    r"分享到",
    r"(?i)copyright",
    r"©",
    r"(?i)all rights reserved",
)

_TLDS = r"(?:com|cn|net|org|cc|info|top|xyz)"
_LOCAL_CHARS = r"A-Za-z0-9._%+\-"
_LOCAL = rf"[{_LOCAL_CHARS}]+"
_AT = r"(?:@|[ \t]*[\[(【{<][ \t]*at[ \t]*[\])】}>][ \t]*)"  # name@, name[at], name (at), name【at】
_DOT = r"(?:\.|[ \t]*[\[(【{<][ \t]*dot[ \t]*[\])】}>][ \t]*)"  # host.com, host[dot]com
# The local part is possessive (`++`): `_AT` never starts with one of its characters, so giving
# characters back can never help. `_EMAIL_AT_RUN` starts the first form only where a run of
# local-part characters starts; `find_emails` uses it so that a 1 MB run of letters is read
# once instead of once per position (quadratic: 64 KB took 64 s).
_EMAIL_FORMS = (
    rf"[{_LOCAL_CHARS}]++{_AT}[A-Za-z0-9\-]++(?:{_DOT}[A-Za-z0-9\-]+)*{_DOT}[A-Za-z]{{2,}}",
    # name#host.com ("replace # with @"): only a whole local part, not a URL's #fragment
    rf"(?<![A-Za-z0-9._%+\-/?&=#]){_LOCAL}#[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.{_TLDS}\b",
)
_EMAIL = re.compile("|".join(_EMAIL_FORMS), re.I)
_EMAIL_AT_RUN = re.compile(rf"(?<![{_LOCAL_CHARS}])(?:{_EMAIL_FORMS[0]})|{_EMAIL_FORMS[1]}", re.I)
_URL_CHARS = r"[A-Za-z0-9\-._~:/?#\[\]@!$&'*+,;=%]"
_URL = re.compile(
    rf"(?:https?|ftp)://{_URL_CHARS}+"
    rf"|www\.[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+(?:/{_URL_CHARS}*)?"
    rf"|(?<![A-Za-z0-9\-.@])[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.{_TLDS}\b(?:/{_URL_CHARS}*)?",
    re.I,
)
_EMPTY_BRACKETS = re.compile(r"[（(【\[「<《]\s*[）)】\]」>》]")
_REPEATED = re.compile(r"([，、；：])[，、；：]+")
_DANGLING = re.compile(r"(?<![，、；：])[，、；：]++(?=[。！？…])")  # linear on a long run of commas
_ELLIPSIS = re.compile(r"…+")
_LEADING = re.compile(r"^[，、；：。]+")
_SPACE_BEFORE = re.compile(r"(?<=[\u3000-\u303f\uff00-\uffef])\s+|\s+(?=[\u3000-\u303f\uff00-\uffef])")
_SPACE_RUN = re.compile(r"\s+")
_WIDE_PUNCT = re.compile(r"[\u3000-\u303f\uff00-\uffef]")
_HAN = re.compile(f"[{HAN}]")
_HAN_OR_ALNUM = re.compile(f"[{HAN}A-Za-z0-9]")


@dataclasses.dataclass(frozen=True)
class CleanConfig:
    """Cleaning and filter settings."""

    min_words: int = dataclasses.field(
        default=50,
        metadata={  # LOT appendix / PEERS.md 1.3
            "help": "fewest words a story may have (annotators.text.words; LOT: 50)",
            "min": 0,
        },
    )
    max_words: int = dataclasses.field(
        default=0,
        metadata={
            "help": "most words a story may have, 0 for no limit (the default: long texts are kept, "
            "pipelines.lot cuts SenPos windows from them); --paper-length-filter makes it 500",
            "min": 0,
        },
    )
    paper_length_filter: bool = dataclasses.field(
        default=False,
        metadata={  # LOT appendix / PEERS.md 1.3
            "help": "apply LOT's 50-500-word filter (the story pool of ClozeT, PlotCom and OutGen) "
            "instead of --min-words/--max-words"
        },
    )
    min_han_ratio: float = dataclasses.field(
        default=0.5,
        metadata={  # not in the paper
            "help": "smallest Han share of non-space characters: the 'mostly Chinese' language filter",
            "min": 0,
            "max": 1,
        },
    )
    boilerplate_max_chars: int = dataclasses.field(
        default=80,
        metadata={  # not in the paper
            "help": "longest line that can be boilerplate; longer lines are story text"
        },
    )
    max_latin_share: float = dataclasses.field(
        default=0.5,
        metadata={  # not in the paper
            "help": "largest U+0080-U+00FF share before a text is mojibake (mojibake ~1.0, Latin prose < 0.1)"
        },
    )
    boilerplate: tuple[str, ...] = BOILERPLATE


def is_boilerplate(line: str, config: CleanConfig) -> bool:
    return len(line) <= config.boilerplate_max_chars and any(re.search(p, line) for p in config.boilerplate)


_FOLD = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}  # full-width ASCII forms -> ASCII


def find_emails(text: str):
    """The matches `_EMAIL.finditer(text)` gives, in linear time (annotators.text.runs)."""
    return finditer_from_runs(_EMAIL, _EMAIL_AT_RUN, text)


def _remove_folded(finditer, text: str) -> str:
    """Delete the matches `finditer` finds on a width-folded copy of `text` (same length).

    A match does not end in full-width punctuation: `，` or `：` after a link is prose.
    """
    folded = text.translate(_FOLD)
    pieces, last = [], 0
    for match in finditer(folded):
        start, end = match.span()
        while end > start and text[end - 1] != folded[end - 1] and not folded[end - 1].isalnum():
            end -= 1
        pieces.append(text[last:start])
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


# Every e-mail and URL form needs a Latin letter once width-folded (a top-level domain,
# "www", a scheme): a text without one, folded or case-folded as the patterns match under
# re.I (which also takes "ſ", "K", "ı", "İ" for ASCII letters), has none to delete.
_LATIN = re.compile(r"[A-Za-z\uff21-\uff3a\uff41-\uff5a]", re.I)


def remove_emails(text: str) -> str:
    return _remove_folded(find_emails, text) if _LATIN.search(text) else text


def remove_urls(text: str) -> str:
    return _remove_folded(_URL.finditer, text) if _LATIN.search(text) else text


_CLOSING = re.compile(r"[）)】\]」>》]")  # every empty bracket pair ends in one
_DANGLING_END = re.compile(r"[，、；：][。！？…]")  # every dangling run ends in one


def tidy_removals(line: str) -> str:
    """Clear what deletions leave behind: empty brackets, doubled or dangling commas. (Each
    substitution runs only where a character its matches need is.)"""
    if _CLOSING.search(line):
        line = _EMPTY_BRACKETS.sub("", line)
    line = _REPEATED.sub(r"\1", line)
    if _DANGLING_END.search(line):
        line = _DANGLING.sub("", line)
    if "…" in line:
        line = _ELLIPSIS.sub("……", line)
    return _LEADING.sub("", delete_in_runs(_SPACE_BEFORE, line, _SPACE_RUN, _WIDE_PUNCT)).strip()


def pair_quotes(line: str) -> str:
    """ASCII double quotes in a Chinese line -> alternating “ and ”."""
    if '"' not in line or not _HAN.search(line):
        return line
    out, opening = [], True
    for ch in line:
        if ch == '"':
            out.append("“" if opening else "”")
            opening = not opening
        else:
            out.append(ch)
    return "".join(out)


def _clean_once(text: str, config: CleanConfig) -> str:
    lines = [pair_quotes(tidy_removals(remove_urls(remove_emails(line)))) for line in text.split("\n")]
    cleaned = clean_chinese("\n".join(lines))
    kept = [tidy_removals(line) for line in cleaned.split("\n")]
    return "\n".join(line for line in kept if _HAN_OR_ALNUM.search(line) and not is_boilerplate(line, config))


def clean_text(text: str, config: CleanConfig = CleanConfig()) -> str:
    """Steps 1-3 of the module docstring, repeated until nothing changes (at most 4 rounds).

    Boilerplate is judged on the cleaned line, so a line long only because of its URLs is
    still recognised; repeating makes cleaning idempotent when a deletion brings ASCII
    punctuation next to Chinese. Paragraphs stay one per line.
    """
    text = text.replace("\r\n", "\n")
    for _ in range(4):
        cleaned = _clean_once(text, config)
        if cleaned == text:
            break
        text = cleaned
    return text


def jieba_word_count(text: str) -> int:
    """Words by the shared definition (annotators.text.words): jieba tokens with a letter,
    digit or Han character; LOT counts story length in words (50-500, appendix)."""
    return zh_word_count(text)


def check_decoding(text: str, encoding: str | None = None, config: CleanConfig = CleanConfig()) -> Drop | None:
    """`mojibake` when most characters are Latin-1 letters/symbols (a wrong charset); else None."""
    share = latin_share(text)
    if share <= config.max_latin_share:
        return None
    read_as = f" as read with {encoding}" if encoding else ""
    return Drop(
        "mojibake",
        f"{share:.0%} of characters are U+0080-U+00FF{read_as} (> {config.max_latin_share:.0%}): wrong charset",
    )


_BY_PAPER = " (--paper-length-filter: LOT's 50-500-word stories)"
PAPER_WORDS = (50, 500)


def word_limits(config: CleanConfig) -> tuple[int, int]:
    """(fewest, most) words a kept story has; most = 0 is no limit."""
    return PAPER_WORDS if config.paper_length_filter else (config.min_words, config.max_words)


PREFIX_CHARS_PER_WORD = 3  # a prefix of 3 characters per word asked for usually holds enough


def check_story(text: str, config: CleanConfig = CleanConfig()) -> Drop | None:
    """Language, then length filter; None when the story is kept."""
    if not text:
        return Drop("empty_after_cleaning", "nothing left after removing boilerplate and links")
    ratio = han_ratio(text)
    if ratio < config.min_han_ratio:
        return Drop("not_chinese", f"han ratio {ratio:.2f} < {config.min_han_ratio}")
    low, high = word_limits(config)
    if not high or zh_most_words(text) <= high:  # it cannot be too long: enough words decides
        # enough words in a prefix that jieba cuts as it cuts the whole text is enough words
        prefix = separable_prefix(text, PREFIX_CHARS_PER_WORD * low) if low else None
        if prefix is not None and zh_fewest_words(prefix) >= low:
            return None
        if zh_fewest_words(text) >= low:
            return None  # within the limits whatever the HMM-on cut gives: it is not needed
    words = jieba_word_count(text)
    if words < low:
        return Drop("too_short", f"{words} words < {low}{_BY_PAPER if config.paper_length_filter else ''}")
    if high and words > high:
        return Drop(
            "too_long", f"{words} words > {high}{_BY_PAPER if config.paper_length_filter else ' (--max-words)'}"
        )
    return None


def single_line_title(title: str) -> str:
    """A title on one line, spaces near Chinese deleted, links and e-mails removed."""
    return clean_chinese(tidy_removals(remove_urls(remove_emails(title))), keep_paragraphs=False)
