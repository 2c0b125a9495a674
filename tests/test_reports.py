"""ContractDiff reports: every format rendered from real diffs and parsed back (JSON against
DESIGN.md's shape, SARIF against the official 2.1.0 schema, JUnit with an XML parser,
Markdown tables and GitHub workflow commands with the splitting rules their consumers use),
and hostile server strings that must not break any of them."""

from __future__ import annotations

import copy
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft4Validator

import app
from app import load_surface
from app.diff import Delta, DiffResult, IgnoredDelta, Severity, ToolChanges, diff
from app.diff.reports import FORMATS, render_report
from app.diff.reports.github import escape_data, escape_property
from app.diff.reports.markdown import MAX_CHARS
from app.diff.reports.sarif import SCHEMA_URI, descriptor, sarif_log

DATA = Path(__file__).parent / "data"


def _obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def _billing(currency_required: bool, limit_max: int) -> dict[str, Any]:
    """A grouped tool (MCP Fusion style): one oneOf branch per action, keyed by ``action``."""
    get_required = ["action", "id", "currency"] if currency_required else ["action", "id"]
    return {"name": "billing", "description": "Billing operations", "inputSchema": {"type": "object", "oneOf": [
        _obj({"action": {"const": "get_invoice"}, "id": {"type": "string"}, "currency": {"type": "string"}},
             get_required),
        _obj({"action": {"const": "list"}, "limit": {"type": "integer", "maximum": limit_max}}, ["action"]),
    ]}}


BEFORE = {
    "serverInfo": {"name": "payments", "version": "1.0"},
    "tools": [
        _billing(currency_required=False, limit_max=100),
        {"name": "users", "description": "Users", "inputSchema": _obj({"q": {"type": "string"}})},
        {"name": "old_tool", "description": "Old", "inputSchema": _obj({"x": {"type": "integer"}}, ["x"])},
        {"name": "search", "description": "Search things", "inputSchema": _obj({"q": {"type": "string",
                                                                                      "format": "email"}})},
    ],
    "prompts": [{"name": "summarize", "description": "Summarize", "arguments": [{"name": "text", "required": False}]}],
}
NEW_DESCRIPTION = "Search all things, fast: 100% indexed"
"""Benign on purpose (no URL, no agent instructions): hostile strings are tested with
hand-made deltas, so the security family's cues cannot change these fixtures."""
AFTER = {
    "serverInfo": {"name": "payments", "version": "1.1"},
    "tools": [
        _billing(currency_required=True, limit_max=200),
        {"name": "users", "description": "Users", "inputSchema": _obj({"q": {"type": "string"}})},
        {"name": "refund", "description": "Refund", "inputSchema": _obj({"amount": {"type": "number"}})},
        {"name": "search", "description": NEW_DESCRIPTION,
         "inputSchema": _obj({"q": {"type": "string", "format": "uri"}})},
    ],
    "prompts": [{"name": "summarize", "description": "Summarize", "arguments": [{"name": "text", "required": True}]}],
}

SOURCE = "lockfiles/payments.lock.toml"


@pytest.fixture(scope="module")
def result() -> DiffResult:
    """BREAKING (grouped-tool action, removed tool, prompt), RISKY, SAFE and COSMETIC deltas."""
    return diff(load_surface(copy.deepcopy(BEFORE)), load_surface(copy.deepcopy(AFTER)))


@pytest.fixture(scope="module")
def with_ignored(result: DiffResult) -> DiffResult:
    """The RISKY format change moved to ``ignored`` by a (simulated) policy."""
    risky = next(d for d in result.deltas if d.severity is Severity.RISKY)
    kept = tuple(d for d in result.deltas if d is not risky)
    return replace(result, deltas=kept, ignored=(IgnoredDelta(risky, "clients send | URIs\nalready", "2027-01-31"),))


