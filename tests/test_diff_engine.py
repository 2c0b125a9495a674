"""ContractDiff engine: digest fast paths, the tools lists, ordering and stable ids
(RULES.md principle 5), the JSON shape, and properties over generated surfaces: a surface
diffed against itself, or against a reordered copy of itself, has no deltas, and the same
inputs give the same output."""

from __future__ import annotations

import copy
import hashlib
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app import load_surface
from app.diff import Severity, diff, engine
from app.diff.emitter import Emitter
from app.jsontypes import JSON
from app.model import Surface
from tests.strategies import schemas, shuffled, tool_dicts, tools_lists


def surface(*tools: dict[str, JSON]) -> Surface:
    return load_surface({"tools": list(tools)})


def tool(name: str, **properties: JSON) -> dict[str, JSON]:
    return {"name": name, "inputSchema": {"type": "object", "properties": properties}}


BEFORE = surface(tool("billing", amount={"type": "number"}), tool("users"), tool("old"),
                 tool("refunds", id={"type": "string"}))
AFTER = surface(tool("billing", amount={"type": "integer"}), tool("users"), tool("new", x={"type": "string"}),
                tool("refunds", id={"type": "string"}, note={"type": "string"}))


# -- fast paths -------------------------------------------------------------------------------------


def test_equal_server_digests_mean_no_work(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("compared a tool although the server digests are equal")

    monkeypatch.setattr(engine, "compare_tool", fail)
    monkeypatch.setattr(engine, "detect_renames", fail)
    again = surface(tool("billing", amount={"type": "number"}), tool("users"), tool("old"),
                    tool("refunds", id={"type": "string"}))
    result = diff(BEFORE, again)
    assert result.deltas == ()
    assert result.tools.unchanged == ("billing", "old", "refunds", "users")
    assert (result.tools.added, result.tools.removed, result.tools.changed) == ((), (), ())
    assert result.unchanged and result.max_severity is None and result.is_backwards_compatible


def test_only_tools_whose_digests_differ_are_compared(monkeypatch):
    compared: list[str] = []
    real = engine.compare_tool

    def spy(out, before, after, tool_names):
        compared.append(before.name)
        real(out, before, after, tool_names)

    monkeypatch.setattr(engine, "compare_tool", spy)
    result = diff(BEFORE, AFTER)
    assert compared == ["billing", "refunds"]
    assert result.tools.to_json() == {"added": ["new"], "removed": ["old"], "changed": ["billing", "refunds"],
                                      "unchanged": ["users"]}


# -- order, ids, JSON ----------------------------------------------------------------------------


def test_deltas_are_ordered_by_severity_then_tool_action_and_path():
    before = surface(
        tool("b", x={"type": "string"}, y={"type": "string"}),
        tool("a", x={"type": "string"}),
    )
    after = surface(
        tool("b", x={"type": "string", "maxLength": 3, "description": "X"}, z={"type": "string"},
             y={"type": "integer"}),
        tool("a", x={"type": "string", "minLength": 1}, w={"type": "string"}),
    )
    order = [(d.severity.value, d.tool, d.path) for d in diff(before, after).deltas]
    assert order == [
        ("BREAKING", "a", "/tools/a/inputSchema/properties/x/minLength"),
        ("BREAKING", "b", "/tools/b/inputSchema/properties/x/maxLength"),
        ("BREAKING", "b", "/tools/b/inputSchema/properties/y/type"),
        ("SAFE", "a", "/tools/a/inputSchema/properties/w"),
        ("SAFE", "b", "/tools/b/inputSchema/properties/z"),
        ("COSMETIC", "b", "/tools/b/inputSchema/properties/x/description"),
    ]


def test_within_a_tool_actions_sort_after_the_tool_wide_deltas():
    def grouped(limit: int, description: str | None = None) -> dict[str, JSON]:
        schema: dict[str, JSON] = {"type": "object", "oneOf": [
            {"type": "object", "properties": {"action": {"const": "b"}, "n": {"type": "integer", "maximum": limit}}},
            {"type": "object", "properties": {"action": {"const": "a"}, "n": {"type": "integer", "maximum": limit}}},
        ]}
        if description:
            schema["description"] = description
        return {"name": "g", "inputSchema": schema}

    deltas = diff(surface(grouped(10)), surface(grouped(5, "Pick one"))).deltas
    assert [(d.severity.value, d.action) for d in deltas] == [("BREAKING", "a"), ("BREAKING", "b"), ("COSMETIC", None)]


def test_delta_id_is_the_first_12_hex_of_sha256_of_its_identity():
    (delta,) = [d for d in diff(BEFORE, AFTER).deltas if d.tool == "billing"]
    key = f"{delta.rule}|billing||{delta.field}|{delta.path}|{delta.before}|{delta.after}"
    assert key == ("input.type.narrowed|billing||input.amount|/tools/billing/inputSchema/properties/amount/type"
                   "|number|integer")
    assert delta.id == hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]
    assert delta.to_json()["id"] == delta.id


def test_result_json_shape():
    document = diff(BEFORE, AFTER).to_json()
    assert document["maxSeverity"] == "BREAKING"
    assert document["isBackwardsCompatible"] is False
    assert document["summary"] == {"BREAKING": 2, "RISKY": 0, "SAFE": 2, "COSMETIC": 0}
    assert [d["rule"] for d in document["deltas"]] == [
        "input.type.narrowed", "tool.removed", "tool.added", "input.property.added"]
    assert set(document["deltas"][0]) == {"id", "rule", "severity", "category", "tool", "action", "field", "path",
                                          "description", "before", "after", "hint", "witness"}


