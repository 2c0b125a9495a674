"""ContractDiff, input schemas: every row of RULES.md "Input schema", in both directions
where the table pairs two rules, plus effective values (principle 2), $ref and recursive
schemas, the draft-07 spellings, nested names and paths, and the unclassified safety net.

Each case diffs two minimal one-tool surfaces and asserts the complete list of deltas
(rule, severity, tool, action, field, path): nothing else may appear.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from app import load_surface
from app.diff import diff
from app.jsontypes import JSON

SCHEMA = "/tools/t/inputSchema"
DRAFT07: dict[str, JSON] = {"$schema": "http://json-schema.org/draft-07/schema#"}
"""Draft-07 spellings are keywords only in a draft-07 schema (2020-12, the default, ignores them)."""


def run(before: JSON, after: JSON) -> list[tuple[str, str, str | None, str | None, str, str]]:
    """Every delta of a one-tool surface whose inputSchema goes from ``before`` to ``after``."""
    result = diff(load_surface({"tools": [{"name": "t", "inputSchema": before}]}),
                  load_surface({"tools": [{"name": "t", "inputSchema": after}]}))
    return [(d.rule, d.severity.value, d.tool, d.action, d.field, d.path) for d in result.deltas]


def obj(properties: dict[str, JSON] | None = None, required: list[str] | None = None, **keywords: JSON) -> JSON:
    schema: dict[str, JSON] = {"type": "object", "properties": properties or {}}
    if required:
        schema["required"] = required
    return {**schema, **keywords}


def arg(**schema: JSON) -> JSON:
    """A tool with one argument ``a`` of this schema."""
    return obj({"a": schema})


@dataclass(frozen=True)
class Change:
    """One row: ``before`` -> ``after`` gives exactly one delta."""

    rule: str
    severity: str
    path: str
    """Relative to the tool's inputSchema."""
    field: str = "input.a"

    def expected(self) -> list[tuple[str, str, str, None, str, str]]:
        return [(self.rule, self.severity, "t", None, self.field, SCHEMA + self.path)]


# -- rows that RULES.md pairs: (x -> y) and (y -> x) -------------------------------------