@pytest.fixture(scope="module")
def empty() -> DiffResult:
    surface = load_surface(copy.deepcopy(BEFORE))
    return diff(surface, surface)


def _delta(**overrides: Any) -> Delta:
    base: dict[str, Any] = {
        "rule": "tool.description.changed", "severity": Severity.COSMETIC, "category": "tool", "tool": "search",
        "action": None, "field": "description", "path": "/tools/search/description",
        "description": "The description changed", "before": "old", "after": "new", "hint": None,
    }
    return Delta(**{**base, **overrides})


def _result(*deltas: Delta, ignored: tuple[IgnoredDelta, ...] = (), server: str | None = "srv") -> DiffResult:
    tools = sorted({d.tool for d in deltas if d.tool is not None})
    return DiffResult(server, "sha256:" + "a" * 64, "sha256:" + "b" * 64, ToolChanges(changed=tuple(tools)),
                      deltas=tuple(sorted(deltas, key=Delta.sort_key)), ignored=ignored)


# --- dispatch ----------------------------------------------------------------------------


def test_formats_are_the_documented_six() -> None:
    assert FORMATS == ("text", "json", "markdown", "sarif", "junit", "github")


def test_unknown_format_is_a_value_error_naming_it(result: DiffResult) -> None:
    with pytest.raises(ValueError, match="'yaml'"):
        render_report(result, "yaml")


def test_the_fixture_covers_every_severity_an_action_and_a_prompt(result: DiffResult) -> None:
    assert all(result.summary[s.value] for s in Severity)
    assert any(d.action == "get_invoice" for d in result.deltas)
    assert any(d.tool is None and d.rule.startswith("prompt.") for d in result.deltas)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_ends_with_one_newline(result: DiffResult, empty: DiffResult, fmt: str) -> None:
    for case in (result, empty):
        out = render_report(case, fmt, source=SOURCE)
        assert out.endswith("\n") and not out.endswith("\n\n")


# --- json --------------------------------------------------------------------------------

# DESIGN.md "ContractDiff output", verbatim.
DESIGN_EXAMPLE = json.loads("""
{"server": "payments", "maxSeverity": "BREAKING", "isBackwardsCompatible": false,
 "summary": {"BREAKING": 1, "RISKY": 0, "SAFE": 2, "COSMETIC": 1},
 "tools": {"added": ["refund"], "removed": [], "changed": ["billing"], "unchanged": ["users"]},
 "deltas": [{"id": "3f9c0a1b2c4d", "rule": "input.required.added", "severity": "BREAKING",
             "category": "input", "tool": "billing", "action": "get_invoice",
             "field": "actions.get_invoice.input.currency", "path": "/tools/billing/inputSchema/...",
             "description": "Argument \\"currency\\" is now required", "before": "optional",
             "after": "required (string)", "hint": "Pass \\"currency\\" (string).",
             "witness": {"found": true, "value": {"action": "get_invoice", "id": "a"}}}],
 "ignored": []}
""")


def test_json_has_the_documented_shape(result: DiffResult) -> None:
    out = render_report(result, "json")
    doc = json.loads(out)
    assert list(doc) == list(DESIGN_EXAMPLE)
    assert list(doc["summary"]) == list(DESIGN_EXAMPLE["summary"])
    assert list(doc["tools"]) == list(DESIGN_EXAMPLE["tools"])
    assert all(list(delta) == list(DESIGN_EXAMPLE["deltas"][0]) for delta in doc["deltas"])
    assert doc["maxSeverity"] == "BREAKING" and doc["isBackwardsCompatible"] is False
    assert all(isinstance(n, int) for n in doc["summary"].values())
    assert all(isinstance(names, list) for names in doc["tools"].values())
    for delta in doc["deltas"]:
        assert re.fullmatch(r"[0-9a-f]{12}", delta["id"])
        assert delta["severity"] in {s.value for s in Severity}
        assert all(delta[k] is None or isinstance(delta[k], str) for k in ("tool", "action", "before", "after", "hint"))
    assert doc == result.to_json()
    assert out == json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n"
    currency = next(d for d in doc["deltas"] if d["rule"] == "input.required.added")
    assert {k: v for k, v in currency.items() if k not in ("id", "path")} == {
        k: v for k, v in DESIGN_EXAMPLE["deltas"][0].items() if k not in ("id", "path")}


