"""Decode a fetched page or a story dump to text (SPEC: GBK/GB18030/Big5/UTF-8 sources).

Chinese story sites often serve GBK with no HTTP charset, declare it only in a <meta>, or
declare nothing. The evidence is tried in WHATWG order: byte-order mark, the HTTP
`Content-Type` charset, a <meta> charset in the first 4 KiB, then detection. A declared
charset that does not decode the bytes strictly is ignored (sites lie), and the next piece
of evidence is tried. A declared single-byte Latin charset (ISO-8859-1, Latin-1,
windows-1252, US-ASCII) is weak evidence: cp1252/Latin-1 decode almost any bytes, and many
Chinese servers send `charset=ISO-8859-1` by default. So when the bytes are not all ASCII,
the later evidence (a non-Latin <meta> charset, then detection) is tried too, and the
first strict decode that is UTF-8 or whose `common_score` beats the Latin text's by at
least `LATIN_MARGIN` (plausible Chinese; Latin text scores 0) is used instead; otherwise
the Latin charset stands. Detection tries strict UTF-8 first; GB18030 and Big5 both accept
most double-byte text, so each candidate is scored by how many of the decoded characters
are among the most frequent Chinese characters (both scripts): the right codec gives
ordinary prose, the wrong one rare characters. GBK/GB2312 labels decode as GB18030 (a
superset), Big5 as Big5-HKSCS (a superset) and Latin-1/ASCII as windows-1252 (as browsers
do). `latin_share` measures how much of a text looks like CJK bytes read as Latin-1
(mojibake), for callers that reject such text.

With `replace=True` (the stories job's pages), bytes that nothing above decodes strictly are
read as UTF-8 as a browser reads a UTF-8 page (WHATWG): each invalid byte sequence as U+FFFD,
when they are few (`few_replaced`: at most one per 1,000 characters, one in a shorter text),
so one stray windows-1252 apostrophe does not lose a whole story; more is a wrong charset
(GBK read as UTF-8 gives one or more per Chinese character), and None. Only UTF-8 is read so:
its multi-byte sequences check themselves, so few invalid ones mean stray bytes, while GB18030
or Big5 decode almost any byte pair, and a wrong one gives few errors but mojibake. The
evidence is the BOM or declaration that says UTF-8, else "detected"; `Decoded.replaced`
counts the sequences.
"""

from __future__ import annotations

import codecs
import dataclasses
import re