PAIRED = {
    # property.removed (open object) / property.added
    "property on an open object": (
        obj({"a": {"type": "string"}}), obj(),
        Change("input.property.removed", "RISKY", "/properties/a"),
        Change("input.property.added", "SAFE", "/properties/a")),
    "property on a closed object (additionalProperties false)": (
        obj({"a": {"type": "string"}}, additionalProperties=False), obj(additionalProperties=False),
        Change("input.property.removed", "BREAKING", "/properties/a"),
        Change("input.property.added", "SAFE", "/properties/a")),
    "property on a closed object (unevaluatedProperties false)": (
        obj({"a": {"type": "string"}}, unevaluatedProperties=False), obj(unevaluatedProperties=False),
        Change("input.property.removed", "BREAKING", "/properties/a"),
        Change("input.property.added", "SAFE", "/properties/a")),
    # a required property removed from an open object is one removal (not also required.removed)
    "required property": (
        obj({"a": {"type": "string"}}, ["a"]), obj(),
        Change("input.property.removed", "RISKY", "/properties/a"),
        Change("input.property.added-required", "BREAKING", "/properties/a")),
    "required": (
        obj({"a": {"type": "string"}}), obj({"a": {"type": "string"}}, ["a"]),
        Change("input.required.added", "BREAKING", "/required"),
        Change("input.required.removed", "SAFE", "/required")),
    "number -> integer": (
        arg(type="number"), arg(type="integer"),
        Change("input.type.narrowed", "BREAKING", "/properties/a/type"),
        Change("input.type.widened", "SAFE", "/properties/a/type")),
    "a type removed from a list": (
        arg(type=["string", "integer"]), arg(type="string"),
        Change("input.type.narrowed", "BREAKING", "/properties/a/type"),
        Change("input.type.widened", "SAFE", "/properties/a/type")),
    "null removed": (
        arg(type=["string", "null"]), arg(type="string"),
        Change("input.type.narrowed", "BREAKING", "/properties/a/type"),
        Change("input.type.widened", "SAFE", "/properties/a/type")),
    "string -> integer": (
        arg(type="string"), arg(type="integer"),
        Change("input.type.changed", "BREAKING", "/properties/a/type"),
        Change("input.type.changed", "BREAKING", "/properties/a/type")),
    "object -> array": (
        arg(type="object"), arg(type="array"),
        Change("input.type.changed", "BREAKING", "/properties/a/type"),
        Change("input.type.changed", "BREAKING", "/properties/a/type")),
    "an enum value": (
        arg(type="string", enum=["x", "y"]), arg(type="string", enum=["x"]),
        Change("input.enum.value-removed", "BREAKING", "/properties/a/enum"),
        Change("input.enum.value-added", "SAFE", "/properties/a/enum")),
    "an enum": (
        arg(type="string"), arg(type="string", enum=["x", "y"]),
        Change("input.enum.added", "BREAKING", "/properties/a/enum"),
        Change("input.enum.removed", "SAFE", "/properties/a/enum")),
    "a const": (
        arg(type="string"), arg(type="string", const="x"),
        Change("input.const.added", "BREAKING", "/properties/a/const"),
        Change("input.const.removed", "SAFE", "/properties/a/const")),
    "a const value": (
        arg(type="string", const="x"), arg(type="string", const="y"),
        Change("input.const.changed", "BREAKING", "/properties/a/const"),
        Change("input.const.changed", "BREAKING", "/properties/a/const")),
    "a pattern": (
        arg(type="string"), arg(type="string", pattern="^[a-z]+$"),
        Change("input.pattern.added", "BREAKING", "/properties/a/pattern"),
        Change("input.pattern.removed", "SAFE", "/properties/a/pattern")),
    "a pattern value (containment is undecidable)": (
        arg(type="string", pattern="^a"), arg(type="string", pattern="^ab"),
        Change("input.pattern.changed", "RISKY", "/properties/a/pattern"),
        Change("input.pattern.changed", "RISKY", "/properties/a/pattern")),
    "a format": (
        arg(type="string"), arg(type="string", format="email"),
        Change("input.format.added", "RISKY", "/properties/a/format"),
        Change("input.format.removed", "SAFE", "/properties/a/format")),
    "a format value": (
        arg(type="string", format="uri"), arg(type="string", format="email"),
        Change("input.format.changed", "RISKY", "/properties/a/format"),
        Change("input.format.changed", "RISKY", "/properties/a/format")),
    "open <-> closed": (
        obj({"a": {"type": "string"}}), obj({"a": {"type": "string"}}, additionalProperties=False),
        Change("input.additional-properties.closed", "RISKY", "/additionalProperties", "input"),
        Change("input.additional-properties.opened", "SAFE", "/additionalProperties", "input")),
    "unevaluatedProperties open <-> closed": (
        obj(), obj(unevaluatedProperties=False),
        Change("input.additional-properties.closed", "RISKY", "/unevaluatedProperties", "input"),
        Change("input.additional-properties.opened", "SAFE", "/unevaluatedProperties", "input")),
    "the additionalProperties schema": (
        obj(additionalProperties={"type": ["string", "integer"]}), obj(additionalProperties={"type": "string"}),
        Change("input.additional-properties.closed", "RISKY", "/additionalProperties", "input"),
        Change("input.additional-properties.opened", "SAFE", "/additionalProperties", "input")),
    "a union branch": (
        arg(anyOf=[{"type": "string", "maxLength": 5}, {"type": "integer", "minimum": 0}]),
        arg(anyOf=[{"type": "string", "maxLength": 5}]),
        Change("input.union.branch-removed", "BREAKING", "/properties/a/anyOf/1"),
        Change("input.union.branch-added", "SAFE", "/properties/a/anyOf/1")),
    "a oneOf branch": (
        arg(oneOf=[{"type": "string", "maxLength": 5}, {"type": "integer", "minimum": 0},
                   {"type": "boolean", "const": True}]),
        arg(oneOf=[{"type": "string", "maxLength": 5}, {"type": "boolean", "const": True}]),
        Change("input.union.branch-removed", "BREAKING", "/properties/a/oneOf/1"),
        Change("input.union.branch-added", "SAFE", "/properties/a/oneOf/1")),
    "an allOf branch": (
        arg(allOf=[{"type": "string"}, {"minLength": 1}]),
        arg(allOf=[{"type": "string"}, {"minLength": 1}, {"maxLength": 9}]),
        Change("input.all-of.branch-added", "BREAKING", "/properties/a/allOf/2"),
        Change("input.all-of.branch-removed", "SAFE", "/properties/a/allOf/2")),
    "if/then/else": (
        obj({"a": {}, "b": {}}),
        obj({"a": {}, "b": {}}, **{"if": {"required": ["a"]}, "then": {"required": ["b"]}}),
        Change("input.conditional.added", "BREAKING", "/if", "input"),
        Change("input.conditional.removed", "SAFE", "/if", "input")),
    "dependentRequired": (
        obj({"a": {}, "b": {}}), obj({"a": {}, "b": {}}, dependentRequired={"a": ["b"]}),
        Change("input.conditional.added", "BREAKING", "/dependentRequired/a", "input"),
        Change("input.conditional.removed", "SAFE", "/dependentRequired/a", "input")),
    "dependentRequired extended / reduced": (
        obj({"a": {}, "b": {}, "c": {}}, dependentRequired={"a": ["b"]}),
        obj({"a": {}, "b": {}, "c": {}}, dependentRequired={"a": ["b", "c"]}),
        Change("input.conditional.added", "BREAKING", "/dependentRequired/a", "input"),
        Change("input.conditional.removed", "SAFE", "/dependentRequired/a", "input")),
    "dependentSchemas": (
        obj({"a": {}, "b": {}}), obj({"a": {}, "b": {}}, dependentSchemas={"a": {"required": ["b"]}}),
        Change("input.conditional.added", "BREAKING", "/dependentSchemas/a", "input"),
        Change("input.conditional.removed", "SAFE", "/dependentSchemas/a", "input")),
    "draft-07 dependencies, array form": (
        obj({"a": {}, "b": {}}, **DRAFT07), obj({"a": {}, "b": {}}, dependencies={"a": ["b"]}, **DRAFT07),
        Change("input.conditional.added", "BREAKING", "/dependencies/a", "input"),
        Change("input.conditional.removed", "SAFE", "/dependencies/a", "input")),
    "draft-07 dependencies, schema form": (
        obj({"a": {}, "b": {}}, **DRAFT07), obj({"a": {}, "b": {}}, dependencies={"a": {"required": ["b"]}},
                                                **DRAFT07),
        Change("input.conditional.added", "BREAKING", "/dependencies/a", "input"),
        Change("input.conditional.removed", "SAFE", "/dependencies/a", "input")),
    "a default (omitted arguments behave differently)": (
        arg(type="integer"), arg(type="integer", default=10),
        Change("input.default.changed", "RISKY", "/properties/a/default"),
        Change("input.default.changed", "RISKY", "/properties/a/default")),
}


