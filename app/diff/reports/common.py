"""Pieces every report shares, so a delta reads the same in each format.

Human-facing formats (text, markdown, github, the messages of SARIF and JUnit) show
server-supplied strings through :func:`visible`: a poisoned description can neither
start a new line nor hide characters from the reviewer. Data fields (JSON, SARIF
properties) keep the raw values.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from app.budget import checkpoint
from app.diff.model import SEVERITY_ORDER, Delta, DiffResult, IgnoredDelta, Severity
from app.diff.rules.prompts_resources import GROUP_LABELS
from app.text import reveal

ARROW = "→"
NONE_LABEL = "(none)"
_LINE_BREAKS = re.compile(r"\r\n|\r|\n")
_WHITESPACE = re.compile(r"[\t\n\r]+")


def visible(text: str) -> str:
    """One line: line breaks and tabs become a space, other invisible characters ``[U+XXXX]``."""
    checkpoint()
    return reveal(_WHITESPACE.sub(" ", text))


def visible_lines(text: str) -> str:
    """Like :func:`visible` but keeps line breaks (as ``\\n``), for formats that escape them."""
    checkpoint()
    return "\n".join(reveal(line.replace("\t", " ")) for line in _LINE_BREAKS.split(text))


def scope(delta: Delta) -> str | None:
    """``tool/action``, ``tool``, or None for deltas that belong to no tool (prompts, resources).
    Every renderer names each delta's scope: the request's work budget is checked here."""
    checkpoint()
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


# --- prompts and resources, grouped -----------------------------------------------------------

GROUP_AT = 3
"""Same-rule, same-severity prompt/resource deltas are one line (or row) in human reports from
this many on; fewer are listed one by one. JSON, SARIF, JUnit and GitHub keep one per delta."""
GROUP_ITEMS = 5
"""Items a group line names before "and N more"."""


@dataclass(frozen=True)
class Group:
    """Same-rule deltas of prompts or resources, shown as one line."""

    rule: str
    severity: Severity
    deltas: tuple[Delta, ...]

    @property
    def label(self) -> str:
        """``100 resources removed``."""
        return group_label(self.rule, len(self.deltas))

    def items(self, limit: int = GROUP_ITEMS) -> str:
        """``a, b, c, d, e and 95 more``: what the group is about, by name."""
        shown = [item_name(delta) for delta in self.deltas[:limit]]
        rest = len(self.deltas) - len(shown)
        return ", ".join(shown) + (f" and {rest} more" if rest else "")


def groupable(delta: Delta) -> bool:
    """Prompt and resource deltas (no tool); security deltas are never grouped."""
    return delta.tool is None and delta.category in ("prompt", "resource")


def group_label(rule: str, count: int) -> str:
    singular, plural_form = GROUP_LABELS.get(rule, (f"{rule} change", f"{rule} changes"))
    return f"{count} {singular if count == 1 else plural_form}"


def item_name(delta: Delta) -> str:
    """A prompt or resource delta's item: the field without its section (``simple-prompt.title``,
    ``test://static/resource/1``); a rename as ``old → new``."""
    if delta.rule.endswith(".renamed") and delta.before is not None and delta.after is not None:
        return f"{delta.before} {ARROW} {delta.after}"
    return delta.field.partition(".")[2] or delta.field


def arrange(deltas: Iterable[Delta]) -> list[Delta | Group]:
    """Deltas in report order: by severity, each severity's tool deltas first, then its prompt
    and resource deltas, where :data:`GROUP_AT` or more share a rule as one :class:`Group`."""
    by_severity: dict[Severity, tuple[list[Delta], list[Delta]]] = {s: ([], []) for s in SEVERITY_ORDER}
    for delta in deltas:
        by_severity[delta.severity][1 if groupable(delta) else 0].append(delta)
    arranged: list[Delta | Group] = []
    for severity in SEVERITY_ORDER:
        tool_deltas, other = by_severity[severity]
        arranged.extend(tool_deltas)
        by_rule: dict[str, list[Delta]] = {}
        for delta in other:
            by_rule.setdefault(delta.rule, []).append(delta)
        for rule, same in by_rule.items():
            if len(same) >= GROUP_AT:
                arranged.append(Group(rule, severity, tuple(same)))
            else:
                arranged.extend(same)
    return arranged


def split_counts(result: DiffResult) -> str | None:
    """``tools: 9 BREAKING, 2 RISKY; prompts and resources: 100 resources removed, 7 resources
    added``: the summary with prompt and resource deltas counted by rule, so hundreds of them
    never hide what happened to the tools. None when no delta is about a prompt or resource."""
    other = [delta for delta in result.deltas if delta.tool is None]
    if not other:
        return None
    tool_counts = dict.fromkeys(SEVERITY_ORDER, 0)
    for delta in result.deltas:
        if delta.tool is not None:
            tool_counts[delta.severity] += 1
    tools = ", ".join(f"{count} {severity.value}" for severity, count in tool_counts.items() if count) or "no changes"
    by_rule: dict[str, int] = {}
    for delta in other:
        by_rule[delta.rule] = by_rule.get(delta.rule, 0) + 1
    grouped = ", ".join(group_label(rule, count) for rule, count in by_rule.items())
    return f"tools: {tools}; prompts and resources: {grouped}"
