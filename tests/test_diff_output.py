"""ContractDiff, output schemas: every row of RULES.md "Output schema" and the direction
flip (what the model receives: the new output must still satisfy the old schema, so a
narrower output is SAFE and a wider one is not).

Each case diffs two one-tool surfaces and asserts the complete list of deltas.
"""

from __future__ import annotations

from typing import Any

import pytest

from app import load_surface
from app.diff import diff
from app.jsontypes import JSON

OUT = "/tools/t/outputSchema"


def surface(output_schema: JSON | None, input_schema: JSON | None = None) -> Any:
    tool: dict[str, JSON] = {"name": "t", "inputSchema": input_schema or {"type": "object"}}
    if output_schema is not None:
        tool["outputSchema"] = output_schema
    return load_surface({"tools": [tool]})


def run(before: JSON | None, after: JSON | None) -> list[tuple[str, str, str | None, str | None, str, str]]:
    result = diff(surface(before), surface(after))
    return [(d.rule, d.severity.value, d.tool, d.action, d.field, d.path) for d in result.deltas]


def obj(properties: dict[str, JSON] | None = None, required: list[str] | None = None, **keywords: JSON) -> JSON:
    schema: dict[str, JSON] = {"type": "object", "properties": properties or {}}
    if required:
        schema["required"] = required
    return {**schema, **keywords}


def field(**schema: JSON) -> JSON:
    """A result with one field ``a`` of this schema."""
    return obj({"a": schema})


def one(rule: str, severity: str, path: str, name: str = "output.a") -> list[tuple[str, str, str, None, str, str]]:
    return [(rule, severity, "t", None, name, OUT + path)]


def test_output_schema_added_is_safe_and_removed_is_risky():
    schema = obj({"a": {"type": "string"}})
    assert run(None, schema) == one("output.schema.added", "SAFE", "", "output")
    assert run(schema, None) == one("output.schema.removed", "RISKY", "", "output")


PAIRED = {
    "a required field": (
        obj({"a": {"type": "string"}}, ["a"]), obj(),
        one("output.property.removed", "BREAKING", "/properties/a"),
        one("output.property.added", "SAFE", "/properties/a")),
    "an optional field": (
        obj({"a": {"type": "string"}}), obj(),
        one("output.property.removed", "RISKY", "/properties/a"),
        one("output.property.added", "SAFE", "/properties/a")),
    "required": (
        obj({"a": {"type": "string"}}, ["a"]), obj({"a": {"type": "string"}}),
        one("output.required.removed", "RISKY", "/required"),
        one("output.required.added", "SAFE", "/required")),
    # the flip: number -> integer is SAFE here (BREAKING for input), integer -> number BREAKING
    "number -> integer": (
        field(type="number"), field(type="integer"),
        one("output.type.narrowed", "SAFE", "/properties/a/type"),
        one("output.type.widened", "BREAKING", "/properties/a/type")),
    "null removed": (
        field(type=["string", "null"]), field(type="string"),
        one("output.type.narrowed", "SAFE", "/properties/a/type"),
        one("output.type.widened", "BREAKING", "/properties/a/type")),
    "string -> boolean": (
        field(type="string"), field(type="boolean"),
        one("output.type.changed", "BREAKING", "/properties/a/type"),
        one("output.type.changed", "BREAKING", "/properties/a/type")),
    "an enum value": (
        field(type="string", enum=["ok", "failed"]), field(type="string", enum=["ok", "failed", "partial"]),
        one("output.enum.value-added", "RISKY", "/properties/a/enum"),
        one("output.enum.value-removed", "SAFE", "/properties/a/enum")),
    "a maximum": (
        field(type="integer", maximum=10), field(type="integer", maximum=100),
        one("output.bound.relaxed", "RISKY", "/properties/a/maximum"),
        one("output.bound.tightened", "SAFE", "/properties/a/maximum")),
    "a maxItems": (
        field(type="array", maxItems=10), field(type="array"),
        one("output.bound.relaxed", "RISKY", "/properties/a/maxItems"),
        one("output.bound.tightened", "SAFE", "/properties/a/maxItems")),
    "a description": (
        field(type="string"), field(type="string", description="The status"),
        one("output.description.changed", "COSMETIC", "/properties/a/description"),
        one("output.description.changed", "COSMETIC", "/properties/a/description")),
}


@pytest.mark.parametrize("name", list(PAIRED))
def test_paired_rules_forward(name):
    x, y, forward, _ = PAIRED[name]
    assert run(x, y) == forward


@pytest.mark.parametrize("name", list(PAIRED))
def test_paired_rules_backward(name):
    x, y, _, backward = PAIRED[name]
    assert run(y, x) == backward


@pytest.mark.parametrize("name,before,after,path", [
    # kinds of change the output table has no row for are never SAFE by default
    ("contentMediaType", field(type="string"), field(type="string", contentMediaType="text/csv"),
     "/properties/a/contentMediaType"),
    ("an unknown keyword", field(type="string", **{"x-unit": "ms"}), field(type="string", **{"x-unit": "s"}),
     "/properties/a/x-unit"),
])
def test_changes_without_an_output_rule_are_unclassified_risky(name, before, after, path):
    assert run(before, after) == one("output.unclassified", "RISKY", path)