def test_json_keeps_unicode_and_lists_ignored_with_reason(with_ignored: DiffResult) -> None:
    out = render_report(with_ignored, "json")
    doc = json.loads(out)
    assert [i["reason"] for i in doc["ignored"]] == ["clients send | URIs\nalready"]
    assert doc["ignored"][0]["expires"] == "2027-01-31"
    assert list(doc["ignored"][0])[:13] == list(DESIGN_EXAMPLE["deltas"][0])
    assert json.loads(render_report(_result(_delta(after="naïve — ok")), "json"))["deltas"][0]["after"] == "naïve — ok"
    assert "naïve — ok" in render_report(_result(_delta(after="naïve — ok")), "json")


def test_json_max_severity_is_null_without_deltas(empty: DiffResult) -> None:
    doc = json.loads(render_report(empty, "json"))
    assert doc["maxSeverity"] is None and doc["isBackwardsCompatible"] is True
    assert doc["deltas"] == [] and doc["ignored"] == []
    assert doc["summary"] == {"BREAKING": 0, "RISKY": 0, "SAFE": 0, "COSMETIC": 0}
    assert doc["tools"]["unchanged"] == ["billing", "old_tool", "search", "users"]


# --- text --------------------------------------------------------------------------------


def test_text_changelog_exact(result: DiffResult) -> None:
    assert render_report(result, "text").splitlines() == [
        "ContractDiff payments: 3 BREAKING, 1 RISKY, 2 SAFE, 1 COSMETIC (max BREAKING)",
        "  tools: 2 BREAKING, 1 RISKY, 2 SAFE, 1 COSMETIC; prompts and resources: 1 prompt argument now required",
        ('[BREAKING] billing/get_invoice actions.get_invoice.input.currency: Argument "currency" is now required'
         " (optional → required (string))"),
        '[BREAKING] old_tool tool: Tool "old_tool" was removed (old_tool → (none))',
        ('[BREAKING] prompts.summarize.arguments.text: Argument "text" of prompt "summarize" is now required'
         " (optional → required)"),
        '[RISKY] search input.q: The format of argument "q" changed (email → uri)',
        ('[SAFE] billing/list actions.list.input.limit: Argument "limit" has a looser maximum'
         " (at most 100 → at most 200)"),
        '[SAFE] refund tool: New tool "refund" ((none) → refund)',
        f'[COSMETIC] search description: The description of tool "search" changed (Search things → {NEW_DESCRIPTION})',
    ]


def test_text_no_changes(empty: DiffResult) -> None:
    assert render_report(empty, "text") == "ContractDiff payments: no changes\n"
    assert render_report(_result(server=None), "text") == "ContractDiff: no changes\n"


def test_text_null_sides_and_tool_less_deltas() -> None:
    both_none = _delta(before=None, after=None, description="Something moved")
    prompt = _delta(rule="prompt.added", severity=Severity.SAFE, category="prompt", tool=None,
                    field="prompts.p", description='New prompt "p"', before=None, after="p")
    action = _delta(severity=Severity.RISKY, action="act", field="actions.act.input.x", before="a", after=None)
    lines = render_report(_result(both_none, prompt, action), "text").splitlines()
    assert lines[1:] == [
        "  tools: 1 RISKY, 1 COSMETIC; prompts and resources: 1 prompt added",
        "[RISKY] search/act actions.act.input.x: The description changed (a → (none))",
        '[SAFE] prompts.p: New prompt "p" ((none) → p)',
        "[COSMETIC] search description: Something moved",
    ]


