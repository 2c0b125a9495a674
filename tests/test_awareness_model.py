"""Awareness a model can use (issue 10): in a validation error the changes about the arguments
that failed come first, then the action's other BREAKING input changes, then the rest; claims of
less danger are not shown; no line contradicts the ``<instructions>``; and a call to a tool the
lock knows but the live surface lacks gets a section that says it was removed and what replaces
it (service function and ``GET /servers/{s}/awareness``)."""

from __future__ import annotations

import copy
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from app import load_surface
from app.awareness import (
    AWARENESS_INSTRUCTIONS,
    CONFIRM_INSTRUCTIONS,
    argument_path,
    prioritise,
    relevant_deltas,
    render_awareness,
    render_deltas,
    render_removed,
)
from app.diff import diff
from app.diff.emitter import Emitter, Scope
from app.diff.model import Delta, DiffResult, Severity, ToolChanges
from app.diff.registry import REGISTRY
from app.diff.rules.annotations_surface import only_less_dangerous
from app.errors import parse_tool_error
from app.service import Governance
from app.store import FileStore
from tests.helpers_service import api, assert_problem, lock

BREAKING, RISKY = Severity.BREAKING, Severity.RISKY


def tool(name: str, properties: dict | None = None, required: tuple[str, ...] = (), **fields: object) -> dict:
    schema: dict = {"type": "object", "properties": properties or {}}
    if required:
        schema["required"] = list(required)
    return {"name": name, "inputSchema": schema, **fields}


def result_of(before: list[dict], after: list[dict]) -> DiffResult:
    return diff(load_surface({"tools": before}), load_surface({"tools": after}))


def fields(section: str) -> list[str]:
    return [change.get("field") for change in ET.fromstring(section).iter("change")]


# --- claims of less danger --------------------------------------------------------------------------


@pytest.mark.parametrize("before,after", [
    (None, {"readOnlyHint": True}),  # tool.annotation.declared
    (None, {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True}),
    ({"readOnlyHint": False}, {"readOnlyHint": True}),  # read-only.gained
    ({"destructiveHint": True}, {"destructiveHint": False}),  # destructive.lost
    ({"idempotentHint": False}, {"idempotentHint": True}),  # idempotent gained
])
def test_claims_of_less_danger_are_not_shown_to_the_model(before, after):
    old = tool("t") if before is None else tool("t", annotations=before)
    result = result_of([old], [tool("t", annotations=after)])
    assert result.deltas and all(only_less_dangerous(d) for d in result.deltas)
    assert render_awareness(result, "t") == ""


@pytest.mark.parametrize("before,after,rule", [
    ({"readOnlyHint": True}, {"readOnlyHint": False}, "tool.annotation.read-only.lost"),
    ({"destructiveHint": False}, {"destructiveHint": True}, "tool.annotation.destructive.gained"),
    ({"idempotentHint": True}, {"idempotentHint": False}, "tool.annotation.idempotent.changed"),
    ({"openWorldHint": False}, {"openWorldHint": True}, "tool.annotation.open-world.widened"),
])
def test_changes_that_make_a_tool_more_dangerous_are_shown(before, after, rule):
    result = result_of([tool("t", annotations=before)], [tool("t", annotations=after)])
    section = render_awareness(result, "t")
    assert [c.get("rule") for c in ET.fromstring(section).iter("change")] == [rule]


# --- order in a validation error --------------------------------------------------------------------


BEFORE = [tool("pay", {"amount": {"type": "number"}, "currency": {"type": "string"},
                       "note": {"type": "string"}, "address": {"type": "object", "properties": {
                           "city": {"type": "string"}}}}, ("amount",))]
AFTER = [tool("pay", {"amount": {"type": "integer"}, "currency": {"type": "string", "format": "iso-4217"},
                      "note": {"type": "string", "maxLength": 10}, "address": {"type": "object", "properties": {
                          "city": {"type": "string", "minLength": 2}}}}, ("amount", "note"), _meta={"v": 2})]


