"""Issue 10 items 1-10 and issue 9 item 3: each class of wrong verdict, in both directions
(the break it missed or hid, and the no-op or SAFE mirror it must not flag).

Each case diffs two one-tool surfaces and asserts the complete list of schema deltas
(rule, severity, field); every BREAKING input delta must carry a witness that a plain
jsonschema validator confirms (accepted before, refused after).
"""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from app import load_surface
from app.diff import Delta, diff
from app.jsontypes import JSON
from app.validation import FORMAT_CHECKER

B, R, S, C = "BREAKING", "RISKY", "SAFE", "COSMETIC"
ZOD_MAX = 9007199254740991


def obj(properties: dict[str, JSON] | None = None, required: list[str] | None = None, **keywords: JSON) -> JSON:
    schema: dict[str, JSON] = {"type": "object", "properties": properties or {}}
    if required:
        schema["required"] = required
    return {**schema, **keywords}


def arg(**schema: JSON) -> JSON:
    return obj({"a": schema})


def deltas(before: JSON, after: JSON, key: str = "inputSchema") -> list[Delta]:
    def one(schema: JSON) -> Any:
        tool: dict[str, JSON] = {"name": "t", "inputSchema": {"type": "object"}, key: schema}
        return load_surface({"tools": [tool]})
    return [d for d in diff(one(before), one(after)).deltas if d.category in ("input", "output")]


def graded(before: JSON, after: JSON, key: str = "inputSchema") -> list[tuple[str, str, str]]:
    found = deltas(before, after, key)
    for delta in found:
        if delta.severity.value == B and delta.category == "input":
            witness = delta.witness
            assert witness is not None and witness.found, (delta.rule, witness)
            assert Draft202012Validator(before, format_checker=FORMAT_CHECKER).is_valid(witness.value)
            assert not Draft202012Validator(after, format_checker=FORMAT_CHECKER).is_valid(witness.value)
    return sorted((d.rule, d.severity.value, d.field) for d in found)


STRING, NUMBER = {"type": "string"}, {"type": "number"}
FIVE = {name: {"type": "string"} for name in "abcde"}