def test_text_keeps_one_line_per_delta_and_reveals_hidden_characters() -> None:
    sneaky = _delta(description="Line one\r\nline two\x1b[2J", before="a\u200bb", after="tab\there")
    lines = render_report(_result(sneaky), "text").splitlines()
    assert lines[1] == "[COSMETIC] search description: Line one line two[U+001B][2J (a[U+200B]b → tab here)"
    assert len(lines) == 2


def test_text_ignored_block_lists_reasons(with_ignored: DiffResult) -> None:
    out = render_report(with_ignored, "text")
    header, _, tail = out.partition("\n\n")
    assert header.splitlines()[0] == \
        "ContractDiff payments: 3 BREAKING, 0 RISKY, 2 SAFE, 1 COSMETIC (max BREAKING); 1 ignored"
    assert "[RISKY]" not in header
    assert tail.splitlines() == [
        "Ignored (1):",
        ('  [RISKY] search input.q: The format of argument "q" changed (email → uri)'
         " — ignored: clients send | URIs already; expires 2027-01-31"),
    ]


# --- markdown ----------------------------------------------------------------------------


def _gfm_cells(line: str) -> list[str]:
    """A table row split the way GitHub's cmark-gfm does: a pipe preceded by a backslash
    never separates cells."""
    inner = line.strip()[1:-1]
    return re.split(r"(?<!\\)\|", inner)


def _tables(markdown: str) -> list[list[str]]:
    tables: list[list[str]] = []
    current: list[str] = []
    for line in markdown.splitlines() + [""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    return tables


def test_markdown_pull_request_comment(result: DiffResult) -> None:
    out = render_report(result, "markdown")
    assert "## ContractDiff payments: :x: 3 breaking changes" in out
    assert "Gate (fail on BREAKING or worse): **fails**" in out
    assert "Version 1.0 → 1.1." in out
    summary = _tables(out)[0]
    assert [_gfm_cells(row) for row in summary[2:]] == [
        [" :x: BREAKING ", " 3 "], [" :warning: RISKY ", " 1 "], [" :heavy_check_mark: SAFE ", " 2 "],
        [" :art: COSMETIC ", " 1 "]]
    headings = re.findall(r"^### (.+)$", out, flags=re.M)
    assert headings == ["Tool billing", r"Tool old\_tool", "Tool search", "Tool refund", "Prompts and resources"]
    billing = out.split("### Tool billing", 1)[1].split("###", 1)[0]
    assert ("| :x: BREAKING | `input.required.added` | `actions.get_invoice.input.currency` | Argument \"currency\" "
            "is now required<br>This call worked before and fails now: "
            "{\"action\":\"get\\_invoice\",\"id\":\"a\"} | optional → required (string) | "
            "Pass \"currency\" (string). |") in billing
    urgent, _, folded = billing.partition("<details>")
    assert "input.bound.relaxed" in folded and "input.bound.relaxed" not in urgent
    assert "<summary>1 safe or cosmetic change</summary>" in folded and "</details>" in folded


def test_markdown_gate_line_follows_the_gate(result: DiffResult) -> None:
    assert "**passes**" in render_report(replace(result, deltas=result.deltas[3:]), "markdown")
    assert "**fails**" in render_report(replace(result, deltas=result.deltas[3:]), "markdown", gate=Severity.RISKY)
    assert "Gate" not in render_report(result, "markdown", gate=None)


def test_markdown_survives_hostile_strings(result: DiffResult) -> None:
    nasty = "a|b`c`<script>x</script>\nline2 \\| [link](javascript:x) ![i](http://t) @team *b* &amp;"
    hostile = _delta(tool="evil|tool", field="input.we|rd`name", description=nasty, before=nasty, after=nasty,
                     hint=nasty, severity=Severity.BREAKING)
    out = render_report(replace(result, deltas=(hostile, *result.deltas)), "markdown")
    for table in _tables(out):
        widths = {len(_gfm_cells(row)) for row in table}
        assert len(widths) == 1, table
        assert all(row.rstrip().endswith("|") for row in table)
    assert {len(_gfm_cells(t[0])) for t in _tables(out)[1:]} == {6}
    assert "<script" not in out and "&lt;script&gt;" in out
    assert "](" not in out.replace("\\](", "")
    assert "@team" not in out and "@&#8203;team" in out
    assert "&amp;amp;" in out
    assert "line2" in out and "<br>line2" in out
    assert "### Tool evil\\|tool" in out


def test_markdown_renders_to_safe_html(result: DiffResult) -> None:
    """With a real CommonMark + GFM-table parser (optional): the hostile row stays one
    row of six cells and no HTML the server wrote reaches the page."""
    markdown_it = pytest.importorskip("markdown_it")
    hostile = _delta(description="x|y<script>alert(1)</script>\n<img src=x onerror=alert(1)>", tool="t",
                     severity=Severity.BREAKING)
    html = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table").render(
        render_report(replace(result, deltas=(hostile,)), "markdown"))
    assert "<script" not in html and "<img" not in html
    body = html.split("<h3>Tool t</h3>", 1)[1]
    assert body.count("<tr>") == 2 and body.count("<td>") == 6
    assert "x|y&lt;script&gt;" in body


