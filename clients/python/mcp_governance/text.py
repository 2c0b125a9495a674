"""Invisible and control characters: one definition for the lockfile, the XML renderers
and the security rules, so what we reveal in one place we reveal everywhere."""

from __future__ import annotations

import unicodedata

# The normative list of RULES.md "security.hidden-unicode": characters a human reviewer
# cannot see but a model reads.
HIDDEN_RANGES: tuple[tuple[int, int], ...] = (
    (0xE0000, 0xE007F),  # Unicode tags
    (0x200B, 0x200F),  # zero-width space/joiners, LRM/RLM
    (0x2060, 0x2064),  # word joiner, invisible operators
    (0xFEFF, 0xFEFF),  # zero-width no-break space / BOM
    (0x202A, 0x202E),  # bidi embeddings and overrides
    (0x2066, 0x2069),  # bidi isolates
)


def is_hidden(ch: str) -> bool:
    """True for the characters of the security rule's normative list."""
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in HIDDEN_RANGES)


def hidden_chars(text: str) -> set[str]:
    """The hidden characters (normative list) a text carries."""
    if text.isascii():
        return set()
    return {ch for ch in text if is_hidden(ch)}


def is_invisible(ch: str) -> bool:
    """Broader than :func:`is_hidden`: anything that renders as nothing or moves text
    around - control (Cc), format (Cf), private use, unassigned, line/paragraph
    separators, variation selectors - plus the normative hidden list."""
    if ch.isascii():
        return ch < " " or ch == "\x7f"
    category = unicodedata.category(ch)
    if category in ("Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp"):
        return True
    code = ord(ch)
    return 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF or is_hidden(ch)


def codepoint_label(ch: str) -> str:
    """``[U+200B]``: how an invisible character is shown to people and models."""
    return f"[U+{ord(ch):04X}]"


def reveal(text: str) -> str:
    """Replace every invisible character with its ``[U+XXXX]`` label."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(codepoint_label(ch) if is_invisible(ch) else ch for ch in text)


def clip(text: str, limit: int) -> str:
    """Cut to ``limit`` characters, marking the cut with an ellipsis."""
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)] + "…"