def test_without_failed_arguments_the_order_is_severity_then_field():
    assert fields(render_awareness(result_of(BEFORE, AFTER), "pay", max_changes=20)) == [
        "input.address.city", "input.amount", "input.note", "input.note", "_meta", "input.currency"]


def test_failed_arguments_first_then_other_breaking_inputs_then_the_rest():
    section = render_awareness(result_of(BEFORE, AFTER), "pay", max_changes=20, failed=["currency"])
    # currency's change is RISKY, yet first: it is what the model got wrong
    assert fields(section) == [
        "input.currency", "input.address.city", "input.amount", "input.note", "input.note", "_meta"]


def test_a_nested_problem_matches_its_parents_change_and_the_other_way_round():
    result = result_of(BEFORE, AFTER)
    assert fields(render_awareness(result, "pay", max_changes=20, failed=["address"]))[0] == "input.address.city"
    assert fields(render_awareness(result, "pay", max_changes=20, failed=["note", "amount"]))[:3] == [
        "input.amount", "input.note", "input.note"]


def test_the_failed_arguments_survive_the_cap():
    section = render_awareness(result_of(BEFORE, AFTER), "pay", max_changes=1, failed=["currency"])
    assert fields(section) == ["input.currency"]
    assert ET.fromstring(section).findtext("max_severity") == "RISKY"  # the worst listed


def test_argument_paths_of_fields():
    def at(field: str, action: str | None = None) -> str | None:
        return argument_path(Delta("input.x", BREAKING, "input", "t", action, field, "/p", "d"))

    assert at("input.address.city") == "address.city"
    assert at("input") == "(root)"
    assert at("input.tags[]") == "tags[]"
    assert at("actions.get.input.id", "get") == "id"
    assert at("actions.get.input", "get") == "(root)"
    assert at("output.total") is None and at("description") is None and at("inputs.x") is None


def test_an_array_position_matches_the_items_change():
    items = Delta("input.bound.tightened", BREAKING, "input", "t", None, "input.items[].qty", "/p", "d")
    other = Delta("input.type.changed", BREAKING, "input", "t", None, "input.z", "/q", "d")
    assert prioritise([other, items], ["items[3].qty"]) == [items, other]
    assert prioritise([other, items], []) == [other, items]


def test_the_service_puts_the_failed_arguments_first(tmp_path: Path):
    with api(tmp_path) as client:
        lock(client, {"tools": copy.deepcopy(BEFORE)}, server="shop")
        client.put("/servers/shop/live", json={"tools": copy.deepcopy(AFTER)})
        reply = client.post("/servers/shop/validation-error",
                            json={"tool": "pay", "arguments": {"amount": 1, "note": "hi", "currency": 5}})
        info = parse_tool_error(reply.json()["xml"])
        assert info is not None and list(info.fields) == ["currency"]
        assert info.awareness is not None and info.awareness.changes[0].field == "input.currency"
        # the plain awareness (no failed arguments) keeps the severity order
        plain = client.get("/servers/shop/awareness", params={"tool": "pay"}).text
        assert fields(plain)[0] == "input.address.city"


# --- instructions ------------------------------------------------------------------------------------


def test_a_deprecation_that_names_a_replacement_says_to_call_it():
    before = [tool("read_file", description="Read."), tool("read_text_file")]
    after = [tool("read_file", description="DEPRECATED: Use read_text_file instead."), tool("read_text_file")]
    section = render_awareness(result_of(before, after), "read_file")
    root = ET.fromstring(section)
    assert root.findtext("instructions") == ('Call "read_text_file" instead of "read_file", with arguments that fit '
                                             "its contract. Do not explain the error.")
    assert root.find("contract_changes/change/fix").text == 'Call "read_text_file" instead of "read_file".'


