"""Security rules (RULES.md "Security"): placeholder until the family lands."""

from __future__ import annotations

from app.diff.emitter import Emitter
from app.model import Prompt, Tool


def compare_tool_security(out: Emitter, before: Tool, after: Tool, tool_names: frozenset[str]) -> None:
    return None


def new_tool_security(out: Emitter, tool: Tool, tool_names: frozenset[str]) -> None:
    return None


def compare_prompt_security(out: Emitter, before: Prompt | None, after: Prompt, tool_names: frozenset[str]) -> None:
    return None
