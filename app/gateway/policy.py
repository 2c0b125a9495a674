"""What the gateway lets a model see and call: a pure function of the mode and the diff.

The diff is the service's (lock -> live, :func:`app.diff.diff`); this module only reads its
deltas. One verdict per live tool:

- ``observe``: every tool is visible as the server describes it.
- ``enforce``: a tool with a *blocking* delta (BREAKING, a security finding, or an
  annotation downgrade, RULES.md) is hidden and its calls are FORBIDDEN; a tool the lock
  does not know is hidden too unless ``allow_new``; every other tool is visible.
- ``pin``: as enforce, except that a tool whose every delta is a change of text the model
  reads (:data:`TEXT_RULES`) is visible with the locked text (the live schema still
  validates its calls).

A delta a policy ignores is not in ``result.deltas``: it is approved, so it blocks nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from app.diff.model import Delta, DiffResult, Severity
from app.text import is_hidden


class Mode(StrEnum):
    OBSERVE = "observe"
    ENFORCE = "enforce"
    PIN = "pin"


TEXT_RULES = frozenset({
    "tool.title.changed",
    "tool.description.changed",
    "input.description.changed",
    "output.description.changed",
    "security.hidden-unicode",
    "security.instruction-cue",
})
"""Rules about text the model reads and nothing else: pin mode serves the locked text."""

TEXT_KEYS = frozenset({"title", "description"})
"""Keys whose string values are text a model reads (in a tool and anywhere in its schemas)."""


def blocks(delta: Delta) -> bool:
    """Whether enforce and pin modes refuse a tool for this delta: BREAKING, any security
    finding (poisoning cue, hidden characters), or an annotation downgrade (an annotation
    delta graded RISKY or worse)."""
    if delta.severity is Severity.BREAKING or delta.category == "security":
        return True
    return delta.category == "annotation" and delta.severity.at_least(Severity.RISKY)


@dataclass(frozen=True)
class ToolVerdict:
    name: str
    visible: bool
    pinned: bool = False
    """Served with the locked definition (pin mode, text-only changes)."""
    reason: str | None = None
    """Why the tool is hidden: one line, the FORBIDDEN message."""


@dataclass(frozen=True)
class Verdict:
    mode: Mode
    tools: Mapping[str, ToolVerdict]

    def visible(self) -> list[str]:
        return [name for name, verdict in self.tools.items() if verdict.visible]

    def blocked(self) -> dict[str, str]:
        return {name: verdict.reason or "" for name, verdict in self.tools.items() if not verdict.visible}


def _why(server: str, deltas: list[Delta]) -> str:
    worst = sorted(deltas, key=Delta.sort_key)[0]
    more = f" (and {len(deltas) - 1} more)" if len(deltas) > 1 else ""
    return (f"Tool blocked by the governance gateway: {worst.description} [{worst.rule}, {worst.severity.value}]"
            f"{more}, not approved in the lock of {server}.")


def decide(mode: Mode, server: str, live_tools: Iterable[str], result: DiffResult | None, *,
           allow_new: bool = False) -> Verdict:
    """The verdict on each live tool. ``result`` is the diff lock -> live (None: no lock,
    so every tool is new)."""
    verdicts: dict[str, ToolVerdict] = {}
    added = set(result.tools.added) if result is not None else None
    by_tool: dict[str, list[Delta]] = {}
    for delta in result.deltas if result is not None else ():
        if delta.tool is not None:
            by_tool.setdefault(delta.tool, []).append(delta)
    for name in live_tools:
        if mode is Mode.OBSERVE:
            verdicts[name] = ToolVerdict(name, True)
            continue
        deltas = by_tool.get(name, [])
        blocking = [delta for delta in deltas if blocks(delta)]
        if (added is None or name in added) and not allow_new:
            verdicts[name] = ToolVerdict(name, False, reason=_why(server, blocking) if blocking else (
                f"Tool blocked by the governance gateway: {name!r} is not in the lock of {server} yet; "
                "it becomes callable once it is locked."))
            continue
        text_only = bool(deltas) and all(delta.rule in TEXT_RULES for delta in deltas)
        if mode is Mode.PIN and text_only and (added is None or name not in added):
            verdicts[name] = ToolVerdict(name, True, pinned=True)
            continue
        verdicts[name] = (ToolVerdict(name, False, reason=_why(server, blocking)) if blocking
                          else ToolVerdict(name, True))
    return Verdict(mode, verdicts)


def strip_hidden(value: Any) -> tuple[Any, int]:
    """``value`` (a tool or prompt in wire JSON) with the hidden characters (the normative
    table of :mod:`mcp_governance.text`) removed from every text a model reads (``title``
    and ``description`` strings, at any depth), and how many were removed. Names and
    values are left alone: changing them would change the contract."""
    if isinstance(value, list):
        items = [strip_hidden(item) for item in value]
        return [item for item, _ in items], sum(count for _, count in items)
    if not isinstance(value, dict):
        return value, 0
    out: dict[str, Any] = {}
    removed = 0
    for key, item in value.items():
        if key in TEXT_KEYS and isinstance(item, str):
            clean = "".join(ch for ch in item if not is_hidden(ch))
            removed += len(item) - len(clean)
            out[key] = clean
        else:
            out[key], count = strip_hidden(item)
            removed += count
    return out, removed


__all__ = ["TEXT_RULES", "Mode", "ToolVerdict", "Verdict", "blocks", "decide", "strip_hidden"]