# Frequent characters of Chinese prose, in simplified and in traditional form.
COMMON = set(
    "的一是不了在人有我他中大上到以地出就和要也子可你小生而好那下天心去之自道于得着"
    "都里后看日多然把起还只没想年走用如过知么家面前头手回事名又山水老王长白她它吧呢"
    "这很再从外因此其每口目们来时说会对个为国见开儿间点发样"
    "們來時說後會對個這為國過還沒麼長頭裡與學見開兒從間點發樣"
)
_META = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?\s*([A-Za-z0-9_:.\-]+)""", re.I)
_HEADER = re.compile(r"charset\s*=\s*[\"']?\s*([A-Za-z0-9_:.\-]+)", re.I)
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
_ALIASES = {
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "gb_2312-80": "gb18030",
    "cp936": "gb18030",
    "big5": "big5hkscs",
    "cp950": "big5hkscs",
    "x-big5": "big5hkscs",
    "latin1": "cp1252",
    "iso-8859-1": "cp1252",
    "iso8859-1": "cp1252",
    "ascii": "cp1252",
    "us-ascii": "cp1252",
    "utf8": "utf-8",
}
DETECT = ("gb18030", "big5hkscs")
REPLACED_PER_CHARS = 1000  # `replace=True`: UTF-8 may hold one invalid byte sequence per this many characters
WEAK = frozenset({"cp1252", "iso8859-15"})  # codec names of weak (Latin) declarations; Latin-1 is cp1252
LATIN_MARGIN = 0.1  # common_score lead that overrules a weak declaration


@dataclasses.dataclass(frozen=True)
class Decoded:
    """Text plus the codec used and the evidence that chose it (bom/http/meta/detected), and
    how many invalid UTF-8 byte sequences it holds as U+FFFD (`replace=True` only)."""

    text: str
    encoding: str
    evidence: str
    replaced: int = 0


def codec_for(label: str | None) -> str | None:
    """A Python codec name for a charset label, or None for an unknown label."""
    if not label:
        return None
    label = label.strip().strip("\"'").lower()
    label = _ALIASES.get(label, label)
    try:
        name = codecs.lookup(label).name
    except LookupError:
        return None
    return _ALIASES.get(name, name)


def header_charset(content_type: str | None) -> str | None:
    match = _HEADER.search(content_type or "")
    return match.group(1) if match else None


def meta_charset(body: bytes) -> str | None:
    """The charset of `<meta charset=...>` or `<meta http-equiv ... content="...charset=...">`."""
    match = _META.search(body[:4096])
    return match.group(1).decode("ascii", "ignore") if match else None


def _strict(body: bytes, codec: str | None) -> str | None:
    if codec is None:
        return None
    try:
        return body.decode(codec)
    except (UnicodeDecodeError, LookupError):
        return None


_WIDE = re.compile(r"[^\x00-\x7f]")
_COMMON_CHARS = re.compile("[" + "".join(sorted(COMMON)) + "]")
_LATIN1 = re.compile(r"[\x80-\x84\x86-\x9f\xa1-\xff]")  # U+0080-00FF less its spaces (U+0085, U+00A0)
_SPACE = re.compile(r"\s")  # re's \s on str is str.isspace()


def common_score(text: str) -> float:
    """Share of non-ASCII characters that are frequent Chinese characters."""
    wide = len(_WIDE.findall(text))
    return len(_COMMON_CHARS.findall(text)) / wide if wide else 0.0


def latin_share(text: str) -> float:
    """Share of non-space characters in U+0080-U+00FF (Latin-1 letters and symbols).

    GBK, Big5 or UTF-8 Chinese read as Latin-1/cp1252 is mostly such characters (every byte
    of a Chinese character is >= 0x80); real prose, French or German included, has a few percent.
    """
    chars = len(text) - len(_SPACE.findall(text))
    return len(_LATIN1.findall(text)) / chars if chars else 0.0


def detect(body: bytes) -> Decoded | None:
    """UTF-8 if it decodes strictly; else the best-scoring of GB18030 and Big5."""
    text = _strict(body, "utf-8")
    if text is not None:
        return Decoded(text, "utf-8", "detected")
    best: Decoded | None = None
    best_score = -1.0
    for codec in DETECT:
        text = _strict(body, codec)
        if text is not None and common_score(text) > best_score:
            best, best_score = Decoded(text, codec, "detected"), common_score(text)
    return best


def utf8_replaced(body: bytes) -> tuple[str, int]:
    """`body` as UTF-8 with each invalid byte sequence as U+FFFD (as WHATWG decodes it), and
    how many there were (a U+FFFD the bytes spell out, EF BF BD, is not one)."""
    text = body.decode("utf-8", "replace")
    return text, text.count("\ufffd") - body.count(b"\xef\xbf\xbd")


def few_replaced(text: str, replaced: int) -> bool:
    """At most one invalid sequence per REPLACED_PER_CHARS characters (one in a shorter text)."""
    return replaced <= max(1, len(text) // REPLACED_PER_CHARS)


def _replaced_utf8(body: bytes, declared: list[tuple[str | None, str]]) -> Decoded | None:
    """UTF-8 with U+FFFD for its invalid sequences when they are few (`few_replaced`), else
    None; the evidence is a UTF-8 BOM or declaration, else "detected"."""
    text, replaced = utf8_replaced(body)
    if not few_replaced(text, replaced):
        return None
    if body.startswith(codecs.BOM_UTF8):
        evidence = "bom"
    else:
        evidence = next((e for label, e in declared if codec_for(label) == "utf-8"), "detected")
    return Decoded(text.lstrip("\ufeff"), "utf-8", evidence, replaced)


def decode_bytes(
    body: bytes, content_type: str | None = None, *, html: bool = True, replace: bool = False
) -> Decoded | None:
    """Decode by BOM, HTTP charset, <meta> charset (when `html`), then detection; then, with
    `replace`, UTF-8 with a few invalid sequences as U+FFFD (`_replaced_utf8`); None if nothing fits."""
    for bom, codec in _BOMS:
        if body.startswith(bom):
            text = _strict(body, codec)
            if text is not None:
                return Decoded(text.lstrip("\ufeff"), codec, "bom")
    declared = [(header_charset(content_type), "http")]
    if html:
        declared.append((meta_charset(body), "meta"))
    for i, (label, evidence) in enumerate(declared):
        codec = codec_for(label)
        text = _strict(body, codec)
        if text is None:
            continue
        if codec in WEAK and not body.isascii():
            better = _overrule_latin(body, text, declared[i + 1 :], replace)
            if better is not None:
                return better
        return Decoded(text, codec, evidence)
    detected = detect(body)
    return _replaced_utf8(body, declared) if detected is None and replace else detected


def _overrule_latin(
    body: bytes, latin: str, later: list[tuple[str | None, str]], replace: bool = False
) -> Decoded | None:
    """The first later non-Latin declaration or detection that beats a weak Latin decode, if
    any; with `replace`, UTF-8 with a few invalid sequences last (which must read as plausible
    Chinese: the non-ASCII bytes of a real Latin page are invalid UTF-8)."""
    candidates = []
    for label, evidence in later:
        codec = codec_for(label)
        text = _strict(body, codec) if codec not in WEAK else None
        if text is not None:
            candidates.append(Decoded(text, codec, evidence))
    detected = detect(body)
    if detected is not None:
        candidates.append(detected)
    replaced = _replaced_utf8(body, later) if replace else None
    if replaced is not None:
        candidates.append(replaced)
    floor = common_score(latin) + LATIN_MARGIN
    for candidate in candidates:
        if (candidate.encoding == "utf-8" and not candidate.replaced) or common_score(candidate.text) >= floor:
            return candidate
    return None
