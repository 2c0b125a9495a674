"""TOML items written so that a reviewer sees every character.

tomlkit builds the document; these helpers give it pre-escaped strings and keys in which
control and invisible characters appear as ``\\uXXXX`` escapes (TOML and JSON both read
them back exactly), so a poisoned description cannot hide inside a git diff.
"""

from __future__ import annotations

import re

import tomlkit
from tomlkit.items import Item, KeyType, SingleKey

from app.jsonio import pretty_json
from app.jsontypes import JSON
from app.names import full_match
from app.text import is_invisible

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_SHORT_ESCAPES = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", '"': '\\"', "\\": "\\\\"}


def _toml_escape_char(ch: str) -> str:
    code = ord(ch)
    return f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}"


_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f\x7f]')
_NEEDS_ESCAPE_MULTILINE = re.compile(r'["\\\x00-\x09\x0b-\x1f\x7f]')


def _basic_body(text: str, multiline: bool) -> str:
    if text.isascii() and not (_NEEDS_ESCAPE_MULTILINE if multiline else _NEEDS_ESCAPE).search(text):
        return text  # the common case: nothing to escape, decided in C
    out: list[str] = []
    quotes = 0
    for index, ch in enumerate(text):
        if ch == '"' and multiline:
            # Only a run of three quotes, or a quote before the closing delimiter, ends the string.
            quotes += 1
            if quotes == 3 or index == len(text) - 1:
                out.append('\\"')
                quotes = 0
            else:
                out.append(ch)
            continue
        quotes = 0
        if ch == "\n" and multiline:
            out.append(ch)
        elif ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif is_invisible(ch):
            out.append(_toml_escape_char(ch))
        else:
            out.append(ch)
    return "".join(out)


def string_item(text: str) -> Item:
    """A TOML basic string, multi-line when the text has line breaks."""
    multiline = "\n" in text
    return tomlkit.string(_basic_body(text, multiline), multiline=multiline, escape=False)


def key_item(name: str) -> SingleKey | str:
    """A table key; quoted and escaped when it is not a plain bare key."""
    if full_match(_BARE_KEY, name):
        return name
    return SingleKey(name, t=KeyType.Basic, original='"' + _basic_body(name, False) + '"')


def _json_escape_char(ch: str) -> str:
    code = ord(ch)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_text(value: JSON) -> str:
    """Pretty canonical JSON in which invisible characters are JSON escapes and no run of
    three single quotes remains, so it fits a TOML literal string unchanged."""
    text = pretty_json(value)
    if not text.isascii() or "\x7f" in text:
        # A raw newline in pretty JSON is always layout (JSON escapes the ones in strings).
        text = "".join(_json_escape_char(ch) if ch != "\n" and is_invisible(ch) else ch for ch in text)
    if "'''" in text:
        text = re.sub(r"'(?='')", r"\\u0027", text)
    return text


def json_item(value: JSON) -> Item:
    """A JSON value kept losslessly as text: single-line literal when short, otherwise a
    multi-line literal string with one JSON key per line (readable diffs)."""
    text = json_text(value)
    if "\n" in text or "'" in text:
        return tomlkit.string(text, literal=True, multiline=True)
    return tomlkit.string(text, literal=True)
