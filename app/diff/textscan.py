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
_PLAIN = re.compile(r"[A-Za-z0-9_.\-]+")
_WORD_RUN = re.compile(r"[\w.\-]+")


def _tokens(text: str) -> list[str]:
    return [token.casefold() for token in _TOKEN.findall(text)]


class NameIndex:
    """The tool names of one server, found in normalised texts in one pass per text.

    Names are tokenised like the text (:data:`_TOKEN`, case-folded). A text is scanned for
    its runs of identifier characters only; each run is one dict lookup (names of one token,
    the common case: ``send_email``, ``fs.read``), and a run that starts a longer name
    (``get Tool 1``) is tokenised a name's length ahead. Names that start with another
    character (``@scope/x``) are looked for where that character occurs. The work is linear
    in the text and does not grow with the number of names (a regex per name would)."""

    def __init__(self, names: Iterable[str]) -> None:
        self._pending: list[str] | None = sorted(names)
        self.single: dict[str, str] = {}
        self.multi: dict[tuple[str, ...], str] = {}
        self.multi_starts: frozenset[str] = frozenset()
        self.lengths: list[int] = []
        self.reach = 0
        self.odd_start: re.Pattern[str] | None = None

    def _build(self) -> None:
        """Index the names on first use (a diff whose texts introduce nothing never needs it)."""
        if self._pending is None:
            return
        multi: dict[tuple[str, ...], str] = {}
        for name in self._pending:
            if name.isascii() and _PLAIN.fullmatch(name):
                self.single.setdefault(name.lower(), name)  # the common case: one token, nothing to normalise
                continue
            folded = normalise(name)
            tokens = tuple(_tokens(folded))
            if len(tokens) == 1 and _WORD_START.match(tokens[0]):
                self.single.setdefault(tokens[0], name)
            elif tokens and tokens != (" ",):
                multi.setdefault(tokens, name)
                self.reach = max(self.reach, len(folded))
        self._pending = None
        self.multi = multi
        self.multi_starts = frozenset(tokens[0] for tokens in multi)
        self.lengths = sorted({len(tokens) for tokens in multi}, reverse=True)
        odd = sorted({tokens[0] for tokens in multi if not _WORD_START.match(tokens[0])})
        if odd:
            self.odd_start = re.compile("|".join(re.escape(token) for token in odd), re.IGNORECASE)

    def __bool__(self) -> bool:
        return bool(self._pending) if self._pending is not None else bool(self.single or self.multi)

    def first(self, normal: str, own: frozenset[str] = frozenset(), start: int = 0, end: int | None = None,
              skip: Sequence[tuple[int, int]] = ()) -> tuple[int, str] | None:
        """The earliest name (not in ``own``) in ``normal[start:end]``, as (offset, name);
        the longest name wins at one offset. A name's last token may carry a full stop
        (``Use fs.read.``); a match starting inside one of the ``skip`` spans does not count."""
        self._build()
        stop = len(normal) if end is None else end
        if self.odd_start is None and not self._may_hold(normal[start:stop]):
            return None
        best: tuple[int, str] | None = None
        if self.odd_start is not None:
            for odd in self.odd_start.finditer(normal, start, stop):
                offset = odd.start()
                if offset > start and _WORD_START.match(normal[offset - 1]):
                    continue  # glued to a word before it
                found = self._longer(normal, offset, stop, own)
                if found is not None and not (skip and _inside(offset, skip)):
                    best = (offset, found)
                    break
        for run in _WORD_RUN.finditer(normal, start, stop):
            offset = run.start()
            if best is not None and offset >= best[0]:
                break
            if skip and _inside(offset, skip):
                continue
            token = run.group(0).casefold()
            found = self._longer(normal, offset, stop, own) if token in self.multi_starts else None
            if found is None:
                found = self.single.get(token) or self.single.get(token.rstrip("."))
                found = None if found in own else found
            if found is not None:
                return offset, found
        return best

    def _may_hold(self, text: str) -> bool:
        """Whether any run of ``text`` is a name or starts one: a set intersection, so a text
        that names no tool (the common case) costs one C-level scan."""
        runs = set(_WORD_RUN.findall(text.casefold()))
        runs.update([run.rstrip(".") for run in runs if run.endswith(".")])
        return not (runs.isdisjoint(self.single) and runs.isdisjoint(self.multi_starts))

    def _longer(self, normal: str, offset: int, stop: int, own: frozenset[str]) -> str | None:
        """The longest multi-token name starting at ``offset``, tokenised a name's length ahead."""
        cut = min(stop, offset + self.reach + 1)
        matches = list(_TOKEN.finditer(normal, offset, cut))
        tokens = [match.group(0).casefold() for match in matches]
        if cut < stop and matches and _WORD_START.match(normal[cut - 1]) and _WORD_START.match(normal[cut]):
            whole = _WORD_RUN.match(normal, matches[-1].start(), stop)  # the word the window cut in two
            if whole is not None:
                tokens[-1] = whole.group(0).casefold()
        for length in self.lengths:
            if length > len(tokens):
                continue
            key = tuple(tokens[:length])
            name = self.multi.get(key)
            if name is None and key[-1].endswith(".") and _WORD_START.match(key[-1]):
                name = self.multi.get((*key[:-1], key[-1].rstrip(".")))
            if name is None or name in own:
                continue
            following = tokens[length] if length < len(tokens) else ""
            if following and _WORD_START.match(following) and not _WORD_START.match(key[-1]):
                continue  # a name ending in punctuation must not be glued to a word after it
            return name
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
    r"|(?i:(?:^|(?<=[\x00\n]))\s*[\[(]?deprecated\s*(?:[.,;:!\])\-\u2013\u2014]|$))"  # a text that is or opens with it
    r"|(?i:\b(?:this|the)\s+(?:tool|function|command|endpoint|method|operation|action)\s+is\s+(?:now\s+)?"
    r"deprecated\b)"
    r"|(?i:\bdeprecated\s*(?:[,;.\-\u2013\u2014]\s*)?(?:in\s+favou?r\s+of|since|and\s+will\s+be\s+removed"
    r"|(?:please\s+)?(?:use|call|switch\s+to|migrate\s+to|prefer))\b)"
)
"""What says that *this* tool is deprecated (not a mere mention: "replaces the deprecated
foo", "Deprecated fields are ignored"): the upper-case word, the word followed by a colon or
closing bracket, a text that is or opens with it as a word of its own ("Deprecated. ...",
"[Deprecated] ..."), "this tool is deprecated", or "deprecated" followed by what to do
instead."""
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
