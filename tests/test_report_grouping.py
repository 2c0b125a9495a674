"""Report noise (issue 10 item 14): same-rule prompt and resource deltas are one line in the
text report, one row in the markdown report and one count in their summaries, so 100 removed
resources never bury 7 removed tools; JSON, SARIF, JUnit and GitHub keep one entry per delta."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from app import load_surface
from app.diff import Delta, DiffResult, Severity, diff
from app.diff.reports import render_report
from app.diff.reports.common import GROUP_AT, Group, arrange
from tests.conftest import CORPUS

TOOLS = [f"tool_{i}" for i in range(7)]


def surface(tools: list[str], resources: int, prompts: int = 0, scheme: str = "test") -> dict:
    return {
        "tools": [{"name": name, "inputSchema": {"type": "object"}} for name in tools],
        "resources": [{"uri": f"{scheme}://static/{i}", "name": f"static {scheme} {i}", "mimeType": "text/plain"}
                      for i in range(resources)],
        "prompts": [{"name": f"{scheme}_prompt_{i}"} for i in range(prompts)],
    }


def hundred_resources_and_seven_tools() -> DiffResult:
    """7 tools removed, 100 resources removed (nothing alike added)."""
    return diff(load_surface(surface(TOOLS, 100)), load_surface(surface([], 0)))


def test_text_shows_every_removed_tool_and_one_line_for_the_resources():
    lines = render_report(hundred_resources_and_seven_tools(), "text").splitlines()
    assert lines[0] == "ContractDiff: 107 BREAKING, 0 RISKY, 0 SAFE, 0 COSMETIC (max BREAKING)"
    assert lines[1] == "  tools: 7 BREAKING; prompts and resources: 100 resources removed"
    assert [line.split(" ", 2)[1] for line in lines[2:9]] == TOOLS  # the tools first
    assert lines[9].startswith("[BREAKING] 100 resources removed: test://static/0, test://static/1, ")
    assert lines[9].endswith(" and 95 more")
    assert len(lines) == 10


def test_json_sarif_junit_and_github_keep_one_entry_per_delta():
    result = hundred_resources_and_seven_tools()
    assert len(json.loads(render_report(result, "json"))["deltas"]) == 107
    assert len(json.loads(render_report(result, "sarif"))["runs"][0]["results"]) == 107
    assert len(ET.fromstring(render_report(result, "junit")).findall(".//failure")) == 107
    assert render_report(result, "github").count("::error ") == 107


def test_markdown_has_one_row_for_the_resources_and_counts_them_in_the_summary():
    out = render_report(hundred_resources_and_seven_tools(), "markdown")
    section = out[out.index("### Prompts and resources"):]
    rows = [line for line in section.splitlines() if line.startswith("| :x:")]
    assert len(rows) == 1 and "100 resources removed" in rows[0] and "and 95 more" in rows[0]
    assert "prompts and resources: 100 resources removed" in out
    assert out.count("### Tool ") == 7


def test_fewer_than_three_of_a_rule_are_listed_one_by_one():
    result = diff(load_surface(surface(["a"], GROUP_AT - 1)), load_surface(surface(["a"], 0)))
    lines = render_report(result, "text").splitlines()
    assert [line.split(" ", 2)[1] for line in lines[2:]] == ["resources.test://static/0:", "resources.test://static/1:"]
    assert lines[1] == "  tools: no changes; prompts and resources: 2 resources removed"


def test_groups_are_per_rule_and_severity():
    before, after = surface([], 4, prompts=3), surface([], 0, prompts=0)
    after["resources"] = [{"uri": f"new://x/{i}", "name": f"other {i}", "mimeType": "text/csv"} for i in range(3)]
    lines = render_report(diff(load_surface(before), load_surface(after)), "text").splitlines()
    assert [line.split(":", 1)[0] for line in lines[2:]] == [
        "[BREAKING] 3 prompts removed", "[BREAKING] 4 resources removed", "[SAFE] 3 resources added"]


def test_without_prompt_or_resource_changes_the_summary_is_one_line():
    result = diff(load_surface(surface(["a", "b"], 5)), load_surface(surface(["a"], 5)))
    assert render_report(result, "text").splitlines()[:2] == [
        "ContractDiff: 1 BREAKING, 0 RISKY, 0 SAFE, 0 COSMETIC (max BREAKING)",
        '[BREAKING] b tool: Tool "b" was removed (b → (none))']


def test_security_deltas_about_prompts_are_never_grouped():
    before = {"tools": [], "prompts": []}
    after = {"tools": [], "prompts": [{"name": f"p{i}", "description": f"See https://x{i}.example."}
                                      for i in range(4)]}
    entries = arrange(diff(load_surface(before), load_surface(after)).deltas)
    assert [entry.rule for entry in entries if isinstance(entry, Group)] == ["prompt.added"]
    assert sum(1 for entry in entries if isinstance(entry, Delta) and entry.category == "security") == 4


def test_everything_2025_9_12_to_2026_1_14_reads_tools_first():
    before = load_surface(Path(CORPUS / "everything" / "2025.9.12.json"))
    after = load_surface(Path(CORPUS / "everything" / "2026.1.14.json"))
    lines = render_report(diff(before, after), "text").splitlines()
    breaking = [line for line in lines if line.startswith("[BREAKING]")]
    assert sum("resource" in line and "removed" in line for line in breaking) == 1
    first_prompt = next(i for i, line in enumerate(breaking) if "prompts." in line or "resources" in line)
    assert all(" tool: " in line or " input." in line for line in breaking[:first_prompt])
    assert len(lines) < 60  # one line per tool change, a handful for 100+ prompt and resource changes


SEVERITIES = st.sampled_from(list(Severity))
RULES = st.sampled_from(["resource.removed", "resource.added", "prompt.removed", "tool.removed",
                         "security.new-tool-cue"])


@st.composite
def deltas(draw: st.DrawFn) -> Delta:
    rule = draw(RULES)
    item = draw(st.integers(0, 30))
    tool = f"t{item}" if rule == "tool.removed" else None
    category = rule.split(".")[0] if rule != "security.new-tool-cue" else "security"
    return Delta(rule, draw(SEVERITIES), category, tool, None, f"{category}s.x{item}", f"/{category}s/x{item}",
                 "d", None, None, None)


@given(st.lists(deltas(), max_size=40, unique_by=lambda d: d.id))
def test_arranging_shows_every_delta_exactly_once_worst_first(items):
    ordered = sorted(items, key=Delta.sort_key)
    entries = arrange(ordered)
    flat = [d for entry in entries for d in (entry.deltas if isinstance(entry, Group) else (entry,))]
    assert sorted(flat, key=Delta.sort_key) == ordered
    ranks = [entry.severity.rank for entry in entries]
    assert ranks == sorted(ranks)
    assert all(len(entry.deltas) >= GROUP_AT and len({d.rule for d in entry.deltas}) == 1
               for entry in entries if isinstance(entry, Group))