@pytest.mark.parametrize("name", list(PAIRED))
def test_paired_rules_forward(name):
    x, y, forward, _ = PAIRED[name]
    assert run(x, y) == forward.expected()


@pytest.mark.parametrize("name", list(PAIRED))
def test_paired_rules_backward(name):
    x, y, _, backward = PAIRED[name]
    assert run(y, x) == backward.expected()


# -- bounds: every keyword RULES.md names, tightened and the inverse relaxed ----------------

BOUNDS = [
    # (keyword, looser value, tighter value, schema type)
    ("maxLength", 10, 5, "string"),
    ("maximum", 10, 5, "number"),
    ("exclusiveMaximum", 10, 5, "number"),
    ("maxItems", 10, 5, "array"),
    ("maxProperties", 10, 5, "object"),
    ("minLength", 1, 3, "string"),
    ("minimum", 1, 3, "number"),
    ("exclusiveMinimum", 1, 3, "number"),
    ("minItems", 1, 3, "array"),
    ("minProperties", 1, 3, "object"),
]


@pytest.mark.parametrize("keyword,looser,tighter,kind", BOUNDS)
def test_bound_changed_both_ways(keyword, looser, tighter, kind):
    loose, tight = arg(type=kind, **{keyword: looser}), arg(type=kind, **{keyword: tighter})
    path = f"/properties/a/{keyword}"
    assert run(loose, tight) == Change("input.bound.tightened", "BREAKING", path).expected()
    assert run(tight, loose) == Change("input.bound.relaxed", "SAFE", path).expected()


@pytest.mark.parametrize("keyword,looser,tighter,kind", BOUNDS)
def test_bound_added_tightens_and_removed_relaxes(keyword, looser, tighter, kind):
    plain, bounded = arg(type=kind), arg(type=kind, **{keyword: tighter})
    path = f"/properties/a/{keyword}"
    assert run(plain, bounded) == Change("input.bound.tightened", "BREAKING", path).expected()
    assert run(bounded, plain) == Change("input.bound.relaxed", "SAFE", path).expected()


