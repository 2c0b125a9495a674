"""``markdown``: a pull-request comment (GitHub-flavoured Markdown).

Title with the verdict, a summary table by severity (and, when prompts or resources changed,
the tool changes counted apart and the prompt and resource changes by rule), then one section
per tool (and one for prompts and resources, where three or more deltas of one rule are one
row), each a table; SAFE and COSMETIC rows fold into a
``<details>`` block so reviewers see what needs them first. Every server-supplied string
goes through :func:`cell`: it cannot end a table cell or row, open a code span, inject
HTML, a link or an image, or @-mention anyone. The comment stays under GitHub's size
limit: sections that do not fit are counted, not shown.
"""

from __future__ import annotations

import json
import re

from app.diff.model import SEVERITY_ORDER, Delta, DiffResult, IgnoredDelta, Severity
from app.diff.reports.common import (
    ARROW,
    NONE_LABEL,
    Group,
    arrange,
    group_by_tool,
    plural,
    split_counts,
    visible_lines,
)
from app.text import clip

MAX_CHARS = 60_000
"""GitHub rejects comments over 65,536 characters; keep a margin for the footer."""
TEXT_LIMIT = 300
"""Longest server string shown in a cell (whole descriptions can be kilobytes)."""
MARKER = "<!-- mcp-governance:contractdiff -->"
"""Lets a CI bot find and update its previous comment instead of adding one per push."""

ICONS = {Severity.BREAKING: ":x:", Severity.RISKY: ":warning:", Severity.SAFE: ":heavy_check_mark:",
         Severity.COSMETIC: ":art:"}
_BACKSLASHED = set("\\`*_~[]|")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "@": "@&#8203;", "\n": "<br>"}
_PLAIN_ID = re.compile(r"[A-Za-z0-9_.:/-]+")
HEADER = "| Severity | Rule | Field | Description | Before → After | Hint |\n| --- | --- | --- | --- | --- | --- |"


def cell(text: str | None, limit: int = TEXT_LIMIT) -> str:
    """Inline-safe Markdown for an untrusted string: invisible characters revealed, cut to
    ``limit``, Markdown punctuation backslash-escaped, HTML specials as entities, line
    breaks as ``<br>``, ``@`` followed by a zero-width space so it mentions nobody."""
    if not text:
        return ""
    shown = clip(visible_lines(text), limit)
    return "".join(_escape_char(ch) for ch in shown)


def _escape_char(ch: str) -> str:
    if ch in _BACKSLASHED:
        return "\\" + ch
    return _ENTITIES.get(ch, ch)


def code(text: str) -> str:
    """A code span for identifiers (rule ids, plain field names); escaped text otherwise."""
    return f"`{text}`" if _PLAIN_ID.fullmatch(text) else cell(text)


def before_after(delta: Delta) -> str:
    if delta.before is None and delta.after is None:
        return ""
    before = NONE_LABEL if delta.before is None else cell(delta.before)
    after = NONE_LABEL if delta.after is None else cell(delta.after)
    return f"{before} {ARROW} {after}"


WITNESS_LIMIT = 200
"""Longest witness (compact JSON) shown in a cell."""


