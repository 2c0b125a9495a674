"""Pieces every report shares, so a delta reads the same in each format.

Human-facing formats (text, markdown, github, the messages of SARIF and JUnit) show
server-supplied strings through :func:`visible`: a poisoned description can neither
start a new line nor hide characters from the reviewer. Data fields (JSON, SARIF
properties) keep the raw values.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from app.diff.model import SEVERITY_ORDER, Delta, DiffResult, IgnoredDelta
from app.text import reveal

ARROW = "→"
NONE_LABEL = "(none)"
_LINE_BREAKS = re.compile(r"\r\n|\r|\n")
_WHITESPACE = re.compile(r"[\t\n\r]+")


def visible(text: str) -> str:
    """One line: line breaks and tabs become a space, other invisible characters ``[U+XXXX]``."""
    return reveal(_WHITESPACE.sub(" ", text))


def visible_lines(text: str) -> str:
    """Like :func:`visible` but keeps line breaks (as ``\\n``), for formats that escape them."""
    return "\n".join(reveal(line.replace("\t", " ")) for line in _LINE_BREAKS.split(text))


def scope(delta: Delta) -> str | None:
    """``tool/action``, ``tool``, or None for deltas that belong to no tool (prompts, resources)."""
    if delta.tool is None:
        return None
    return f"{delta.tool}/{delta.action}" if delta.action is not None else delta.tool


def subject(delta: Delta) -> str:
    """What a delta is about: ``tool/action field``, or only the field when no tool owns it."""
    where = scope(delta)
    return f"{where} {delta.field}" if where is not None else delta.field


def qualified_name(delta: Delta) -> str:
    """``billing/get_invoice/actions.get_invoice.input.currency``: tool, action, field."""
    return "/".join(part for part in (delta.tool, delta.action, delta.field) if part is not None)


def change(before: str | None, after: str | None) -> str | None:
    """``before → after``; ``(none)`` for a missing side; None when both sides are missing."""
    if before is None and after is None:
        return None
    return f"{NONE_LABEL if before is None else before} {ARROW} {NONE_LABEL if after is None else after}"


def with_hint(text: str, hint: str | None) -> str:
    """``text. hint``: the sentence a reader acts on."""
    if not hint:
        return text
    return f"{text} {hint}" if text.endswith((".", "!", "?")) else f"{text}. {hint}"


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def counts(result: DiffResult) -> str:
    """``1 BREAKING, 0 RISKY, 2 SAFE, 1 COSMETIC (max BREAKING)``, or ``no changes``."""
    max_severity = result.max_severity
    if max_severity is None:
        text = "no changes"
    else:
        summary = result.summary
        listed = ", ".join(f"{summary[s.value]} {s.value}" for s in SEVERITY_ORDER)
        text = f"{listed} (max {max_severity.value})"
    if result.ignored:
        text += f"; {len(result.ignored)} ignored"
    return text


def report_name(result: DiffResult) -> str:
    """``ContractDiff payments`` (``ContractDiff`` alone when the surface names no server)."""
    return f"ContractDiff {visible(result.server)}" if result.server else "ContractDiff"


def headline(result: DiffResult) -> str:
    """The one-line verdict: ``ContractDiff payments: 1 BREAKING, ... (max BREAKING)``."""
    return f"{report_name(result)}: {counts(result)}"


def ignore_note(ignored: IgnoredDelta) -> str:
    """``reason; expires 2027-01-01``: why a delta does not count."""
    note = visible(ignored.reason)
    return f"{note}; expires {visible(ignored.expires)}" if ignored.expires else note


def group_by_tool(deltas: Iterable[Delta]) -> dict[str | None, list[Delta]]:
    """Deltas per tool, in first-seen order (worst first, since deltas come sorted);
    the tool-less group (prompts, resources) always last."""
    groups: dict[str | None, list[Delta]] = {}
    for delta in deltas:
        groups.setdefault(delta.tool, []).append(delta)
    if None in groups:
        groups[None] = groups.pop(None)
    return groups


def all_tools(result: DiffResult) -> list[str]:
    """Every tool the result names (added, removed, changed, unchanged, or only in a delta), sorted."""
    return sorted(result.tool_names)
