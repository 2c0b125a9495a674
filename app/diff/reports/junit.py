"""``junit``: JUnit XML for CI systems that show test reports (GitLab, Jenkins, Azure).

One ``<testsuite name="contractdiff.<server>">``; one ``<testcase>`` per tool the result
names (added, removed, changed, unchanged), plus ``(prompts and resources)`` when deltas
belong to no tool. A delta at or above the gate is a ``<failure>`` (one per delta); the
rest, and ignored deltas, go to the testcase's ``<system-out>``. ``failures`` counts
failing testcases, as JUnit consumers expect. The XML is built with ElementTree, so text
is escaped by the serialiser; invisible and control characters (some illegal in XML) are
shown as ``[U+XXXX]``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from app.diff.model import Delta, DiffResult, IgnoredDelta, Severity
from app.diff.reports.common import all_tools, visible
from app.diff.reports.text import delta_line, ignored_line

NO_TOOL_CASE = "(prompts and resources)"
"""Not a valid MCP tool name (parentheses, spaces), so it never clashes with one."""
UNNAMED = "unnamed"


def at_gate(delta: Delta, gate: Severity | None) -> bool:
    return gate is not None and delta.severity.at_least(gate)


def failure(delta: Delta) -> ET.Element:
    """``<failure type="rule" message="[SEVERITY] field: description">`` with the details as text."""
    summary = visible(f"[{delta.severity.value}] {delta.field}: {delta.description}")
    element = ET.Element("failure", {"type": delta.rule, "message": summary})
    details = (("severity", delta.severity.value), ("field", delta.field), ("before", delta.before),
               ("after", delta.after), ("hint", delta.hint), ("path", delta.path), ("id", delta.id))
    element.text = "\n".join(f"{name}: {visible(value)}" for name, value in details if value is not None)
    return element


def testcase(classname: str, name: str, deltas: list[Delta], ignored: list[IgnoredDelta],
             gate: Severity | None) -> ET.Element:
    """One tool: failures for deltas at/above the gate, everything else in system-out."""
    case = ET.Element("testcase", {"classname": classname, "name": visible(name), "time": "0"})
    case.extend(failure(d) for d in deltas if at_gate(d, gate))
    notes = [delta_line(d) for d in deltas if not at_gate(d, gate)]
    notes += [ignored_line(item).strip() for item in ignored]
    if notes:
        ET.SubElement(case, "system-out").text = "\n".join(notes)
    return case


def testcases(result: DiffResult, gate: Severity | None) -> list[ET.Element]:
    classname = visible(result.server or UNNAMED)
    deltas: dict[str | None, list[Delta]] = {}
    for delta in result.deltas:
        deltas.setdefault(delta.tool, []).append(delta)
    ignored: dict[str | None, list[IgnoredDelta]] = {}
    for item in result.ignored:
        ignored.setdefault(item.delta.tool, []).append(item)
    names: list[str | None] = [*all_tools(result)]
    if None in deltas or None in ignored:
        names.append(None)
    return [
        testcase(classname, NO_TOOL_CASE if name is None else name, deltas.get(name, []), ignored.get(name, []), gate)
        for name in names
    ]


def properties(result: DiffResult, gate: Severity | None) -> ET.Element:
    max_severity = result.max_severity
    values = {"gate": gate.value if gate else "none", "maxSeverity": max_severity.value if max_severity else "none",
              "beforeDigest": result.before_digest, "afterDigest": result.after_digest}
    element = ET.Element("properties")
    element.extend(ET.Element("property", {"name": key, "value": visible(value)}) for key, value in values.items())
    return element


def render_junit(result: DiffResult, gate: Severity | None = Severity.BREAKING) -> str:
    cases = testcases(result, gate)
    counts = {"tests": str(len(cases)), "failures": str(sum(1 for c in cases if c.find("failure") is not None)),
              "errors": "0", "skipped": "0", "time": "0"}
    suite = ET.Element("testsuite", {"name": f"contractdiff.{visible(result.server or UNNAMED)}", **counts})
    suite.append(properties(result, gate))
    suite.extend(cases)
    root = ET.Element("testsuites", {"name": "ContractDiff", **{k: v for k, v in counts.items() if k != "skipped"}})
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