def test_markdown_without_changes_and_with_ignored(empty: DiffResult, with_ignored: DiffResult) -> None:
    quiet = render_report(empty, "markdown")
    assert ":white_check_mark: no changes" in quiet and "###" not in quiet
    out = render_report(with_ignored, "markdown")
    ignored = out.split("### Ignored (1)", 1)[1]
    row = _tables(ignored)[0][2]
    assert _gfm_cells(row)[1:3] == [" `input.format.changed` ", " search "]
    assert "clients send \\| URIs<br>already" in row and "2027-01-31" in row


def test_markdown_stays_under_the_comment_limit() -> None:
    many = [_delta(tool=f"tool{i:04d}", before="x" * 400, after="y" * 400, path=f"/tools/tool{i:04d}")
            for i in range(300)]
    out = render_report(_result(*many), "markdown")
    assert len(out) < 65_536 and len(out) <= MAX_CHARS + 200
    shown = len(re.findall(r"^### Tool ", out, flags=re.M))
    assert 0 < shown < 300
    assert f"_{300 - shown} more changes not shown" in out


# --- sarif -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sarif_validator() -> Draft4Validator:
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    Draft4Validator.check_schema(schema)
    return Draft4Validator(schema, format_checker=Draft4Validator.FORMAT_CHECKER)


def _schema_errors(validator: Draft4Validator, doc: Any) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]


@pytest.mark.parametrize("source", [None, SOURCE])
def test_sarif_validates_against_the_official_schema(result: DiffResult, with_ignored: DiffResult,
                                                     empty: DiffResult, sarif_validator: Draft4Validator,
                                                     source: str | None) -> None:
    for case in (result, with_ignored, empty):
        doc = json.loads(render_report(case, "sarif", source=source))
        assert _schema_errors(sarif_validator, doc) == []


def test_the_schema_check_is_not_vacuous(result: DiffResult, sarif_validator: Draft4Validator) -> None:
    doc = sarif_log(result)
    doc["runs"][0]["results"][0]["level"] = "fatal"
    del doc["runs"][0]["tool"]["driver"]["name"]
    assert len(_schema_errors(sarif_validator, doc)) == 2


