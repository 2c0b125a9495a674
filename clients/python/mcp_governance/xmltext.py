"""Escaping for the XML a model reads (``<contract_awareness>``, ``<validation_error>``,
``<tool_error>``): the MCP Fusion wire contract.

Element text escapes only ``&`` and ``<`` (so ``>`` and quotes stay readable to the model;
the ``>`` of ``]]>`` is the one exception, since XML forbids that sequence in text);
attribute values escape ``&``, ``<``, ``>``, ``"`` and ``'``. Strings that come from a
server are also cut to 200 characters and have invisible or control characters replaced
by ``[U+XXXX]`` labels, so a poisoned description can neither break out of the section
nor smuggle hidden text to the model.
"""

from __future__ import annotations

import re

from mcp_governance.text import clip, reveal

SERVER_STRING_LIMIT = 200
_WHITESPACE = re.compile(r"[\t\n\r]+")


def escape_text(text: str) -> str:
    """Element text: ``&`` and ``<`` only; plus the ``>`` of a ``]]>``, which XML forbids
    in text (the one place a bare ``>`` would break the document)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace("]]>", "]]&gt;")


def escape_attr(text: str) -> str:
    """Attribute values: ``&``, ``<``, ``>``, ``"`` and ``'``."""
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def clean(text: str, limit: int = SERVER_STRING_LIMIT) -> str:
    """A server-supplied string made safe to show: line breaks and tabs become spaces,
    other invisible or control characters become ``[U+XXXX]``, then it is cut to
    ``limit`` characters with an ellipsis."""
    return clip(reveal(_WHITESPACE.sub(" ", text)), limit)

