"""Vurb / MCP Fusion parity rules: placeholder until the family lands."""

from __future__ import annotations

from app.diff.emitter import Emitter
from app.model import Tool


def compare_fusion(out: Emitter, before: Tool, after: Tool) -> None:
    return None
