"""Reading a model's texts: the normal form cues are matched on, tool names inside a text,
and deprecation notices. Shared by the security rules (cues, tool references) and the
surface rules (``tool.deprecated`` and its replacement), so both read a text one way.

Everything here is linear in the text and independent of how many tools a server has:
tool names are found by hash lookups of token sequences, never one regex per name.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from app.text import is_invisible

_SPACES = frozenset("\t\n\r\x0b\x0c\x85\u2028\u2029")
_QUOTES = {0x2018: "'", 0x2019: "'", 0x02BC: "'", 0x2032: "'"}
_ASCII_STRIP = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_WHITESPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """The form cues are matched on (case-insensitively): invisible characters removed (a
    zero-width space inside a word must not hide it), NFKC, whitespace collapsed to one
    space. Case is kept so that snippets show URLs and paths as written."""
    if text.isascii():
        flat = _ASCII_STRIP.sub("", text)
    else:
        flat = "".join(" " if ch in _SPACES else "" if is_invisible(ch) else ch for ch in text)
        flat = unicodedata.normalize("NFKC", flat).translate(_QUOTES)
    return _WHITESPACE.sub(" ", flat)


# --- tool names in a text ------------------------------------------------------------------

_TOKEN = re.compile(r"[\w.\-]+|\s|[^\w\s.\-]")
"""A text as tokens: runs of identifier characters (``fs.read``, ``send_email``), single
spaces, single other characters. A name is found where its tokens are consecutive tokens
of the text, so it always starts and ends on a token boundary ("whole words")."""
_WORD_START = re.compile(r"[\w.\-]")


def _tokens(text: str) -> list[str]:
    return [token.casefold() for token in _TOKEN.findall(text)]


class NameIndex:
    """The tool names of one server, found in normalised texts in one pass per text.

    Names are tokenised like the text (:data:`_TOKEN`, case-folded) and kept in a dict by
    their token tuple; a text is scanned once, and at each position that starts some name
    only the name lengths that occur are looked up. The work is linear in the text and does
    not grow with the number of names (a regex per name would)."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names: dict[tuple[str, ...], str] = {}
        for name in sorted(names):
            tokens = tuple(_tokens(normalise(name)))
            if tokens and tokens != (" ",):
                self.names.setdefault(tokens, name)
        self.starts = frozenset(tokens[0] for tokens in self.names)
        self.lengths = sorted({len(tokens) for tokens in self.names}, reverse=True)

    def __bool__(self) -> bool:
        return bool(self.names)

    def first(self, normal: str, own: frozenset[str] = frozenset(), start: int = 0, end: int | None = None,
              skip: Sequence[tuple[int, int]] = ()) -> tuple[int, str] | None:
        """The earliest name (not in ``own``) in ``normal[start:end]``, as (offset, name);
        the longest name wins at one offset. A name's last token may carry a full stop
        (``Use fs.read.``); a match starting inside one of the ``skip`` spans does not count."""
        if not self.names:
            return None
        matches = list(_TOKEN.finditer(normal, start, len(normal) if end is None else end))
        tokens = [m.group(0).casefold() for m in matches]
        words = [bool(_WORD_START.match(token)) for token in tokens]
        count = len(tokens)
        for i, token in enumerate(tokens):
            if token not in self.starts and token.rstrip(".") not in self.starts:
                continue
            if i > 0 and words[i - 1] and not words[i]:
                continue  # a name starting with punctuation must not be glued to a word before it
            offset = matches[i].start()
            if skip and _inside(offset, skip):
                continue
            for length in self.lengths:
                j = i + length
                if j > count:
                    continue
                key = tuple(tokens[i:j])
                name = self.names.get(key)
                if name is None and words[j - 1] and key[-1].endswith("."):
                    name = self.names.get((*key[:-1], key[-1].rstrip(".")))
                if name is None or name in own:
                    continue
                if j < count and words[j] and not words[j - 1]:
                    continue  # nor end with punctuation glued to a word after it
                return offset, name
        return None


def _inside(offset: int, spans: Sequence[tuple[int, int]]) -> bool:
    index = bisect.bisect_right(spans, (offset, float("inf"))) - 1
    return index >= 0 and spans[index][0] <= offset < spans[index][1]


@lru_cache(maxsize=8)
def names_for(tool_names: frozenset[str]) -> NameIndex:
    """Every tool name of a surface (for a deprecation notice's replacement): built once per diff."""
    return NameIndex(tool_names)


# --- deprecation notices ---------------------------------------------------------------------

_MARKER = re.compile(
    r"\bDEPRECATED\b"  # the conventional upper-case marker
    r"|(?i:\bdeprecated\s*[:!\])])"  # "Deprecated:", "(deprecated)", "[Deprecated]"
    r"|(?i:(?:^|(?<=[\x00\n]))\s*[\[(]?deprecated\b)"  # a text that opens with it
    r"|(?i:\b(?:this|the)\s+(?:tool|function|command|endpoint|method|operation|action)\s+is\s+(?:now\s+)?"
    r"deprecated\b)"
    r"|(?i:\bdeprecated\s*(?:[,;.\-\u2013\u2014]\s*)?(?:in\s+favou?r\s+of|since|and\s+will\s+be\s+removed"
    r"|(?:please\s+)?(?:use|call|switch\s+to|migrate\s+to|prefer))\b)"
)
"""What says that *this* tool is deprecated (not a mere mention: "replaces the deprecated
foo"): the upper-case word, the word followed by a colon or closing bracket, a text that
opens with it, "this tool is deprecated", or "deprecated" followed by what to do instead."""
_SENTENCE_END = re.compile(r"[.!?](?=\s|\x00|$)|[\n\x00]")


@dataclass(frozen=True)
class Notice:
    """A deprecation notice in a text: the sentence with the marker and the one after it
    (where "Use X instead." usually stands)."""

    start: int
    end: int


def deprecation_notices(text: str) -> list[Notice]:
    """The deprecation notices in ``text``, in order and not overlapping. A NUL or a line
    break ends a sentence, so texts joined by NUL never share one."""
    if "eprecat" not in text and "EPRECAT" not in text:
        return []
    markers = list(_MARKER.finditer(text))
    if not markers:
        return []
    ends = [m.end() for m in _SENTENCE_END.finditer(text)]
    notices: list[Notice] = []
    for marker in markers:
        if notices and marker.start() < notices[-1].end:
            continue
        opened = bisect.bisect_right(ends, marker.start())
        start = ends[opened - 1] if opened else 0
        closing = bisect.bisect_left(ends, marker.end())
        stop = ends[closing] if closing < len(ends) else len(text)
        if stop < len(text) and text[stop - 1] not in "\n\x00":
            # and the sentence after it (a line break or the end of a text ends both)
            stop = ends[closing + 1] if closing + 1 < len(ends) else len(text)
        notices.append(Notice(start, stop))
    return notices


def notice_spans(text: str) -> list[tuple[int, int]]:
    return [(notice.start, notice.end) for notice in deprecation_notices(text)]