def test_a_fix_that_asks_for_confirmation_is_in_the_instructions():
    result = result_of([tool("t", annotations={"readOnlyHint": True})], [tool("t", annotations={})])
    assert ET.fromstring(render_awareness(result, "t")).findtext("instructions") == CONFIRM_INSTRUCTIONS


def test_otherwise_adjust_and_call_again():
    assert ET.fromstring(render_awareness(result_of(BEFORE, AFTER), "pay")).findtext("instructions") == \
        AWARENESS_INSTRUCTIONS


def _every_shown_rule() -> list[tuple[str, str]]:
    """Rules of deltas that can concern a tool (prompt and resource deltas have no tool)."""
    return sorted((rule.id, rule.when) for rule in REGISTRY.values()
                  if rule.severity in (BREAKING, RISKY) and rule.hint and rule.category not in ("prompt", "resource"))


@pytest.mark.parametrize(("rule_id", "when"), _every_shown_rule())
def test_no_fix_contradicts_the_instructions(rule_id, when):
    """Every BREAKING/RISKY rule's fix, shown alone to a model calling tool "t": the
    instructions never say "call the tool again" beside "do not call it", never leave out a
    replacement a fix names, and say to confirm with the user when a fix does."""
    out = Emitter()
    is_rename = rule_id.endswith(".renamed")
    listed = {"fusion.readOnlyActions": ("not listed", "listed"), "fusion.destructiveActions": ("not listed", "listed")}
    before, after = listed.get(rule_id, ("old_t", "t") if is_rename else ("t", "other_tool"))
    if when == "left" and rule_id in listed:
        before, after = after, before
    if rule_id == "tool.removed" and not when:
        after = None  # no replacement named
    out.emit(rule_id, Scope("t"), field="input.x", path="/tools/t/inputSchema/properties/x", before=before,
             after=after, when=when, action="a")
    section = render_deltas([d for d in out.deltas if not only_less_dangerous(d)], "t")
    if not section:
        return
    root = ET.fromstring(section)
    told = root.findtext("instructions") or ""
    for change in root.iter("change"):
        fix = change.findtext("fix") or ""
        if "Do not call" in fix or "no longer exists" in fix or "Do not repeat" in fix:
            assert "call the tool again" not in told and "no longer exists" in told, (fix, told)
        other = re.search(r'Call "([^"]+)" instead of "t"', fix)
        if other:  # another tool to call: the instructions must name it too
            assert f'Call "{other.group(1)}" instead' in told, (fix, told)
        if "confirm with the user" in fix.lower():
            assert "confirm with the user" in told, (fix, told)


# --- removed and renamed tools -----------------------------------------------------------------------

ADD = tool("getSum", {"a": {"type": "number"}, "b": {"type": "number"}}, ("a", "b"))
SUM = tool("get-sum", {"a": {"type": "number"}, "b": {"type": "number"}, "c": {"type": "number"}}, ("a", "b", "c"))


def test_a_renamed_tool_says_what_replaces_it_and_its_breaking_changes():
    result = result_of([ADD], [SUM])
    section = render_removed(result, "getSum", lock_version=3, locked_at="2026-11-20")
    root = ET.fromstring(section)
    assert root.findtext("system_note") == ('Tool "getSum" was removed since the known-good lockfile (v3, '
                                            '2026-11-20). "get-sum" replaces it.')
    assert root.findtext("replacement") == "get-sum"
    assert [c.get("rule") for c in root.iter("change")] == ["tool.renamed", "input.property.added-required"]
    assert root.findtext("instructions").startswith(
        'Do not call "getSum" again: it no longer exists. Call "get-sum"')
    info = parse_tool_error(section)
    assert info is not None and info.awareness is not None and info.awareness.max_severity == "BREAKING"


def test_a_removed_tool_whose_deprecation_named_a_replacement():
    before = [tool("read_file", description="DEPRECATED: Use read_text_file instead."), tool("read_text_file")]
    root = ET.fromstring(render_removed(result_of(before, [tool("read_text_file")]), "read_file"))
    assert root.findtext("replacement") == "read_text_file"
    assert [c.get("rule") for c in root.iter("change")] == ["tool.removed"]