def test_sarif_one_result_per_delta_with_levels_and_rules(result: DiffResult) -> None:
    doc = json.loads(render_report(result, "sarif"))
    assert doc["$schema"] == SCHEMA_URI and doc["version"] == "2.1.0" and len(doc["runs"]) == 1
    run = doc["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "mcp-governance" and driver["version"] == app.__version__
    rules = [r["id"] for r in driver["rules"]]
    assert rules == sorted({d.rule for d in result.deltas})
    levels = {"BREAKING": "error", "RISKY": "warning", "SAFE": "note", "COSMETIC": "note"}
    assert len(run["results"]) == len(result.deltas)
    for sarif_result, delta in zip(run["results"], result.deltas, strict=True):
        assert sarif_result["ruleId"] == delta.rule
        assert rules[sarif_result["ruleIndex"]] == delta.rule
        assert sarif_result["level"] == levels[delta.severity.value]
        assert sarif_result["partialFingerprints"] == {"contractDiffDeltaId/v1": delta.id}
        assert sarif_result["properties"]["before"] == delta.before
        assert sarif_result["properties"]["after"] == delta.after
        assert sarif_result["properties"]["path"] == delta.path
        assert "physicalLocation" not in sarif_result["locations"][0]
        assert "suppressions" not in sarif_result
    descriptors = {r["id"]: r for r in driver["rules"]}
    assert descriptors["input.required.added"]["shortDescription"]["text"]
    assert descriptors["input.required.added"]["properties"]["severity"] == "BREAKING"
    assert descriptors["tool.removed"]["defaultConfiguration"]["level"] == "error"
    currency = next(r for r in run["results"] if r["ruleId"] == "input.required.added")
    assert currency["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == \
        "billing/get_invoice/actions.get_invoice.input.currency"
    assert currency["message"]["text"] == \
        'Argument "currency" is now required (optional → required (string)). Pass "currency" (string).'
    prompt = next(r for r in run["results"] if r["ruleId"].startswith("prompt."))
    assert prompt["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "prompts.summarize.arguments.text"


def test_sarif_source_adds_a_physical_location(result: DiffResult) -> None:
    run = json.loads(render_report(result, "sarif", source=SOURCE))["runs"][0]
    for sarif_result in run["results"]:
        physical = sarif_result["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == SOURCE


def test_sarif_ignored_deltas_are_suppressed_results(with_ignored: DiffResult) -> None:
    run = json.loads(render_report(with_ignored, "sarif"))["runs"][0]
    assert len(run["results"]) == len(with_ignored.deltas) + 1
    suppressed = [r for r in run["results"] if "suppressions" in r]
    assert len(suppressed) == 1
    assert suppressed[0]["ruleId"] == "input.format.changed" and suppressed[0]["level"] == "warning"
    assert suppressed[0]["suppressions"] == [{"kind": "external", "justification": "clients send | URIs\nalready"}]
    assert "input.format.changed" in [r["id"] for r in run["tool"]["driver"]["rules"]]


def test_sarif_and_github_levels_ignore_the_gate(result: DiffResult) -> None:
    for fmt in ("sarif", "github"):
        outputs = {render_report(result, fmt, gate=gate) for gate in (None, Severity.BREAKING, Severity.COSMETIC)}
        assert len(outputs) == 1


def test_sarif_describes_graded_variants_and_unknown_rules() -> None:
    removed = descriptor("input.property.removed", _delta())
    assert removed["properties"]["variants"] == {"closed object": "BREAKING", "open object": "RISKY",
                                                 "closed object, unwitnessed": "RISKY"}
    assert removed["defaultConfiguration"]["level"] == "error"
    unknown = descriptor("custom.rule", _delta(rule="custom.rule", severity=Severity.RISKY))
    assert unknown["shortDescription"]["text"] == "custom.rule"
    assert unknown["defaultConfiguration"]["level"] == "warning"


def test_sarif_message_reveals_hidden_text_but_properties_keep_it(sarif_validator: Draft4Validator) -> None:
    doc = sarif_log(_result(_delta(after="ok\u202eevil\nmore")), SOURCE)
    assert _schema_errors(sarif_validator, doc) == []
    sarif_result = doc["runs"][0]["results"][0]
    assert "ok[U+202E]evil more" in sarif_result["message"]["text"]
    assert sarif_result["properties"]["after"] == "ok\u202eevil\nmore"


# --- junit -------------------------------------------------------------------------------


def _suite(xml: str) -> ET.Element:
    root = ET.fromstring(xml)
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert len(suites) == 1
    return suites[0]


@pytest.mark.parametrize("gate", [Severity.BREAKING, Severity.RISKY, None])
def test_junit_failures_follow_the_gate(result: DiffResult, gate: Severity | None) -> None:
    xml = render_report(result, "junit", gate=gate)
    root = ET.fromstring(xml)
    suite = _suite(xml)
    assert suite.get("name") == "contractdiff.payments"
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["billing", "old_tool", "refund", "search", "users",
                                              "(prompts and resources)"]
    assert {c.get("classname") for c in cases} == {"payments"}
    expected = [d for d in result.deltas if gate is not None and d.severity.at_least(gate)]
    failures = [f for c in cases for f in c.findall("failure")]
    assert sorted(f.get("type") for f in failures) == sorted(d.rule for d in expected)
    failing = sum(1 for c in cases if c.find("failure") is not None)
    for element in (root, suite):
        assert element.get("tests") == str(len(cases))
        assert element.get("failures") == str(failing)
        assert element.get("errors") == "0"
    below = [d for d in result.deltas if d not in expected]
    out = "\n".join(c.findtext("system-out") for c in cases if c.find("system-out") is not None)
    assert len(out.splitlines()) == len(below)
    assert all(d.rule not in out for d in expected if d.rule not in {b.rule for b in below})


def test_junit_failure_details(result: DiffResult) -> None:
    suite = _suite(render_report(result, "junit"))
    billing = next(c for c in suite.findall("testcase") if c.get("name") == "billing")
    (failure,) = billing.findall("failure")
    assert failure.get("type") == "input.required.added"
    assert failure.get("message") == \
        '[BREAKING] actions.get_invoice.input.currency: Argument "currency" is now required'
    assert failure.text is not None
    assert failure.text.splitlines() == [
        "severity: BREAKING", "field: actions.get_invoice.input.currency", "before: optional",
        "after: required (string)", 'hint: Pass "currency" (string).',
        "path: /tools/billing/inputSchema/oneOf/0/required",
        f"id: {next(d.id for d in result.deltas if d.rule == 'input.required.added')}"]
    assert "input.bound.relaxed" not in failure.text
    assert "[SAFE] billing/list actions.list.input.limit" in (billing.findtext("system-out") or "")
    users = next(c for c in suite.findall("testcase") if c.get("name") == "users")
    assert list(users) == []
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["gate"] == "BREAKING" and props["maxSeverity"] == "BREAKING"


def test_junit_without_changes_and_with_ignored(empty: DiffResult, with_ignored: DiffResult) -> None:
    suite = _suite(render_report(empty, "junit"))
    assert suite.get("tests") == "4" and suite.get("failures") == "0"
    suite = _suite(render_report(with_ignored, "junit", gate=Severity.RISKY))
    search = next(c for c in suite.findall("testcase") if c.get("name") == "search")
    assert search.find("failure") is None
    assert "ignored: clients send | URIs already; expires 2027-01-31" in (search.findtext("system-out") or "")


def test_junit_stays_well_formed_with_control_characters() -> None:
    evil = _delta(tool="t\x00ool", description="a\x01b]]><x/>&amp;", before="\ufffe", after="\x1b[31m",
                  severity=Severity.BREAKING)
    suite = _suite(render_report(_result(evil, server="s<&>"), "junit"))
    assert suite.get("name") == "contractdiff.s<&>"
    (case,) = suite.findall("testcase")
    assert case.get("name") == "t[U+0000]ool"
    failure = case.find("failure")
    assert failure is not None and failure.text is not None
    assert failure.get("message") == "[BREAKING] description: a[U+0001]b]]><x/>&amp;"
    assert "before: [U+FFFE]" in failure.text and "after: [U+001B][31m" in failure.text


def test_junit_reads_back_with_junitparser(result: DiffResult) -> None:
    """The same file through a JUnit library CI plugins use (optional)."""
    junitparser = pytest.importorskip("junitparser")
    xml = junitparser.JUnitXml.fromstring(render_report(result, "junit", gate=Severity.RISKY))
    (suite,) = list(xml)
    cases = {case.name: case for case in suite}
    assert len(cases) == 6 and suite.tests == 6 and suite.failures == 4
    assert [r.type for r in cases["search"].result] == ["input.format.changed"]
    assert cases["users"].is_passed and not cases["billing"].is_passed


# --- github ------------------------------------------------------------------------------


def _unescape(text: str) -> str:
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


def _parse_command(line: str) -> tuple[str, dict[str, str], str]:
    """A workflow command as the runner reads it: ``::name k=v,k=v::data``."""
    match = re.fullmatch(r"::(\w+)(?: ([^:]*))?::(.*)", line)
    assert match, line
    props = dict(pair.split("=", 1) for pair in match.group(2).split(",")) if match.group(2) else {}
    return match.group(1), {k: _unescape(v) for k, v in props.items()}, _unescape(match.group(3))


def test_github_escaping_rules() -> None:
    assert escape_data("100% done\r\nnext: a,b") == "100%25 done%0D%0Anext: a,b"
    assert escape_property("100% done\r\nnext: a,b") == "100%25 done%0D%0Anext%3A a%2Cb"
    assert escape_data("%0A") == "%250A"


def test_github_annotations(result: DiffResult) -> None:
    lines = render_report(result, "github", source=SOURCE).splitlines()
    assert len(lines) == len(result.deltas) + 1
    commands = [_parse_command(line) for line in lines]
    assert [c[0] for c in commands[:-1]] == ["error", "error", "error", "warning", "notice", "notice", "notice"]
    assert lines[1] == (f"::error file={SOURCE},title=input.required.added billing/get_invoice::"
                        'Argument "currency" is now required (optional → required (string)). Pass "currency" (string).')
    assert all(props["file"] == SOURCE for _, props, _ in commands[:-1])
    assert commands[0][1]["title"] == "prompt.argument.required.added prompts.summarize.arguments.text"
    assert commands[-1] == ("notice", {"title": "ContractDiff payments"},
                            "3 BREAKING, 1 RISKY, 2 SAFE, 1 COSMETIC (max BREAKING)")
    cosmetic = commands[-2]
    assert cosmetic[2] == f'The description of tool "search" changed (Search things → {NEW_DESCRIPTION})'


def test_github_escapes_hostile_strings_and_drops_file_without_source() -> None:
    evil = _delta(tool="a:b,c%", action="x\ny", description="100%\r\nsecond ::error::fake\rthird", before=None,
                  after=None, hint="Do: this, then that.", severity=Severity.RISKY)
    lines = render_report(_result(evil), "github").splitlines()
    assert len(lines) == 2
    assert lines[0] == ("::warning title=tool.description.changed a%3Ab%2Cc%25/x%0Ay::"
                        "100%25%0Asecond ::error::fake%0Athird. Do: this, then that.")
    name, props, data = _parse_command(lines[0])
    assert (name, props, data) == ("warning", {"title": "tool.description.changed a:b,c%/x\ny"},
                                   "100%\nsecond ::error::fake\nthird. Do: this, then that.")


def test_github_summary_only_when_nothing_changed(empty: DiffResult, with_ignored: DiffResult) -> None:
    assert render_report(empty, "github") == "::notice title=ContractDiff payments::no changes\n"
    lines = render_report(with_ignored, "github").splitlines()
    assert len(lines) == len(with_ignored.deltas) + 1
    assert lines[-1].endswith("(max BREAKING); 1 ignored")