@pytest.mark.parametrize("before,after,rule,severity", [
    (None, 5, "input.bound.tightened", "BREAKING"),   # added
    (10, 5, "input.bound.relaxed", "SAFE"),           # 5 divides 10: every multiple of 10 still passes
    (5, 10, "input.bound.tightened", "BREAKING"),     # 5, 15, ... now fail
    (4, 6, "input.bound.tightened", "BREAKING"),      # neither divides the other: 4 and 8 now fail
    (0.5, 0.25, "input.bound.relaxed", "SAFE"),       # divisors work for fractions too
    (5, None, "input.bound.relaxed", "SAFE"),         # removed
])
def test_multiple_of(before, after, rule, severity):
    def schema(value):
        return arg(type="number") if value is None else arg(type="number", multipleOf=value)

    assert run(schema(before), schema(after)) == Change(rule, severity, "/properties/a/multipleOf").expected()


def test_unique_items_added_tightens_and_removed_relaxes():
    plain, unique = arg(type="array"), arg(type="array", uniqueItems=True)
    path = "/properties/a/uniqueItems"
    assert run(plain, unique) == Change("input.bound.tightened", "BREAKING", path).expected()
    assert run(unique, plain) == Change("input.bound.relaxed", "SAFE", path).expected()
    assert run(plain, arg(type="array", uniqueItems=False)) == []  # false is the default


# -- rows with one direction ----------------------------------------------------------------

SINGLE = {
    "a new required property, even with a default (validators do not apply it)": (
        obj(), obj({"a": {"type": "string", "default": "x"}}, ["a"]),
        Change("input.property.added-required", "BREAKING", "/properties/a")),
    "a not constraint added": (
        arg(type="string"), arg(type="string", **{"not": {"const": "x"}}),
        Change("input.not.added", "BREAKING", "/properties/a/not")),
    "a not constraint changed": (
        arg(type="string", **{"not": {"const": "x"}}), arg(type="string", **{"not": {"const": "y"}}),
        Change("input.not.narrowed", "BREAKING", "/properties/a/not")),  # "y" was accepted, now refused
    "a not constraint changed, undecided": (
        arg(type="string", **{"not": {"pattern": "^[a-z]+$"}}), arg(type="string", **{"not": {"pattern": "^[a-y]+$"}}),
        Change("input.not.changed", "RISKY", "/properties/a/not")),  # regex containment: no value decides it
    "if/then/else changed: the path names the keyword that changed": (
        obj({"a": {}, "b": {}}, **{"if": {"required": ["a"]}, "then": {"required": ["b"]}}),
        obj({"a": {}, "b": {}}, **{"if": {"required": ["a"]}, "then": {"required": ["a", "b"]}}),
        Change("input.conditional.changed", "RISKY", "/then", "input")),
    "dependentRequired changed (neither a superset nor a subset)": (
        obj({"a": {}, "b": {}, "c": {}}, dependentRequired={"a": ["b"]}),
        obj({"a": {}, "b": {}, "c": {}}, dependentRequired={"a": ["c"]}),
        Change("input.conditional.changed", "RISKY", "/dependentRequired/a", "input")),
    "a default value changed": (
        arg(type="integer", default=1), arg(type="integer", default=2),
        Change("input.default.changed", "RISKY", "/properties/a/default")),
    "deprecated": (
        arg(type="string"), arg(type="string", deprecated=True),
        Change("input.deprecated.added", "COSMETIC", "/properties/a/deprecated")),
    # the safety net (principle 3): never SAFE by default
    "contentMediaType (no rule explains it)": (
        arg(type="string"), arg(type="string", contentMediaType="application/json"),
        Change("input.unclassified", "RISKY", "/properties/a/contentMediaType")),
    "an unknown keyword": (
        arg(type="string", **{"x-foo": 1}), arg(type="string", **{"x-foo": 2}),
        Change("input.unclassified", "RISKY", "/properties/a/x-foo")),
    "an unknown keyword removed at the root": (
        obj(**{"x-foo": {"deep": [1, 2]}}), obj(),
        Change("input.unclassified", "RISKY", "/x-foo", "input")),
    "an unknown keyword deep inside a value: the path points at what changed": (
        obj(**{"x-foo": {"deep": [1, 2]}}), obj(**{"x-foo": {"deep": [1, 3]}}),
        Change("input.unclassified", "RISKY", "/x-foo/deep/1", "input")),
    "oneOf -> anyOf (overlapping branches now all pass)": (
        arg(oneOf=[{"type": "string", "maxLength": 5}, {"type": "string", "minLength": 3}]),
        arg(anyOf=[{"type": "string", "maxLength": 5}, {"type": "string", "minLength": 3}]),
        Change("input.union.one-of-relaxed", "SAFE", "/properties/a/anyOf")),
    "an additionalProperties schema change that neither narrows nor widens is not 'opened'": (
        obj(additionalProperties={"type": "string", "x-foo": 1}),
        obj(additionalProperties={"type": "string", "x-foo": 2}),
        Change("input.unclassified", "RISKY", "/additionalProperties/x-foo", "input.*")),
}