def test_a_removed_tool_without_replacement():
    root = ET.fromstring(render_removed(result_of([tool("ping"), tool("echo")], [tool("echo")]), "ping"))
    assert root.find("replacement") is None
    assert root.findtext("system_note") == 'Tool "ping" was removed since the known-good lockfile.'
    assert "no longer available" in root.findtext("instructions")


def test_the_awareness_of_a_removed_tool_is_its_removal_section():
    result = result_of([tool("ping"), tool("echo")], [tool("echo")])
    assert render_awareness(result, "ping") == render_removed(result, "ping")


def test_a_tool_that_was_not_removed_has_no_removal_section():
    result = result_of([ADD], [SUM])
    assert render_removed(result, "get-sum") == "" and render_removed(result, "never") == ""
    empty = DiffResult("s", "a", "b", ToolChanges())
    assert render_removed(empty, "getSum") == ""


def test_the_removal_of_an_ignored_delta_is_still_told():
    result = result_of([ADD], [SUM])
    from dataclasses import replace

    from app.diff.model import IgnoredDelta
    renamed = next(d for d in result.deltas if d.rule == "tool.renamed")
    policy_applied = replace(result, deltas=tuple(d for d in result.deltas if d is not renamed),
                             ignored=(IgnoredDelta(renamed, "known"),))
    assert ET.fromstring(render_removed(policy_applied, "getSum")).findtext("replacement") == "get-sum"


def test_awareness_for_a_removed_tool_over_http(tmp_path: Path):
    with api(tmp_path) as client:
        lock(client, {"tools": [copy.deepcopy(ADD), tool("ping"), tool("echo")]}, server="calc")
        client.put("/servers/calc/live", json={"tools": [copy.deepcopy(SUM), tool("echo")]})
        for _ in range(2):  # the second answer comes from the hot path's cache
            renamed = client.get("/servers/calc/awareness", params={"tool": "getSum"})
            assert renamed.status_code == 200 and renamed.headers["content-type"].startswith("application/xml")
            assert ET.fromstring(renamed.text).findtext("replacement") == "get-sum"
        gone = client.get("/servers/calc/awareness", params={"tool": "ping"})
        assert gone.status_code == 200 and "no longer available" in gone.text
        assert_problem(client.get("/servers/calc/awareness", params={"tool": "never"}), 404, "not_found")


def test_the_service_function_for_unknown_tools(tmp_path: Path):
    gov = Governance(FileStore(tmp_path))
    with api(tmp_path) as client:
        lock(client, {"tools": [copy.deepcopy(ADD), tool("echo")]}, server="calc")
        client.put("/servers/calc/live", json={"tools": [copy.deepcopy(SUM), tool("echo")]})
    renamed = gov.unknown_tool("calc", "getSum")
    assert (renamed.removed, renamed.replacement, renamed.available) == (True, "get-sum", ("echo", "get-sum"))
    assert "<replacement>get-sum</replacement>" in renamed.xml
    never = gov.unknown_tool("calc", "never")
    assert (never.removed, never.replacement, never.xml, never.available) == (False, None, "", ("echo", "get-sum"))


def test_the_service_function_without_a_live_report(tmp_path: Path):
    with api(tmp_path) as client:
        lock(client, {"tools": [tool("echo")]}, server="calc")
        assert_problem(client.get("/servers/calc/awareness", params={"tool": "add"}), 404)
    gov = Governance(FileStore(tmp_path))
    assert gov.unknown_tool("calc", "add").available == ("echo",)
    with pytest.raises(Exception, match="unknown server"):
        gov.unknown_tool("nobody", "add")


def test_relevant_deltas_take_failed_arguments_too():
    result = result_of(BEFORE, AFTER)
    assert relevant_deltas(result, "pay", failed=["currency"])[0].field == "input.currency"
