"""Stories in, prepared stories out: parsing, light cleaning, sentences and jieba words.

LOT (paper section 3) builds every task from cleaned stories. `parse_story_record` reads
one JSON line or parquet row (`story` or `text`, optional `id`, `title`, `outline`, `source`,
`url`, `license`); `prepare_story` cleans it, splits sentences (annotators.text.zh_sentences) and
cuts each sentence once with jieba, HMM on and off in one pass (`zh_tokens.Segmenter.cut_both`),
so later steps never tokenise the story again: word counts and Table 3 use the HMM-on words,
the OutGen outline the HMM-off tokens.
Known-bad inputs: malformed JSON, non-objects, missing/empty/whitespace-only stories,
non-Chinese text, HTML junk, LOT placeholders. Short and long texts are prepared: each task
applies its own limits (`whole_story_problem`, SenPos windows).
"""

from __future__ import annotations

import codecs
import dataclasses
import functools
import itertools
import json
import re
from typing import Any

from annotators.core import jsonl
from annotators.core.ids import stable_hash, stable_id
from annotators.core.outcome import Drop
from annotators.core.sniff import not_text_reason
from annotators.text import zh_tokens
from annotators.text.charset import decode_bytes
from annotators.text.runs import delete_in_runs
from annotators.text.zh_clean import clean_chinese, han_ratio
from annotators.text.zh_sentences import split_paragraph_sentences

PLACEHOLDERS = ("<mask>", "[MASK]", "<MASK>")  # LOT's markers (PEERS.md 1.2)
# LongLM's T5 sentinels, which the .source/.target exports write (annotators/core/longlm.py):
# a story holding one gave an export line with two pointers
SENTINEL = re.compile(r"<extra_id_\d+>")
# HTML left in a story (a tag or an entity): junk from a bad scrape, cleaned by pipelines.stories.
_HTML_JUNK = re.compile(r"</?[a-zA-Z][a-zA-Z0-9]*(?:\s[^<>]*)?/?>|&(?:nbsp|amp|lt|gt|quot|#\d+|#x[0-9a-fA-F]+);")
_WHITESPACE = re.compile(r"\s+")
_SPACE_NEAR_WIDE = re.compile(r"(?<=[^\x00-\x7f])[ \t\u3000\u00a0]+|[ \t\u3000\u00a0]+(?=[^\x00-\x7f])")
_ANY_SPACE = re.compile(r"[ \t\u3000\u00a0]")
_SPACE_RUN = re.compile(r"[ \t\u3000\u00a0]+")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _help(text: str, **extra) -> dict:
    return {"help": text, **extra}


@dataclasses.dataclass(frozen=True)
class StoryConfig:
    """How input stories are cleaned and filtered (the job exposes `--normalize`)."""

    normalize: str = dataclasses.field(
        default="whitespace",
        metadata=_help(
            "whitespace: only delete spaces (text kept verbatim); full: also normalise punctuation "
            "(annotators.text.zh_clean)",
            choices=("whitespace", "full"),
        ),
    )
    min_han_ratio: float = dataclasses.field(
        default=0.5,
        metadata=_help("LOT is Chinese: a story with a smaller share of Han characters is not_chinese", min=0, max=1),
    )
    min_sentences: int = dataclasses.field(
        default=3,
        metadata=_help(
            "ClozeT and PlotCom need this many sentences (OutGen takes any story it can outline, "
            "SenPos any window with a removable sentence)",
            min=1,
        ),
    )
    max_story_chars: int = dataclasses.field(
        default=20000,
        metadata=_help(
            "ClozeT, PlotCom and OutGen take whole stories up to this many characters (0: no limit); "
            "longer texts are their story_too_long rejects. SenPos cuts windows from texts of any length",
            min=0,
        ),
    )
    min_sentence_han: int = dataclasses.field(
        default=10,
        metadata=_help(
            "SPEC: a sentence under this many Chinese characters merges into a neighbour in its paragraph "
            "(never across a paragraph break)",
            min=0,
        ),
    )


@dataclasses.dataclass(frozen=True)
class PreparedStory:
    """A cleaned story with its sentences (per paragraph) and jieba words per sentence.

    `words`: HMM-on jieba words per sentence (whitespace dropped); `outline_tokens`: the
    HMM-off jieba tokens of `joined` (whitespace kept), what the `rake` outline method reads;
    `title_words`: HMM-on jieba words of the title; `pos_tokens`: `jieba.posseg` (word, tag)
    pairs of `joined`, what the default `posrake` outline method reads (both outline modes are
    cut only for texts within `max_story_chars`, the ones OutGen takes); `breaks`: indices of
    the sentences after the first that begin a paragraph of the text (SenPos windows).
    """

    story_id: str
    title: str
    text: str
    sentences: tuple[str, ...]
    words: tuple[tuple[str, ...], ...]
    input_id: str = ""
    source: str = ""
    url: str = ""
    license: str = ""
    outline: tuple[str, ...] | None = None
    outline_tokens: tuple[str, ...] = ()
    title_words: tuple[str, ...] = ()
    pos_tokens: tuple[tuple[str, str], ...] = ()
    breaks: tuple[int, ...] = ()

    @functools.cached_property
    def joined(self) -> str:
        """The story as one line (LOT's released stories have no line breaks), made once."""
        return "".join(self.sentences)

    @functools.cached_property
    def sizes(self) -> tuple[int, int]:
        """(characters, words) of every sentence together, made once per story."""
        return sum(map(len, self.sentences)), sum(map(len, self.words))

    @functools.cached_property
    def vocabulary(self) -> frozenset[str]:
        """The distinct words of every sentence (`words`), made once per story: most examples'
        Table 3 vocabulary (annotators.lot.stats.example_stats)."""
        return frozenset(itertools.chain.from_iterable(self.words))