@pytest.mark.parametrize("name", list(SINGLE))
def test_single_rules(name):
    before, after, change = SINGLE[name]
    assert run(before, after) == change.expected()


@pytest.mark.parametrize("keyword,value", [
    ("title", "A"), ("description", "The a"), ("examples", ["x"]), ("$comment", "note"),
    ("$schema", "https://json-schema.org/draft/2020-12/schema"), ("$id", "urn:a"), ("readOnly", True),
    ("writeOnly", True),
])
def test_annotation_keywords_are_cosmetic(keyword, value):
    change = Change("input.description.changed", "COSMETIC", f"/properties/a/{keyword}")
    assert run(arg(type="string"), arg(type="string", **{keyword: value})) == change.expected()
    assert run(arg(type="string", **{keyword: value}), arg(type="string")) == change.expected()


# -- property removal when what now applies to the name is a schema (RULES.md is silent) ------


def test_removed_property_now_refused_by_the_additional_properties_schema_is_breaking():
    before = obj({"a": {"type": "string"}}, additionalProperties={"type": "integer"})
    after = obj(additionalProperties={"type": "integer"})
    assert run(before, after) == Change("input.property.removed", "BREAKING", "/properties/a").expected()


def test_removed_property_still_accepted_by_the_additional_properties_schema_is_risky():
    before = obj({"a": {"type": "string"}}, additionalProperties={"type": "string"})
    after = obj(additionalProperties={"type": "string"})
    assert run(before, after) == Change("input.property.removed", "RISKY", "/properties/a").expected()


def test_removed_property_matched_by_a_pattern_is_graded_by_that_pattern():
    pattern = {"^x_": {"type": "integer"}}
    before = obj({"x_a": {"type": "string"}}, patternProperties=pattern, additionalProperties=False)
    after = obj(patternProperties=pattern, additionalProperties=False)
    assert run(before, after) == Change("input.property.removed", "BREAKING", "/properties/x_a", "input.x_a").expected()
    loose = {"^x_": {}}
    before = obj({"x_a": {"type": "string"}}, patternProperties=loose, additionalProperties=False)
    after = obj(patternProperties=loose, additionalProperties=False)
    assert run(before, after) == Change("input.property.removed", "RISKY", "/properties/x_a", "input.x_a").expected()


# -- effective values (principle 2) ----------------------------------------------------------

