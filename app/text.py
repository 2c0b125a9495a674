"""Invisible and control characters: re-exported from :mod:`mcp_governance.text`, where the
one table lives (the client's XML escaping needs it too)."""

from mcp_governance.text import HIDDEN_RANGES, clip, codepoint_label, hidden_chars, is_hidden, is_invisible, reveal

__all__ = ["HIDDEN_RANGES", "clip", "codepoint_label", "hidden_chars", "is_hidden", "is_invisible", "reveal"]