CASES: dict[str, tuple[JSON, JSON, list[tuple[str, str, str]]]] = {
    # 1. one delta per argument, even with equal before/after text
    "five optional arguments become required": (
        obj(FIVE), obj(FIVE, list("abcde")),
        [("input.required.added", B, f"input.{n}") for n in "abcde"]),
    "the same enum value removed from three arguments": (
        obj({n: {"type": "string", "enum": ["x", "y"]} for n in "abc"}),
        obj({n: {"type": "string", "enum": ["x"]} for n in "abc"}),
        [("input.enum.value-removed", B, f"input.{n}") for n in "abc"]),
    "the same bound tightened on two arguments": (
        obj({n: {"type": "integer", "maximum": 10} for n in "ab"}),
        obj({n: {"type": "integer", "maximum": 5} for n in "ab"}),
        [("input.bound.tightened", B, f"input.{n}") for n in "ab"]),
    # 2. oneOf exclusivity
    "required foo and bar -> oneOf [required foo, required bar]": (
        obj({"foo": STRING, "bar": STRING}, ["foo", "bar"]),
        obj({"foo": STRING, "bar": STRING}, oneOf=[{"required": ["foo"]}, {"required": ["bar"]}]),
        [("input.required.removed", S, "input.bar"), ("input.union.branch-added", S, "input"),
         ("input.union.one-of-overlap", B, "input")]),
    "number -> oneOf [number, integer]": (
        arg(type="number"), arg(oneOf=[NUMBER, {"type": "integer"}]),
        [("input.union.one-of-overlap", B, "input.a")]),
    "type list -> oneOf of disjoint types (no change)": (
        arg(type=["string", "integer"]), arg(oneOf=[STRING, {"type": "integer"}]), []),
    "anyOf -> oneOf of overlapping branches": (
        arg(anyOf=[{"type": "string", "maxLength": 5}, {"type": "string", "minLength": 3}]),
        arg(oneOf=[{"type": "string", "maxLength": 5}, {"type": "string", "minLength": 3}]),
        [("input.union.one-of-overlap", B, "input.a")]),
    "anyOf -> oneOf of discriminated branches (no change)": (
        arg(anyOf=[obj({"k": {"const": "x"}}, ["k"]), obj({"k": {"const": "y"}}, ["k"])]),
        arg(oneOf=[obj({"k": {"const": "x"}}, ["k"]), obj({"k": {"const": "y"}}, ["k"])]), []),
    # 3. a new property against the catch-all that covered its name
    "bar: number added under additionalProperties {type: string}": (
        obj(additionalProperties=STRING), obj({"bar": NUMBER}, additionalProperties=STRING),
        [("input.property.added", S, "input.bar"), ("input.type.changed", B, "input.bar")]),
    "bar: string added under additionalProperties {type: string} (mirror)": (
        obj(additionalProperties=STRING), obj({"bar": {"type": "string", "description": "d"}},
                                              additionalProperties=STRING),
        [("input.property.added", S, "input.bar")]),
    "a property added under a matching patternProperties schema": (
        obj(patternProperties={"^x_": STRING}), obj({"x_a": {"type": "string", "maxLength": 3}},
                                                    patternProperties={"^x_": STRING}),
        [("input.bound.tightened", B, "input.x_a"), ("input.property.added", S, "input.x_a")]),
    "a property added under unevaluatedProperties {type: integer}": (
        obj(unevaluatedProperties={"type": "integer"}), obj({"n": STRING}, unevaluatedProperties={"type": "integer"}),
        [("input.property.added", S, "input.n"), ("input.type.changed", B, "input.n")]),
    # 4. unevaluatedItems past prefixItems
    "unevaluatedItems false added past prefixItems": (
        arg(type="array", prefixItems=[STRING]), arg(type="array", prefixItems=[STRING], unevaluatedItems=False),
        [("input.type.narrowed", B, "input.a[]")]),
    "items false -> unevaluatedItems false past prefixItems (no change)": (
        arg(type="array", prefixItems=[STRING], items=False),
        arg(type="array", prefixItems=[STRING], unevaluatedItems=False), []),
    "unevaluatedItems beside items changes nothing": (
        arg(type="array", items=STRING), arg(type="array", items=STRING, unevaluatedItems=False), []),
    # 6. const/enum imply their types
    "const hello -> type string": (
        arg(const="hello"), arg(type="string"), [("input.const.removed", S, "input.a")]),
    "type string -> const hello (mirror)": (
        arg(type="string"), arg(const="hello"), [("input.const.added", B, "input.a")]),
    "enum of strings -> type string": (
        arg(enum=["a", "b"]), arg(type="string"), [("input.enum.removed", S, "input.a")]),
    "const 1 -> type string": (
        arg(const=1), arg(type="string"),
        [("input.const.removed", S, "input.a"), ("input.type.changed", B, "input.a")]),
    # 7. narrowing one anyOf branch, covered by another
    "narrowing an anyOf branch another branch covers": (
        arg(anyOf=[{"type": "string", "maxLength": 10}, STRING]),
        arg(anyOf=[{"type": "string", "maxLength": 5}, STRING]), []),
    "narrowing an anyOf branch nothing else covers": (
        arg(anyOf=[{"type": "string", "maxLength": 10}, {"type": "integer"}]),
        arg(anyOf=[{"type": "string", "maxLength": 5}, {"type": "integer"}]),
        [("input.bound.tightened", B, "input.a")]),
    # 8. duplicates and false schemas
    "a repeated allOf branch": (arg(allOf=[STRING]), arg(allOf=[STRING, STRING]), []),
    "a repeated anyOf branch": (
        arg(anyOf=[STRING, {"type": "integer"}]), arg(anyOf=[STRING, {"type": "integer"}, STRING]), []),
    "an allOf branch the node already implies": (arg(type="string"), arg(type="string", allOf=[STRING]), []),
    "a false property removed from a closed object": (
        obj({"a": False, "b": STRING}, additionalProperties=False), obj({"b": STRING}, additionalProperties=False), []),
    "a false property removed from an open object": (
        obj({"a": False}), obj(), [("input.additional-properties.opened", S, "input.a")]),
    "a false property added to an open object": (
        obj(), obj({"a": False}), [("input.additional-properties.closed", R, "input.a")]),
    # 9. zero bounds and numbers at depth
    "minLength 0 added": (arg(type="string"), arg(type="string", minLength=0), []),
    "minItems 0 added": (arg(type="array"), arg(type="array", minItems=0), []),
    "minLength 1 added (mirror)": (arg(type="string"), arg(type="string", minLength=1),
                                   [("input.bound.tightened", B, "input.a")]),
    "enum [[1]] -> [[1.0]]": (arg(enum=[[1]]), arg(enum=[[1.0]]), []),
    "const {x: 1} -> {x: 1.0}": (arg(const={"x": 1}), arg(const={"x": 1.0}), []),
    "enum [[1]] -> [[2]] (mirror)": (arg(enum=[[1]]), arg(enum=[[2]]), [("input.const.changed", B, "input.a")]),
    # 10. the interoperable integer range
    "zod 4 bounds on an integer": (
        arg(type="integer"), arg(type="integer", maximum=ZOD_MAX, minimum=-ZOD_MAX),
        [("input.bound.integer-range", C, "input.a"), ("input.bound.integer-range", C, "input.a")]),
    "an exclusive bound past the range": (
        arg(type="integer"), arg(type="integer", exclusiveMaximum=ZOD_MAX + 1),
        [("input.bound.integer-range", C, "input.a")]),
    "a real maximum on an integer (mirror)": (
        arg(type="integer"), arg(type="integer", maximum=1000), [("input.bound.tightened", B, "input.a")]),
    "from the range limit to a real limit": (
        arg(type="integer", maximum=ZOD_MAX), arg(type="integer", maximum=1000),
        [("input.bound.tightened", B, "input.a")]),
    # issue 9 item 3: a first union, not, propertyNames
    "a first anyOf of required branches": (
        obj({"a": STRING, "b": STRING}), obj({"a": STRING, "b": STRING}, anyOf=[{"required": ["a"]},
                                                                             {"required": ["b"]}]),
        [("input.union.added", B, "input")]),
    "a first anyOf that one branch covers (no change)": (
        obj({"a": STRING}), obj({"a": STRING}, anyOf=[{"type": "object"}, {"required": ["a"]}]), []),
    "a first oneOf over a plain type": (
        arg(type="string"), arg(type="string", oneOf=[{"maxLength": 3}, {"minLength": 2}]),
        [("input.union.added", B, "input.a")]),
    "not added on the root": (
        obj({"a": STRING}), obj({"a": STRING}, **{"not": {"required": ["a"]}}), [("input.not.added", B, "input")]),
    "not added on a property": (
        arg(type="string"), arg(type="string", **{"not": {"const": "x"}}), [("input.not.added", B, "input.a")]),
    "not added of a type the property never had (no change)": (
        arg(type="string"), arg(type="string", **{"not": {"type": "integer"}}), []),
    "not narrowed": (
        arg(type="string", **{"not": {"const": "x"}}), arg(type="string", **{"not": {"enum": ["x", "y"]}}),
        [("input.not.narrowed", B, "input.a")]),
    "not relaxed (mirror)": (
        arg(type="string", **{"not": {"enum": ["x", "y"]}}), arg(type="string", **{"not": {"const": "x"}}),
        [("input.not.relaxed", S, "input.a")]),
    "propertyNames refusing a declared argument": (
        obj({"a_b": STRING}), obj({"a_b": STRING}, propertyNames={"pattern": "^[a-z]+$"}),
        [("input.property-names.narrowed", B, "input.a_b")]),
    "propertyNames every declared name passes, object closed (no change)": (
        obj({"ab": STRING}, additionalProperties=False),
        obj({"ab": STRING}, additionalProperties=False, propertyNames={"pattern": "^[a-z]+$"}), []),
    "propertyNames on an open object, declared names pass": (
        obj({"ab": STRING}), obj({"ab": STRING}, propertyNames={"pattern": "^[a-z]+$"}),
        [("input.additional-properties.closed", R, "input")]),
    "propertyNames removed": (
        obj({"ab": STRING}, propertyNames={"maxLength": 3}), obj({"ab": STRING}),
        [("input.property-names.relaxed", S, "input")]),
    # found with the compat dataset (tests/data/compat): implied constraints and combinators
    "a union of ranges that covers the old range together (unwitnessed: RISKY)": (
        arg(type="integer", minimum=1, maximum=8),
        arg(anyOf=[{"type": "integer", "minimum": 5, "maximum": 10}, {"type": "integer", "minimum": 0, "maximum": 4}]),
        [("input.bound.relaxed", S, "input.a"), ("input.bound.tightened", R, "input.a"),
         ("input.union.branch-added", S, "input.a")]),
    "allOf adds a range that refuses an old value (witnessed: BREAKING)": (
        arg(type="integer", minimum=10, maximum=50),
        arg(allOf=[{"type": "integer", "minimum": 10, "maximum": 50}, {"anyOf": [{"maximum": 20}, {"minimum": 40}]}]),
        [("input.all-of.branch-added", B, "input.a")]),
    "pattern .+ -> minLength 1 (the pattern already asked for a character)": (
        arg(type="string", pattern=".+"), arg(type="string", minLength=1), [("input.pattern.removed", S, "input.a")]),
    "number multipleOf 1 -> integer": (arg(type="number", multipleOf=1), arg(type="integer"), []),
    "integer -> number multipleOf 0.5": (
        arg(type="integer"), arg(type="number", multipleOf=0.5),
        [("input.bound.relaxed", S, "input.a"), ("input.type.widened", S, "input.a")]),
    "contains added": (arg(type="array"), arg(type="array", contains={"type": "integer"}),
                       [("input.contains.added", B, "input.a")]),
    "a property moved into allOf beside additionalProperties false": (
        obj({"foo": STRING}, additionalProperties=False),
        {"type": "object", "allOf": [{"properties": {"foo": STRING}}], "additionalProperties": False},
        [("input.property.removed", B, "input.foo")]),
    "an allOf branch removed whose property unevaluatedProperties false now refuses": (
        {"type": "object", "allOf": [{"properties": {"foo": STRING}}, {"properties": {"bar": NUMBER}}],
         "unevaluatedProperties": False},
        {"type": "object", "allOf": [{"properties": {"foo": STRING}}], "unevaluatedProperties": False},
        [("input.all-of.branch-removed", S, "input"), ("input.property.removed", B, "input.bar")]),
    "a pattern's names now under another pattern with another type": (
        obj(patternProperties={"b.*b": {"type": "integer"}}), obj(patternProperties={"^ba+b$": {"type": "boolean"}}),
        [("input.additional-properties.closed", R, "input"), ("input.type.changed", B, "input.baaab"),
         ("input.type.changed", B, "input.bab"), ("input.type.widened", S, "input./b.*b/")]),
    "propertyNames over a documented additionalProperties schema": (
        arg(type="object", additionalProperties=STRING),
        arg(type="object", additionalProperties=STRING, propertyNames={"maxLength": 3}),
        [("input.property-names.narrowed", B, "input.a.xxxx")]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_input_classes(name: str) -> None:
    before, after, expected = CASES[name]
    assert graded(before, after) == sorted(expected)


OUTPUT_CASES: dict[str, tuple[JSON, JSON, list[tuple[str, str, str]]]] = {
    # 5. output multipleOf: the new value tightens only when it is a multiple of the old
    "output multipleOf 11 -> 10 lets 10 through": (
        arg(type="integer", multipleOf=11), arg(type="integer", multipleOf=10),
        [("output.bound.relaxed", R, "output.a")]),
    "output multipleOf 5 -> 10 (mirror: every new value is an old one)": (
        arg(type="integer", multipleOf=5), arg(type="integer", multipleOf=10),
        [("output.bound.tightened", S, "output.a")]),
    "output multipleOf 10 -> 5": (
        arg(type="integer", multipleOf=10), arg(type="integer", multipleOf=5),
        [("output.bound.relaxed", R, "output.a")]),
    "output: a new field narrower than the old catch-all (no break)": (
        obj(additionalProperties=STRING), obj({"s": {"type": "string", "maxLength": 3}}, additionalProperties=STRING),
        [("output.bound.tightened", S, "output.s"), ("output.property.added", S, "output.s")]),
    "output: a new field wider than the old catch-all": (
        obj(additionalProperties=STRING), obj({"s": {"type": ["string", "null"]}}, additionalProperties=STRING),
        [("output.property.added", S, "output.s"), ("output.type.widened", B, "output.s")]),
    "output: zod bounds": (
        arg(type="integer"), arg(type="integer", maximum=ZOD_MAX), [("output.bound.integer-range", C, "output.a")]),
}


@pytest.mark.parametrize("name", list(OUTPUT_CASES))
def test_output_classes(name: str) -> None:
    before, after, expected = OUTPUT_CASES[name]
    assert graded(before, after, "outputSchema") == sorted(expected)


def test_input_multiple_of_both_ways_is_breaking():
    assert graded(arg(type="integer", multipleOf=11), arg(type="integer", multipleOf=10)) == [
        ("input.bound.tightened", B, "input.a")]
    assert graded(arg(type="integer", multipleOf=10), arg(type="integer", multipleOf=5)) == [
        ("input.bound.relaxed", S, "input.a")]


def test_each_argument_has_its_own_id_awareness_line_and_sarif_result():
    from app.awareness import render_awareness
    from app.diff.reports.sarif import sarif_log

    def surface(required: list[str]) -> Any:
        return load_surface({"tools": [{"name": "t", "inputSchema": obj(FIVE, required)}]})

    result = diff(surface([]), surface(list("abcde")))
    assert len({d.id for d in result.deltas}) == 5
    assert len(sarif_log(result)["runs"][0]["results"]) == 5
    section = render_awareness(result, "t", max_changes=10)
    assert section is not None and section.count("<change ") == 5