NO_DELTA = {
    "integer exclusiveMinimum 0 == minimum 1": (arg(type="integer", exclusiveMinimum=0),
                                                arg(type="integer", minimum=1)),
    "integer exclusiveMaximum 10 == maximum 9": (arg(type="integer", exclusiveMaximum=10),
                                                 arg(type="integer", maximum=9)),
    "enum [a] == const a": (arg(type="string", enum=["a"]), arg(type="string", const="a")),
    "one-branch anyOf == its branch": (arg(anyOf=[{"type": "string", "minLength": 2}]),
                                       arg(type="string", minLength=2)),
    "one-branch allOf == its branch": (arg(allOf=[{"type": "string", "minLength": 2}]),
                                       arg(type="string", minLength=2)),
    "nullable anyOf == type list": (arg(anyOf=[{"type": "string"}, {"type": "null"}]), arg(type=["string", "null"])),
    "union of bare types == type list": (arg(anyOf=[{"type": "string"}, {"type": "integer"}]),
                                         arg(type=["integer", "string"])),
    "required is a set": (obj({"a": {}, "b": {}}, ["a", "b"]), obj({"a": {}, "b": {}}, ["b", "a", "b"])),
    "type is a set": (arg(type=["string", "integer", "null"]), arg(type=["null", "integer", "string"])),
    "1 == 1.0": (arg(type="number", maximum=1), arg(type="number", maximum=1.0)),
    "inline -> $ref into $defs": (
        obj({"a": {"type": "object", "properties": {"city": {"type": "string"}}}}),
        obj({"a": {"$ref": "#/$defs/Address"}},
            **{"$defs": {"Address": {"type": "object", "properties": {"city": {"type": "string"}}}}})),
    "inline -> $ref into draft-07 definitions": (
        obj({"a": {"type": "object", "properties": {"city": {"type": "string"}}}}),
        obj({"a": {"$ref": "#/definitions/Address"}},
            definitions={"Address": {"type": "object", "properties": {"city": {"type": "string"}}}})),
    "definitions -> $defs under another name": (
        obj({"a": {"$ref": "#/definitions/A"}}, definitions={"A": {"type": "string", "maxLength": 3}}),
        obj({"a": {"$ref": "#/$defs/B"}}, **{"$defs": {"B": {"type": "string", "maxLength": 3}}})),
    "an unused definition changed": (
        obj({"a": {"type": "string"}}, **{"$defs": {"Unused": {"type": "string"}}}),
        obj({"a": {"type": "string"}}, **{"$defs": {"Unused": {"type": "integer"}}})),
    "draft-07 tuple items == prefixItems": (
        arg(type="array", items=[{"type": "string"}, {"type": "integer"}], additionalItems=False),
        arg(type="array", prefixItems=[{"type": "string"}, {"type": "integer"}], items=False)),
    "draft-07 dependencies == dependentRequired + dependentSchemas": (
        obj({"a": {}, "b": {}}, dependencies={"a": ["b"], "b": {"required": ["a"]}}),
        obj({"a": {}, "b": {}}, dependentRequired={"a": ["b"]}, dependentSchemas={"b": {"required": ["a"]}})),
    "uniqueItems false == absent": (arg(type="array", uniqueItems=False), arg(type="array")),
}


@pytest.mark.parametrize("name", list(NO_DELTA))
def test_equal_effective_values_are_no_change(name):
    x, y = NO_DELTA[name]
    assert run(x, y) == []
    assert run(y, x) == []


def test_number_exclusive_minimum_0_is_not_minimum_1():
    # only integers are discrete: for numbers, 0.5 passed and now fails
    assert run(arg(type="number", exclusiveMinimum=0), arg(type="number", minimum=1)) == Change(
        "input.bound.tightened", "BREAKING", "/properties/a/minimum").expected()


def test_string_to_nullable_union_is_a_widening_at_the_union():
    after = arg(anyOf=[{"type": "string"}, {"type": "null"}])
    assert run(arg(type="string"), after) == Change("input.type.widened", "SAFE", "/properties/a/anyOf").expected()
    assert run(after, arg(type="string")) == Change("input.type.narrowed", "BREAKING", "/properties/a/type").expected()


def test_one_value_enum_to_another_const_is_one_const_change():
    assert run(arg(enum=["a"]), arg(const="b")) == Change(
        "input.const.changed", "BREAKING", "/properties/a/const").expected()


def test_x_to_a_union_of_x_and_y_is_one_added_branch():
    x = {"type": "string", "maxLength": 3}
    y = {"type": "integer", "maximum": 3}
    assert run(arg(**x), arg(anyOf=[x, y])) == Change(
        "input.union.branch-added", "SAFE", "/properties/a/anyOf/1").expected()
    assert run(arg(anyOf=[x, y]), arg(**x)) == Change(
        "input.union.branch-removed", "BREAKING", "/properties/a/anyOf/1").expected()


def test_a_branch_removed_but_covered_by_a_remaining_branch_is_no_change():
    before = arg(anyOf=[{"type": "integer", "maximum": 3}, {"type": "integer", "maximum": 5}])
    after = arg(anyOf=[{"type": "integer", "maximum": 5}, {"type": "string"}])
    assert run(before, after) == Change("input.union.branch-added", "SAFE", "/properties/a/anyOf/1").expected()