@pytest.mark.parametrize("name,before,after,rule,severity,path", [
    # every kind of the shared walk has an output row: the direction flips (narrower is SAFE)
    ("a pattern added", field(type="string"), field(type="string", pattern="^[0-9]+$"),
     "output.pattern.added", "SAFE", "/properties/a/pattern"),
    ("a pattern removed", field(type="string", pattern="^[0-9]+$"), field(type="string"),
     "output.pattern.removed", "RISKY", "/properties/a/pattern"),
    ("an enum restriction dropped", field(type="string", enum=["ok"]), field(type="string"),
     "output.enum.removed", "RISKY", "/properties/a/enum"),
    ("an enum restriction added", field(type="string"), field(type="string", enum=["ok", "no"]),
     "output.enum.added", "SAFE", "/properties/a/enum"),
    ("a union branch added (a new result shape)", field(anyOf=[{"type": "string", "maxLength": 3}]),
     field(anyOf=[{"type": "string", "maxLength": 3}, {"type": "object", "required": ["code"]}]),
     "output.union.branch-added", "BREAKING", "/properties/a/anyOf/1"),
    ("a union branch removed", field(anyOf=[{"type": "string", "maxLength": 3}, {"type": "object"}]),
     field(anyOf=[{"type": "string", "maxLength": 3}]), "output.union.branch-removed", "SAFE",
     "/properties/a/anyOf/1"),
    ("a default changed (nothing applies an output default)", field(type="string", default="a"),
     field(type="string", default="b"), "output.default.changed", "COSMETIC", "/properties/a/default"),
])
def test_output_rows_flip_the_input_direction(name, before, after, rule, severity, path):
    assert run(before, after) == one(rule, severity, path)


# -- the direction flip, side by side -----------------------------------------------------------

FLIPS = [
    # (before, after, input severity, output severity)
    (field(type="integer"), field(type="number"), "SAFE", "BREAKING"),
    (field(type="number"), field(type="integer"), "BREAKING", "SAFE"),
    (field(type="string"), field(type=["string", "null"]), "SAFE", "BREAKING"),
    (field(type="string", enum=["a"]), field(type="string", enum=["a", "b"]), "SAFE", "RISKY"),
    (field(type="string", enum=["a", "b"]), field(type="string", enum=["a"]), "BREAKING", "SAFE"),
    (field(type="string", maxLength=5), field(type="string", maxLength=9), "SAFE", "RISKY"),
    (field(type="string", maxLength=9), field(type="string", maxLength=5), "BREAKING", "SAFE"),
    (obj({"a": {"type": "string"}}), obj({"a": {"type": "string"}}, ["a"]), "BREAKING", "SAFE"),
    (obj({"a": {"type": "string"}}, ["a"]), obj({"a": {"type": "string"}}), "SAFE", "RISKY"),
]


@pytest.mark.parametrize("before,after,input_severity,output_severity", FLIPS)
def test_the_same_change_is_graded_by_direction(before, after, input_severity, output_severity):
    as_input = diff(surface(None, before), surface(None, after)).deltas
    as_output = run(before, after)
    assert [d.severity.value for d in as_input] == [input_severity]
    assert [severity for _, severity, *_ in as_output] == [output_severity]
    assert as_input[0].rule.split(".", 1)[1] == as_output[0][0].split(".", 1)[1]  # the same kind of change


# -- references in output schemas (pydantic puts nested models in $defs) -------------------------


def time_result(datetime_type: str) -> JSON:
    return {
        "type": "object",
        "properties": {"source": {"$ref": "#/$defs/TimeResult"}, "target": {"$ref": "#/$defs/TimeResult"}},
        "required": ["source", "target"],
        "$defs": {"TimeResult": {"type": "object", "properties": {"datetime": {"type": datetime_type}},
                                 "required": ["datetime"]}},
    }


def test_a_change_in_a_shared_definition_is_reported_where_the_model_reads_it():
    assert run(time_result("string"), time_result("integer")) == [
        ("output.type.changed", "BREAKING", "t", None, "output.source.datetime",
         OUT + "/properties/source/properties/datetime/type"),
        ("output.type.changed", "BREAKING", "t", None, "output.target.datetime",
         OUT + "/properties/target/properties/datetime/type"),
    ]


def test_inlining_a_definition_is_no_change():
    inlined = time_result("string")
    definition = inlined.pop("$defs")["TimeResult"]
    inlined["properties"] = {"source": definition, "target": definition}
    assert run(time_result("string"), inlined) == []


def test_a_recursive_output_schema():
    def schema(extra: JSON) -> JSON:
        node = {"type": "object", "properties": {"id": {"type": "string"}, **extra,
                                                 "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}
        return {"$ref": "#/$defs/Node", "$defs": {"Node": node}}

    assert run(schema({}), schema({"size": {"type": "integer"}})) == one(
        "output.property.added", "SAFE", "/properties/size", "output.size")
