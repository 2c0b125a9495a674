"""``sarif``: SARIF 2.1.0 for code-scanning UIs (GitHub code scanning, IDE viewers).

One run; ``tool.driver.rules`` lists one reportingDescriptor per rule id the result uses
(deltas and ignored deltas), sorted: a log names only what it reports, and ``ruleIndex``
stays small and stable. One result per delta; ignored deltas are results too, with an
external suppression carrying the reason, so nothing is silently dropped. Levels follow
the delta's severity, never the CI gate. Without ``source`` the results carry logical
locations only; with it, also a physical location on that file (line 1: the engine
knows no line numbers, and GitHub needs a region to show a result).
"""

from __future__ import annotations

import json
from typing import Any

import app
from app.diff.model import Delta, DiffResult, IgnoredDelta, Severity
from app.diff.registry import Rule, variants
from app.diff.reports.common import change, qualified_name, visible, with_hint

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL_NAME = "mcp-governance"
FINGERPRINT_KEY = "contractDiffDeltaId/v1"
LEVELS = {Severity.BREAKING: "error", Severity.RISKY: "warning", Severity.SAFE: "note", Severity.COSMETIC: "note"}
SECURITY_SEVERITY = {Severity.BREAKING: "8.0", Severity.RISKY: "5.0", Severity.SAFE: "2.0", Severity.COSMETIC: "0.0"}
"""GitHub ranks ``security``-tagged rules by this CVSS-like score."""


def rule_variants(rule_id: str) -> list[Rule]:
    """Every registered variant of a rule, worst first."""
    return sorted(variants(rule_id), key=lambda entry: (entry.severity.rank, entry.when))


def descriptor(rule_id: str, fallback: Delta) -> dict[str, Any]:
    """The reportingDescriptor of a rule: its summary, worst severity as the default level,
    and each variant's severity where RULES.md grades one change two ways. A rule the
    registry does not know (a hand-made delta) is described from the delta itself."""
    graded = rule_variants(rule_id)
    if not graded:
        severity, category, summary, direction = fallback.severity, fallback.category, rule_id, None
    else:
        severity, category, direction = graded[0].severity, graded[0].category, graded[0].direction
        summary = " ".join(f"{v.when}: {v.summary}" if v.when else v.summary for v in graded)
    properties: dict[str, Any] = {"severity": severity.value, "category": category, "tags": ["mcp", category]}
    if direction:
        properties["direction"] = direction
    if len(graded) > 1:
        properties["variants"] = {v.when: v.severity.value for v in graded}
    if category == "security":
        properties["security-severity"] = SECURITY_SEVERITY[severity]
        properties["tags"].append("security")
    return {"id": rule_id, "shortDescription": {"text": summary},
            "defaultConfiguration": {"level": LEVELS[severity]}, "properties": properties}


def location(delta: Delta, source: str | None) -> dict[str, Any]:
    """Where a delta is: tool/action/field as a logical location; the file, when known."""
    logical = {"name": delta.field, "fullyQualifiedName": qualified_name(delta),
               "kind": "member" if delta.tool is not None else "resource"}
    found: dict[str, Any] = {"logicalLocations": [logical]}
    if source:
        found["physicalLocation"] = {"artifactLocation": {"uri": source}, "region": {"startLine": 1}}
    return found


def message(delta: Delta) -> str:
    """``description (before → after). hint``, with invisible characters revealed."""
    shown = change(delta.before, delta.after)
    text = f"{delta.description} ({shown})" if shown is not None else delta.description
    return visible(with_hint(text, delta.hint))


def result_entry(delta: Delta, index: dict[str, int], source: str | None) -> dict[str, Any]:
    """One SARIF result; the raw values stay in ``properties`` for machines."""
    return {
        "ruleId": delta.rule,
        "ruleIndex": index[delta.rule],
        "level": LEVELS[delta.severity],
        "message": {"text": message(delta)},
        "locations": [location(delta, source)],
        "partialFingerprints": {FINGERPRINT_KEY: delta.id},
        "properties": {"deltaId": delta.id, "severity": delta.severity.value, "category": delta.category,
                       "tool": delta.tool, "action": delta.action, "field": delta.field, "path": delta.path,
                       "before": delta.before, "after": delta.after, **witness_properties(delta)},
    }


def witness_properties(delta: Delta) -> dict[str, Any]:
    """``witness`` (the checked value) or ``witnessReason`` (why none), for schema deltas."""
    witness = delta.witness
    if witness is None:
        return {}
    return {"witness": witness.value} if witness.found else {"witnessReason": witness.reason}


def suppressed_entry(ignored: IgnoredDelta, index: dict[str, int], source: str | None) -> dict[str, Any]:
    entry = result_entry(ignored.delta, index, source)
    entry["suppressions"] = [{"kind": "external", "justification": ignored.reason}]
    entry["properties"]["expires"] = ignored.expires
    return entry


def sarif_log(result: DiffResult, source: str | None = None) -> dict[str, Any]:
    """The SARIF log as a dict (tests and the API can use it without re-parsing)."""
    every = [*result.deltas, *(item.delta for item in result.ignored)]
    first_seen: dict[str, Delta] = {}
    for delta in every:
        first_seen.setdefault(delta.rule, delta)
    rule_order = sorted(first_seen)
    index = {rule_id: i for i, rule_id in enumerate(rule_order)}
    max_severity = result.max_severity
    run: dict[str, Any] = {
        "tool": {"driver": {"name": TOOL_NAME, "version": app.__version__,
                            "rules": [descriptor(rule_id, first_seen[rule_id]) for rule_id in rule_order]}},
        "results": [result_entry(d, index, source) for d in result.deltas]
        + [suppressed_entry(i, index, source) for i in result.ignored],
        "properties": {"server": result.server, "beforeDigest": result.before_digest,
                       "afterDigest": result.after_digest, "beforeVersion": result.before_version,
                       "afterVersion": result.after_version,
                       "maxSeverity": max_severity.value if max_severity else None, "summary": result.summary},
    }
    if result.server:
        run["automationDetails"] = {"id": f"contractdiff/{result.server}/"}
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render_sarif(result: DiffResult, source: str | None = None) -> str:
    return json.dumps(sarif_log(result, source), indent=2, ensure_ascii=False) + "\n"