def test_a_change_inside_a_union_branch_is_reported_in_that_branch():
    before = arg(anyOf=[{"type": "string", "maxLength": 3}, {"type": "integer", "maximum": 3}])
    after = arg(anyOf=[{"type": "string", "maxLength": 5}, {"type": "integer", "maximum": 3}])
    assert run(before, after) == Change("input.bound.relaxed", "SAFE", "/properties/a/anyOf/0/maxLength").expected()


def test_type_list_split_into_branches_when_one_branch_gains_a_bound():
    before = arg(anyOf=[{"type": "string"}, {"type": "integer"}])  # collapses to type [integer, string]
    after = arg(anyOf=[{"type": "string", "maxLength": 3}, {"type": "integer"}])
    assert run(before, after) == Change(
        "input.bound.tightened", "BREAKING", "/properties/a/anyOf/0/maxLength").expected()


def test_all_of_removed_branch_with_one_left_is_one_removed_branch():
    # the one-branch allOf left behind collapses; the other side must not read as a type change
    before = arg(allOf=[{"type": "string"}, {"maxLength": 3}])
    after = arg(allOf=[{"type": "string"}])
    assert run(before, after) == Change("input.all-of.branch-removed", "SAFE", "/properties/a/allOf/1").expected()


def test_union_branch_descriptions_are_not_lost_in_the_collapse():
    before = arg(anyOf=[{"type": "string", "description": "a name"}, {"type": "null"}])
    after = arg(anyOf=[{"type": "string", "description": "the name"}, {"type": "null"}])
    assert run(before, after) == Change(
        "input.description.changed", "COSMETIC", "/properties/a/anyOf/0/description").expected()


# -- $ref, recursion ---------------------------------------------------------------------------


def tree(name_schema: JSON, *, via: str = "$defs") -> JSON:
    """A tree: a node has a name and children that are nodes."""
    node = {"type": "object", "properties": {
        "name": name_schema,
        "children": {"type": "array", "items": {"$ref": f"#/{via}/Node"}},
    }}
    return obj({"root": {"$ref": f"#/{via}/Node"}}, **{via: {"Node": node}})


def test_a_recursive_schema_compares_without_looping():
    assert run(tree({"type": "string"}), tree({"type": "string"})) == []


@pytest.mark.parametrize("via", ["$defs", "definitions"])
def test_a_change_deep_in_a_recursive_definition_is_reported_once_where_it_is(via):
    assert run(tree({"type": "string"}, via=via), tree({"type": "string", "maxLength": 10}, via=via)) == Change(
        "input.bound.tightened", "BREAKING", "/properties/root/properties/name/maxLength", "input.root.name").expected()


def test_a_schema_that_refers_to_its_own_root():
    def schema(name_type: str) -> JSON:
        return obj({"name": {"type": name_type}, "kids": {"type": "array", "items": {"$ref": "#"}}})

    assert run(schema("string"), schema("integer")) == Change(
        "input.type.changed", "BREAKING", "/properties/name/type", "input.name").expected()


def test_recursion_through_a_nullable_union_pydantic_optional():
    def schema(name: JSON) -> JSON:
        node = {"type": "object", "properties": {
            "name": name, "parent": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}], "default": None}}}
        return obj({"node": {"$ref": "#/$defs/Node"}}, **{"$defs": {"Node": node}})

    assert run(schema({"type": "string"}), schema({"type": "string", "minLength": 1})) == Change(
        "input.bound.tightened", "BREAKING", "/properties/node/properties/name/minLength", "input.node.name").expected()


def test_mutually_recursive_definitions():
    def schema(extra: JSON) -> JSON:
        return obj({"a": {"$ref": "#/$defs/A"}}, **{"$defs": {
            "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}, **extra}},
            "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}},
        }})

    assert run(schema({}), schema({"z": {"type": "string"}})) == Change(
        "input.property.added", "SAFE", "/properties/a/properties/z", "input.a.z").expected()


def test_equal_recursive_content_under_different_cycles_is_no_change():
    before = obj({"x": {"$ref": "#/$defs/N"}}, **{"$defs": {
        "N": {"type": "object", "properties": {"k": {"type": "array", "items": {"$ref": "#/$defs/N"}}}}}})
    after = obj({"x": {"$ref": "#/$defs/M"}}, **{"$defs": {
        "M": {"type": "object", "properties": {"k": {"type": "array", "items": {"$ref": "#/$defs/C"}}}},
        "C": {"type": "object", "properties": {"k": {"type": "array", "items": {"$ref": "#/$defs/M"}}}}}})
    assert run(before, after) == []


