"""Escaping for the XML a model reads: re-exported from :mod:`mcp_governance.xmltext`, the one
copy (the client renders ``<tool_error>`` with it)."""

from mcp_governance.xmltext import SERVER_STRING_LIMIT, clean, escape_attr, escape_text

__all__ = ["SERVER_STRING_LIMIT", "clean", "escape_attr", "escape_text"]