_BOM_STARTS = (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def decode_line(raw: bytes) -> str | Drop:
    """One input line as text: BOM, then UTF-8, else GB18030/Big5 by detection (annotators.text.charset)."""
    if b"\x00" in raw:  # UTF-16 text (utf16) or binary data (binary_file)
        return not_text_reason(raw)
    if not raw.startswith(_BOM_STARTS):
        try:  # what decode_bytes gives a line without a BOM that is valid UTF-8, at once
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            pass
    decoded = decode_bytes(raw, html=False)
    return Drop("undecodable", "not UTF-8, GB18030 or Big5") if decoded is None else decoded.text


_JSON_TYPE = {str: "a string", int: "an integer", bool: "true or false", dict: "an object", list: "a list"}


def field_problem(
    obj: dict[str, Any], name: str, types: tuple[type, ...], *, allow_blank: bool = False, allow_bool: bool = True
) -> Drop | None:
    """Why `obj[name]` of a JSON input (story, annotation, review) cannot be used, or None.

    Absent, null or blank text is the shared `missing_field`, a wrong JSON type the shared
    `bad_field_type`, so every LOT input says the same thing about the same failure.
    """
    value = obj.get(name)
    if value is None or (isinstance(value, str) and str in types and not allow_blank and not value.strip()):
        return Drop("missing_field", f"{name} is missing or empty")
    if not isinstance(value, types) or (not allow_bool and isinstance(value, bool)):
        wanted = " or ".join(_JSON_TYPE.get(t, t.__name__) for t in types)
        return Drop("bad_field_type", f"{name} must be {wanted}, not a JSON {type(value).__name__}")
    return None


def parse_story_record(input_id: str, raw: bytes | dict) -> dict[str, Any] | Drop:
    """A raw JSON line (bytes) or parquet row (dict) -> a plain story dict, or Drop."""
    if isinstance(raw, (bytes, bytearray)):
        decoded = decode_line(bytes(raw))
        if isinstance(decoded, Drop):
            return decoded
        line = decoded.strip()
        if not line:
            return Drop("blank_line", "empty line in a JSON lines file")
        try:
            obj = jsonl.loads(line)
        except json.JSONDecodeError as exc:
            return Drop("malformed_json", jsonl.malformed_detail(f"{exc.msg} at column {exc.colno}", decoded))
        except (ValueError, RecursionError) as exc:  # RecursionError: JSON nested too deeply
            return Drop("malformed_json", jsonl.malformed_detail(str(exc)[:200], decoded))
    else:
        obj = raw
        if isinstance(obj, dict) and "__read_error__" in obj:
            return Drop("unreadable_file", str(obj["__read_error__"]))
    if not isinstance(obj, dict):
        return Drop("not_an_object", f"a JSON {type(obj).__name__}, not an object")
    story = obj.get("story", obj.get("text"))
    if story is None:
        return Drop("missing_field", "no string field 'story' or 'text'")
    if not isinstance(story, str):
        return Drop("bad_field_type", f"the story is a JSON {type(story).__name__}, not a string")
    if not story.strip():
        return Drop("missing_field", "the story is empty or whitespace only")
    outline = obj.get("outline")
    if not (isinstance(outline, list) and all(isinstance(p, str) for p in outline)):
        outline = None
    raw_id = obj.get("id", obj.get("story_id"))
    return {
        "story_id": str(raw_id) if raw_id not in (None, "") else stable_id("story", story),
        "title": str(obj.get("title") or ""),
        "story": story,
        "input_id": input_id,
        "source": str(obj.get("source") or ""),
        "url": str(obj.get("url") or ""),
        "license": str(obj.get("license") or ""),
        "outline": outline,
    }


def normalize_text(text: str, mode: str) -> str:
    """'whitespace': only spaces next to non-ASCII go (the text is otherwise kept verbatim)."""
    if mode == "full":
        return clean_chinese(text)
    text = text.replace("\r", "\n")
    if _ANY_SPACE.search(text):
        lines = (delete_in_runs(_SPACE_NEAR_WIDE, line, _SPACE_RUN, _NON_ASCII).strip() for line in text.split("\n"))
    else:  # nothing for the pattern to remove (most stories): skip its scan
        lines = (line.strip() for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


def prepare_story(
    record: dict[str, Any], config: StoryConfig = StoryConfig(), *, outline_method: str = "posrake"
) -> PreparedStory | Drop:
    """Clean, filter and split one parsed story; tokenises each sentence once, with the
    modes the outline method reads (`jieba.posseg` pairs for posrake, HMM-off tokens for rake)."""
    text = normalize_text(record["story"], config.normalize)
    if not text:
        return Drop("empty_after_cleaning", "nothing left after cleaning")
    if han_ratio(text) < config.min_han_ratio:
        return Drop("not_chinese", f"Han share {han_ratio(text):.2f} < {config.min_han_ratio}")
    marker = next((m for m in PLACEHOLDERS if m in text), None)
    if marker:
        return Drop("contains_placeholder", f"the story contains {marker!r}, which marks removed text")
    sentinel = SENTINEL.search(text) if "<extra_id_" in text else None
    if sentinel:
        return Drop(
            "contains_placeholder",
            f"the story contains {sentinel.group()!r}, a LongLM sentinel the .source/.target exports write",
        )
    junk = _HTML_JUNK.search(text)
    if junk:
        return Drop("html_markup", f"HTML {junk.group(0)!r} in the story; clean it with pipelines.stories")
    split, breaks = split_paragraph_sentences(text, min_han=config.min_sentence_han)
    sentences = tuple(split)
    whole = not too_long(len(text) - text.count("\n"), config)  # OutGen reads the outline tokens
    words, off_tokens, pos_tokens = sentence_tokens(
        sentences, off=whole and outline_method == "rake", pos=whole and outline_method == "posrake"
    )
    outline = tuple(record["outline"]) if record.get("outline") else None
    title_words = tuple(t for t in zh_tokens.load().lcut(record["title"]) if t.strip()) if record["title"] else ()
    return PreparedStory(
        record["story_id"],
        record["title"],
        text,
        sentences,
        words,
        record["input_id"],
        record["source"],
        record["url"],
        record["license"],
        outline,
        off_tokens,
        title_words,
        pos_tokens,
        breaks,
    )


def too_long(n_chars: int, config: StoryConfig) -> bool:
    """Whether a text of `n_chars` characters is over the whole-story limit (0: none)."""
    return bool(config.max_story_chars) and n_chars > config.max_story_chars


def whole_story_problem(story: PreparedStory, config: StoryConfig, task: str) -> Drop | None:
    """Why a task that takes whole stories (ClozeT, PlotCom, OutGen) cannot take this one:
    over `--max-story-chars`, or (ClozeT, PlotCom) fewer than `min_sentences` sentences."""
    n = len(story.joined)
    if too_long(n, config):
        return Drop(
            "story_too_long",
            f"{n} characters > --max-story-chars {config.max_story_chars}: "
            f"{task} takes whole stories (SenPos cuts windows from any length)",
        )
    if task != "OutGen" and len(story.sentences) < config.min_sentences:
        return Drop("too_few_sentences", f"{len(story.sentences)} sentence(s) < {config.min_sentences} ({task})")
    return None


def _joins_a_block(left: str, right: str) -> bool:
    """Whether jieba would cut across the boundary of `left` + `right` (both ends in one block)."""
    return bool(left and right and zh_tokens.RE_HAN.match(left[-1]) and zh_tokens.RE_HAN.match(right[0]))


def sentence_tokens(
    sentences: tuple[str, ...], *, off: bool = True, pos: bool = True
) -> tuple[tuple[tuple[str, ...], ...], tuple[str, ...], tuple[tuple[str, str], ...]]:
    """(HMM-on words per sentence without whitespace, HMM-off tokens of the joined sentences,
    `jieba.posseg` (word, tag) pairs of the joined sentences); a mode turned off is ().

    Each sentence is cut once, every mode in one pass. jieba cuts within blocks of Han
    characters, letters and digits; sentences end after punctuation, so the joined text's
    tokens are the sentences' tokens one after another, unless two sentences meet inside a
    block (a paragraph ending without punctuation): then the joined text is cut again.
    """
    segmenter = zh_tokens.load()
    words, off_tokens, pos_tokens = segmenter.cut_sentences(sentences, off=off, pos=pos)
    off_tokens, pos_tokens = off_tokens or [], pos_tokens or []
    if any(_joins_a_block(a, b) for a, b in zip(sentences, sentences[1:])):
        joined = "".join(sentences)
        off_tokens = segmenter.lcut(joined, HMM=False) if off else []
        pos_tokens = segmenter.cut_tagged(joined) if pos else []
    return words, tuple(off_tokens), tuple(pos_tokens)


def exact_duplicate_key(record: dict[str, Any], config: StoryConfig) -> str:
    """Exact-duplicate key of a parsed story: a hash of its normalised text without any
    whitespace, so copies that differ only in spacing or line breaks are one story. The
    'whitespace' normalisation only deletes whitespace, so then the raw text gives the same key."""
    text = record["story"] if config.normalize == "whitespace" else normalize_text(record["story"], config.normalize)
    return stable_hash("text", _WHITESPACE.sub("", text))