def test_a_definition_used_in_two_places_is_reported_at_both():
    def schema(city_type: str) -> JSON:
        return obj({"home": {"$ref": "#/$defs/Address"}, "work": {"$ref": "#/$defs/Address"}},
                   **{"$defs": {"Address": {"type": "object", "properties": {"city": {"type": city_type}}}}})

    assert run(schema("string"), schema("integer")) == [
        ("input.type.changed", "BREAKING", "t", None, "input.home.city",
         SCHEMA + "/properties/home/properties/city/type"),
        ("input.type.changed", "BREAKING", "t", None, "input.work.city",
         SCHEMA + "/properties/work/properties/city/type"),
    ]


def test_equal_text_whose_reference_target_changed_is_compared():
    # the argument reads the same on both sides, down to the $ref: only the target differs
    # (and, through a second reference, only that target's target)
    a = {"type": "array", "items": {"$ref": "#/$defs/A"}}
    before = obj({"a": a}, **{"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"type": "string"}}})
    after = obj({"a": a}, **{"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"type": "string", "format": "email"}}})
    assert run(before, after) == Change(
        "input.format.added", "RISKY", "/properties/a/items/format", "input.a[]").expected()


def test_ref_siblings_apply_beside_the_target():
    defs = {"$defs": {"A": {"type": "object"}}}
    before = obj({"a": {"$ref": "#/$defs/A"}}, **defs)
    after = obj({"a": {"$ref": "#/$defs/A", "maxProperties": 3, "description": "an A"}}, **defs)
    assert run(before, after) == [
        ("input.bound.tightened", "BREAKING", "t", None, "input.a", SCHEMA + "/properties/a/maxProperties"),
        ("input.description.changed", "COSMETIC", "t", None, "input.a", SCHEMA + "/properties/a/description"),
    ]


# -- draft-07 spellings ------------------------------------------------------------------------


def test_tuple_additional_items_closed_is_a_narrowing_at_additional_items():
    before = arg(type="array", items=[{"type": "string"}], additionalItems={"type": "string"})
    after = arg(type="array", items=[{"type": "string"}], additionalItems=False)
    assert run(before, after) == Change(
        "input.type.narrowed", "BREAKING", "/properties/a/additionalItems", "input.a[]").expected()


def test_tuple_position_added_points_at_the_draft07_items_list():
    before = arg(type="array", items=[{"type": "string"}])
    after = arg(type="array", items=[{"type": "string"}, {"type": "integer"}])
    # position 1 accepted anything before (no additionalItems)
    assert run(before, after) == Change(
        "input.type.narrowed", "BREAKING", "/properties/a/items/1/type", "input.a[1]").expected()


def test_items_false_removed_is_a_widening():
    assert run(arg(type="array", items=False), arg(type="array")) == Change(
        "input.type.widened", "SAFE", "/properties/a/items", "input.a[]").expected()


# -- nested names and paths --------------------------------------------------------------------


def test_nested_object_field_and_path():
    before = obj({"address": {"type": "object", "properties": {"city": {"type": "string"}}}})
    after = obj({"address": {"type": "object", "properties": {"city": {"type": "string", "minLength": 2}}}})
    assert run(before, after) == Change(
        "input.bound.tightened", "BREAKING", "/properties/address/properties/city/minLength", "input.address.city"
    ).expected()


def test_array_items_field_and_path():
    before = obj({"tags": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}}})
    after = obj({"tags": {"type": "array", "items": {"type": "object", "properties": {}}}})
    assert run(before, after) == Change(
        "input.property.removed", "RISKY", "/properties/tags/items/properties/k", "input.tags[].k").expected()


def test_pointer_tokens_are_escaped():
    before = obj({"a~b/c": {"type": "string"}})
    after = obj({"a~b/c": {"type": "integer"}})
    assert run(before, after) == Change(
        "input.type.changed", "BREAKING", "/properties/a~0b~1c/type", "input.a~b/c").expected()


def test_collapsed_one_branch_union_points_into_the_branch():
    before = arg(anyOf=[{"type": "string", "maxLength": 3}])
    after = arg(anyOf=[{"type": "string", "maxLength": 2}])
    assert run(before, after) == Change(
        "input.bound.tightened", "BREAKING", "/properties/a/anyOf/0/maxLength").expected()