def test_severity_order_is_breaking_first():
    assert sorted(Severity, key=lambda s: s.rank) == [Severity.BREAKING, Severity.RISKY, Severity.SAFE,
                                                      Severity.COSMETIC]


# -- properties over generated surfaces -----------------------------------------------------------------


@st.composite
def refactored(draw: st.DrawFn) -> tuple[JSON, JSON]:
    """A schema and the same schema with some properties moved into ``$defs`` (or draft-07
    ``definitions``) behind a ``$ref``, and some spelled as a nullable ``anyOf``: equal content."""
    schema = draw(schemas())
    copy_ = copy.deepcopy(schema)
    holder = draw(st.sampled_from(["$defs", "definitions"]))
    for index, name in enumerate(list(copy_.get("properties", {}))):
        prop = copy_["properties"][name]
        how = draw(st.sampled_from(["keep", "ref", "nullable"]))
        if how == "ref":
            copy_.setdefault(holder, {})[f"D{index}"] = prop
            copy_["properties"][name] = {"$ref": f"#/{holder}/D{index}"}
        elif how == "nullable" and isinstance(prop.get("type"), str) and set(prop) == {"type"}:
            copy_["properties"][name] = {"anyOf": [{"type": prop["type"]}, {"type": "null"}]}
            schema["properties"][name] = {"type": [prop["type"], "null"]}
    return schema, copy_


def compare(before: JSON, after: JSON) -> list[str]:
    """The rules the per-tool comparison reports, with the digest fast path out of the way."""
    out = Emitter()
    b, a = surface(before), surface(after)
    engine.compare_tool(out, b.tools[before["name"]], a.tools[after["name"]], frozenset({after["name"]}))
    return [d.rule for d in out.deltas]


@settings(max_examples=25, deadline=None)
@given(tools_lists(max_tools=3))
def test_a_surface_diffed_with_itself_has_no_deltas(result):
    assert diff(load_surface(result), load_surface(result)).deltas == ()


@settings(max_examples=40, deadline=None)
@given(tool_dicts("t"))
def test_the_comparison_finds_nothing_between_a_tool_and_itself(entry):
    # bypasses the digest fast path: the schema walk itself must find nothing
    assert compare(entry, copy.deepcopy(entry)) == []


@settings(max_examples=40, deadline=None)
@given(tool_dicts("t"), st.randoms(use_true_random=False))
def test_the_comparison_finds_nothing_in_a_reordered_copy(entry, rng: random.Random):
    # key order, required/type order: what must not matter
    reordered = shuffled({"tools": [entry]}, rng)["tools"][0]
    assert compare(entry, reordered) == []


@settings(max_examples=20, deadline=None)
@given(tools_lists(max_tools=3), st.randoms(use_true_random=False))
def test_a_reordered_surface_has_no_deltas(result, rng: random.Random):
    assert diff(load_surface(result), load_surface(shuffled(result, rng))).deltas == ()


@settings(max_examples=40, deadline=None)
@given(refactored())
def test_moving_arguments_behind_references_is_no_change(pair):
    schema, refactored_schema = pair
    assert compare({"name": "t", "inputSchema": schema}, {"name": "t", "inputSchema": refactored_schema}) == []


@settings(max_examples=20, deadline=None)
@given(tools_lists(max_tools=2), tools_lists(max_tools=2))
def test_the_same_inputs_give_the_same_output(first, second):
    before, after = load_surface(first), load_surface(second)
    once = json.dumps(diff(before, after).to_json(), sort_keys=True)
    again = json.dumps(diff(load_surface(copy.deepcopy(first)), load_surface(copy.deepcopy(second))).to_json(),
                       sort_keys=True)
    assert once == again
    deltas = diff(before, after).deltas
    assert list(deltas) == sorted(deltas, key=lambda d: d.sort_key())
    assert len({d.id for d in deltas}) == len(deltas)


@pytest.mark.parametrize("severity", ["BREAKING", "RISKY", "SAFE", "COSMETIC"])
def test_every_rule_of_a_family_is_registered_with_its_table_severity(severity):
    # a spot check that the registry carries RULES.md's severities (the rows are tested one by one elsewhere)
    from app.diff.registry import REGISTRY

    by_severity = {rule.id for rule in REGISTRY.values() if rule.severity.value == severity}
    expected = {
        "BREAKING": {"tool.removed", "tool.renamed", "input.required.added", "output.type.widened",
                     "prompt.argument.removed", "resource.removed", "action.removed"},
        "RISKY": {"tool.meta.changed", "input.pattern.changed", "output.schema.removed", "input.unclassified",
                  "output.unclassified", "tool.unclassified", "resource.mime-type.changed"},
        "SAFE": {"tool.added", "input.required.removed", "output.type.narrowed", "output.schema.added",
                 "prompt.argument.added", "action.added"},
        "COSMETIC": {"tool.title.changed", "input.description.changed", "output.description.changed",
                     "input.deprecated.added", "prompt.description.changed", "resource.description.changed"},
    }[severity]
    assert expected <= by_severity