def witness_text(delta: Delta) -> str | None:
    """"This call worked before and fails now: {...}" (input), or the output's mirror."""
    witness = delta.witness
    if witness is None or not witness.found:
        return None
    shown = json.dumps(witness.value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    if delta.category == "output":
        return f"This result is allowed now and the old schema refuses it: {shown}"
    return f"This call worked before and fails now: {shown}"


def row(delta: Delta) -> str:
    description = cell(delta.description)
    shown = witness_text(delta)
    if shown is not None:
        description += "<br>" + cell(shown, WITNESS_LIMIT)
    cells = (f"{ICONS[delta.severity]} {delta.severity.value}", code(delta.rule), code(delta.field),
             description, before_after(delta), cell(delta.hint))
    return "| " + " | ".join(cells) + " |"


def verdict(result: DiffResult) -> str:
    """``:x: 2 breaking changes``: what a reviewer needs from the title alone."""
    summary = result.summary
    if summary[Severity.BREAKING.value]:
        return f":x: {plural(summary[Severity.BREAKING.value], 'breaking change')}"
    if summary[Severity.RISKY.value]:
        return f":warning: {plural(summary[Severity.RISKY.value], 'risky change')}"
    if result.deltas:
        return f":white_check_mark: backwards compatible ({plural(len(result.deltas), 'change')})"
    return ":white_check_mark: no changes"


def title(result: DiffResult) -> str:
    server = f" {cell(result.server)}" if result.server else ""
    return f"## ContractDiff{server}: {verdict(result)}"


def facts(result: DiffResult, gate: Severity | None) -> str:
    """Versions, max severity and the CI gate's outcome, on one line."""
    parts = []
    # Equal versions say nothing (a self-reported version is often never bumped).
    if (result.before_version or result.after_version) and result.before_version != result.after_version:
        parts.append(f"Version {cell(result.before_version) or NONE_LABEL} {ARROW} "
                     f"{cell(result.after_version) or NONE_LABEL}.")
    max_severity = result.max_severity
    parts.append(f"Max severity: **{max_severity.value if max_severity else 'none'}**.")
    if gate is not None:
        outcome = "fails" if result.fails(gate) else "passes"
        parts.append(f"Gate (fail on {gate.value} or worse): **{outcome}**.")
    return " ".join(parts)


def summary_table(result: DiffResult) -> str:
    summary = result.summary
    rows = [f"| {ICONS[s]} {s.value} | {summary[s.value]} |" for s in SEVERITY_ORDER]
    if result.ignored:
        rows.append(f"| Ignored | {len(result.ignored)} |")
    tools = result.tools
    listed = (f"Tools: {len(tools.added)} added, {len(tools.removed)} removed, {len(tools.changed)} changed, "
              f"{len(tools.unchanged)} unchanged.")
    split = split_counts(result)
    if split is not None:
        listed += f" Changes by kind: {cell(split)}."
    return "\n".join(["| Severity | Changes |", "| --- | ---: |", *rows, "", listed])


def group_row(group: Group) -> str:
    """Three or more same-rule prompt/resource deltas as one row: how many, and which."""
    cells = (f"{ICONS[group.severity]} {group.severity.value}", code(group.rule), cell(group.label),
             cell(f"{group.label}: {group.items()}"), "", "")
    return "| " + " | ".join(cells) + " |"


def _rows(entries: list[Delta | Group]) -> list[str]:
    return [group_row(entry) if isinstance(entry, Group) else row(entry) for entry in entries]


def _size(entry: Delta | Group) -> int:
    return len(entry.deltas) if isinstance(entry, Group) else 1


def section(tool: str | None, deltas: list[Delta]) -> str:
    """One tool's table: BREAKING/RISKY rows open, SAFE/COSMETIC rows folded. In the prompts and
    resources section, same-rule deltas are grouped (:func:`~app.diff.reports.common.arrange`)."""
    heading = f"### Tool {cell(tool)}" if tool is not None else "### Prompts and resources"
    entries = arrange(deltas)
    urgent = [e for e in entries if e.severity.at_least(Severity.RISKY)]
    minor = [e for e in entries if not e.severity.at_least(Severity.RISKY)]
    blocks = [heading]
    if urgent:
        blocks.append("\n".join([HEADER, *_rows(urgent)]))
    if minor:
        folded = "\n".join([HEADER, *_rows(minor)])
        label = plural(sum(_size(e) for e in minor), "safe or cosmetic change")
        blocks.append(f"<details><summary>{label}</summary>\n\n{folded}\n\n</details>")
    return "\n\n".join(blocks)


def ignored_section(ignored: tuple[IgnoredDelta, ...]) -> str:
    rows = [
        "| " + " | ".join((item.delta.severity.value, code(item.delta.rule), cell(item.delta.tool),
                          code(item.delta.field), cell(item.delta.description), cell(item.reason),
                          cell(item.expires))) + " |"
        for item in ignored
    ]
    return "\n".join([f"### Ignored ({len(ignored)})", "",
                      "| Severity | Rule | Tool | Field | Description | Reason | Expires |",
                      "| --- | --- | --- | --- | --- | --- | --- |", *rows])


def fit(blocks: list[tuple[str, int]], budget: int) -> tuple[list[str], int]:
    """The blocks (text, changes they show) that fit in ``budget`` characters, in order,
    and how many changes the rest would have shown."""
    shown: list[str] = []
    left_out = 0
    for text, changes in blocks:
        if left_out == 0 and len(text) + 2 <= budget:
            shown.append(text)
            budget -= len(text) + 2
        else:
            left_out += changes
    return shown, left_out


def render_markdown(result: DiffResult, gate: Severity | None = Severity.BREAKING) -> str:
    """The whole comment; sections past :data:`MAX_CHARS` are left out and counted."""
    head = [MARKER, title(result), facts(result, gate), summary_table(result)]
    blocks = [(section(tool, deltas), len(deltas)) for tool, deltas in group_by_tool(result.deltas).items()]
    if result.ignored:
        blocks.append((ignored_section(result.ignored), len(result.ignored)))
    budget = MAX_CHARS - sum(len(part) + 2 for part in head)
    shown, left_out = fit(blocks, budget)
    parts = head + shown
    if left_out:
        parts.append(f"_{plural(left_out, 'more change')} not shown (comment size limit): "
                     "see the JSON or SARIF report._")
    return "\n\n".join(parts) + "\n"
