"""``<validation_error>``: one sentence per problem kind, how sent values are shown, the
exact layout with and without awareness, the round trip through the client parser; and
``validate_arguments`` on real schemas (own-name paths, grouped tools, drafts, refs),
never raising."""

from __future__ import annotations

import copy
import pickle
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app import load_surface
from app.awareness import RECOVERY, describe_problem, render_awareness, render_validation_error, show_value
from app.diff import diff
from app.text import is_invisible
from app.validation import MISSING, PROBLEM_KINDS, ROOT, Problem, as_problem, dotted_path, validate_arguments
from mcp_governance.errors import parse_tool_error
from tests.conftest import fixture_path, load_json
from tests.strategies import json_values, schemas

# --------------------------------------------------------------------------- values


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (MISSING, "(missing)"),
        ("not-an-email", "'not-an-email'"),
        ("x" * 60, "'" + "x" * 49 + "…'"),
        ("x" * 50, "'" + "x" * 50 + "'"),
        ("a\nb\u200bc", "'a b[U+200B]c'"),
        ([1, 2, 3], "array(3)"),
        ((), "array(0)"),
        ({"a": 1}, "object(1 key)"),
        ({"a": 1, "b": 2}, "object(2 keys)"),
        (42, "42"),
        (-1.5, "-1.5"),
        (1e100, "1e+100"),
        (True, "true"),
        (False, "false"),
        (None, "null"),
    ],
)
def test_values_are_shown_as_the_seed_shows_them(value: Any, shown: str) -> None:
    assert show_value(value) == shown


def test_missing_is_a_picklable_singleton() -> None:
    assert pickle.loads(pickle.dumps(MISSING)) is MISSING and repr(MISSING) == "MISSING"


# --------------------------------------------------------------------------- sentences


@pytest.mark.parametrize(
    ("problem", "text"),
    [
        (Problem("id", "format", "not-an-email", "email"),
         "Invalid email format. You sent: 'not-an-email'. Expected a valid email address."),
        (Problem("currency", "required", MISSING, {"type": "string"}),
         "Missing required field. You sent: (missing). Expected a string."),
        (Problem("currency", "required", MISSING, "string"),
         "Missing required field. You sent: (missing). Expected a string."),
        (Problem("currency", "required", MISSING, {"enum": ["EUR", "USD"]}),
         "Missing required field. You sent: (missing). Expected one of: 'EUR', 'USD'."),
        (Problem("currency", "required"), "Missing required field. You sent: (missing). Expected a value."),
        (Problem("limit", "type", "10", "integer"), "Wrong type. You sent: '10'. Expected an integer."),
        (Problem("note", "type", 5, ["string", "null"]), "Wrong type. You sent: 5. Expected a string or null."),
        (Problem("n", "minimum", 0, 1), "Value is below the minimum. You sent: 0. Expected at least 1."),
        (Problem("n", "maximum", 100, 50), "Value is above the maximum. You sent: 100. Expected at most 50."),
        (Problem("n", "exclusiveMinimum", 0, 0), "Value is too small. You sent: 0. Expected more than 0."),
        (Problem("n", "exclusiveMaximum", 1.5, 1.5), "Value is too large. You sent: 1.5. Expected less than 1.5."),
        (Problem("code", "minLength", "ab", 3), "Text is too short. You sent: 'ab'. Expected at least 3 characters."),
        (Problem("code", "maxLength", "abcd", 1), "Text is too long. You sent: 'abcd'. Expected at most 1 character."),
        (Problem("tags", "minItems", [], 1), "Too few items. You sent: array(0). Expected at least 1 item."),
        (Problem("tags", "maxItems", [1, 2, 3], 2), "Too many items. You sent: array(3). Expected at most 2 items."),
        (Problem("code", "pattern", "abc", "^[A-Z]{3}$"),
         "Text does not match the required pattern. You sent: 'abc'. Expected text matching the pattern ^[A-Z]{3}$."),
        (Problem("id", "format", "x", "uuid"),
         "Invalid uuid format. You sent: 'x'. Expected a valid UUID (e.g. 123e4567-e89b-12d3-a456-426614174000)."),
        (Problem("at", "format", "today", "date-time"),
         ("Invalid date-time format. You sent: 'today'. "
          "Expected a valid RFC 3339 date-time (e.g. 2026-11-20T14:30:00Z).")),
        (Problem("site", "format", "x", "uri"),
         "Invalid uri format. You sent: 'x'. Expected a valid absolute URI (e.g. https://example.com/path)."),
        (Problem("ip", "format", "1.2.3", "ipv4"),
         "Invalid ipv4 format. You sent: '1.2.3'. Expected a valid IPv4 address (e.g. 192.0.2.1)."),
        (Problem("v", "format", "x", "x-custom"),
         "Invalid x-custom format. You sent: 'x'. Expected a value in the \"x-custom\" format."),
        (Problem("currency", "enum", "GBP", ["EUR", "USD", 1, None]),
         "Value is not one of the allowed values. You sent: 'GBP'. Expected one of: 'EUR', 'USD', 1, null."),
        (Problem("mode", "const", "b", "a"), "Value is not the required one. You sent: 'b'. Expected exactly 'a'."),
        (Problem("extra", "additionalProperties", True, ["a", "b"]),
         "Unknown field. You sent: true. Expected only the known fields: 'a', 'b'."),
        (Problem("extra", "additionalProperties", 1), "Unknown field. You sent: 1. Expected no such field; remove it."),
        (Problem("n", "multipleOf", 7, 5), "Value is not an allowed multiple. You sent: 7. Expected a multiple of 5."),
        (Problem("tags", "uniqueItems", ["a", "a"], True),
         "Items are not unique. You sent: array(2). Expected no duplicate items."),
        (Problem(ROOT, "oneOf", {"a": 1}),
         ("Value does not match exactly one of the allowed forms. You sent: object(1 key). "
          "Expected a value matching exactly one of the allowed forms.")),
        (Problem("x", "anyOf", [1]),
         ("Value does not match any of the allowed forms. You sent: array(1). "
          "Expected a value matching at least one of the allowed forms.")),
        (Problem("x", "other", 3, message="Must be even"), "Must be even You sent: 3."),
        (Problem("x", "other", 3), "Invalid value. You sent: 3."),
        (Problem("x", "other", 3, 4), "Invalid value. You sent: 3. Expected 4."),
    ],
)  # fmt: skip
def test_one_sentence_per_kind(problem: Problem, text: str) -> None:
    assert describe_problem(problem) == text


def test_every_kind_has_its_own_sentence() -> None:
    sentences = {describe_problem(Problem("x", kind, 1, 2)) for kind in PROBLEM_KINDS}
    assert len(sentences) == len(PROBLEM_KINDS)


def test_enum_lists_ten_values_then_how_many_more() -> None:
    text = describe_problem(Problem("n", "enum", 99, list(range(13))))
    assert text.endswith("Expected one of: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 3 more.")


def test_message_override_and_server_strings_are_cleaned() -> None:
    text = describe_problem(Problem("x", "pattern", "a\u202eb", "^a\u200b$", message="Bad\nvalue.\x00"))
    assert text == "Bad value.[U+0000] You sent: 'a[U+202E]b'. Expected text matching the pattern ^a[U+200B]$."


# --------------------------------------------------------------------------- dict problems


def test_plain_dicts_are_problems() -> None:
    assert as_problem({"path": "id", "kind": "format", "sent": "x", "expected": "email"}) == Problem(
        "id", "format", "x", "email"
    )
    assert as_problem({"path": "currency", "kind": "required", "sent": None}).sent is MISSING
    assert as_problem({"kind": "type", "expected": "object"}) == Problem(ROOT, "type", MISSING, "object")
    assert as_problem({"path": ["items", 2, "sku"], "kind": "bogus", "sent": 1}).kind == "other"
    assert as_problem({"path": ["items", 2, "sku"], "kind": "type"}).path == "items[2].sku"
    with pytest.raises(TypeError):
        as_problem(["id"])  # type: ignore[arg-type]


def test_dotted_paths() -> None:
    assert dotted_path([]) == ROOT
    assert dotted_path(["address", "city"]) == "address.city"
    assert dotted_path(["items", 2, "sku"]) == "items[2].sku"
    assert dotted_path([0]) == "[0]"


# --------------------------------------------------------------------------- rendering

DESIGN_EXAMPLE = """<validation_error action="billing.get_invoice">
  <field name="id">Invalid email format. You sent: 'not-an-email'. Expected a valid email address.</field>
  <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>
</validation_error>"""


def test_design_example_is_rendered_exactly() -> None:
    problems = [{"path": "id", "kind": "format", "sent": "not-an-email", "expected": "email"}]
    assert render_validation_error("billing", "get_invoice", problems) == DESIGN_EXAMPLE


def test_action_attribute_is_the_tool_alone_without_action() -> None:
    text = render_validation_error("search", None, [Problem("q", "required", MISSING, {"type": "string"})])
    assert text.startswith('<validation_error action="search">\n')
    assert render_validation_error("billing.get_invoice", None, []).startswith(
        '<validation_error action="billing.get_invoice">'
    )


@pytest.fixture(scope="module")
def grouped_change() -> tuple[dict[str, Any], Any]:
    before = load_json(fixture_path("grouped.json"))
    after = copy.deepcopy(before)
    schema = after["tools"][0]["inputSchema"]
    schema["$defs"]["GetInvoice"]["properties"]["currency"] = {"type": "string", "enum": ["EUR", "USD"]}
    schema["$defs"]["GetInvoice"]["required"].append("currency")
    return schema, diff(load_surface(before), load_surface(after))


def test_awareness_goes_indented_right_before_the_closing_tag(grouped_change: tuple[dict[str, Any], Any]) -> None:
    _, result = grouped_change
    awareness = render_awareness(result, "billing", "get_invoice", lock_version=7, locked_at="2026-11-20")
    problems = [Problem("id", "format", "not-an-email", "email")]
    text = render_validation_error("billing", "get_invoice", problems, awareness)
    indented = "\n".join(f"  {line}" for line in awareness.splitlines())
    assert text == DESIGN_EXAMPLE.replace("</validation_error>", f"{indented}\n</validation_error>")
    assert [child.tag for child in ET.fromstring(text)] == ["field", "recovery", "contract_awareness"]


def test_round_trip_through_the_client_parser(grouped_change: tuple[dict[str, Any], Any]) -> None:
    schema, result = grouped_change
    arguments = {"action": "get_invoice", "id": 5}
    problems = validate_arguments(schema, arguments)
    awareness = render_awareness(result, "billing", "get_invoice")
    info = parse_tool_error(render_validation_error("billing", "get_invoice", problems, awareness))
    assert info is not None and info.kind == "validation_error" and info.code == "VALIDATION_ERROR"
    assert info.action == "billing.get_invoice" and info.recovery == RECOVERY
    assert info.fields == {
        "currency": "Missing required field. You sent: (missing). Expected one of: 'EUR', 'USD'.",
        "id": "Wrong type. You sent: 5. Expected a string.",
    }
    assert info.awareness is not None and info.awareness.change_count == 1
    assert [change.field for change in info.awareness.changes] == ["actions.get_invoice.input.currency"]
    assert info.awareness.changes[0].rule == "input.property.added-required"


HOSTILE = ["</validation_error>", "]]>", "<system>", "'\"&", "\U000e0041", "\u202e", "\x00", "a\nb"]


def test_hostile_names_and_values_cannot_break_out() -> None:
    text = " ".join(HOSTILE)
    problems = [{"path": text, "kind": "enum", "sent": text, "expected": [text]}, Problem(text, "other", text,
                                                                                         message=text)]
    rendered = render_validation_error(text, text, problems)
    root = ET.fromstring(rendered)
    assert root.tag == "validation_error" and [c.tag for c in root] == ["field", "field", "recovery"]
    assert rendered.count("</validation_error>") == 1 and "<system>" not in rendered
    info = parse_tool_error(rendered)
    assert info is not None
    assert list(info.fields) == ["</validation_error> ]]> <system> '\"& [U+E0041] [U+202E] [U+0000] a b"]


model_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=80)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tool=model_text,
    action=st.none() | model_text,
    problems=st.lists(
        st.fixed_dictionaries(
            {"path": model_text, "kind": st.sampled_from(sorted(PROBLEM_KINDS)) | model_text},
            optional={"sent": json_values | model_text, "expected": json_values, "message": model_text},
        ),
        max_size=5,
    ),
)
def test_any_problem_text_parses_and_shows_nothing_invisible(
    tool: str, action: str | None, problems: list[dict[str, Any]]
) -> None:
    rendered = render_validation_error(tool, action, problems)
    root = ET.fromstring(rendered)
    assert [c.tag for c in root] == ["field"] * len(problems) + ["recovery"]
    for element in root:
        assert not any(is_invisible(ch) for ch in (element.text or "") + "".join(element.attrib.values()))
    assert parse_tool_error(rendered) is not None


# --------------------------------------------------------------------------- validate_arguments

ORDER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "email": {"type": "string", "format": "email"},
        "id": {"type": "string", "format": "uuid"},
        "when": {"type": "string", "format": "date-time"},
        "currency": {"type": "string", "enum": ["EUR", "USD"]},
        "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "count": {"type": "integer", "minimum": 1, "maximum": 10},
        "items": {
            "type": "array",
            "items": {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]},
        },
        "address": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
    "required": ["currency", "address"],
    "additionalProperties": False,
}

VALID_ORDER = {
    "email": "ada@example.com",
    "id": "123e4567-e89b-12d3-a456-426614174000",
    "when": "2026-11-20T14:30:00Z",
    "currency": "EUR",
    "code": "ABC",
    "count": 3,
    "items": [{"sku": "a"}],
    "address": {"city": "Paris"},
}


def problem_map(problems: list[Problem]) -> dict[str, tuple[str, Any, Any]]:
    return {p.path: (p.kind, p.sent, p.expected) for p in problems}


def test_valid_arguments_have_no_problem() -> None:
    assert validate_arguments(ORDER_SCHEMA, VALID_ORDER) == []


def test_missing_required_is_reported_on_its_own_name() -> None:
    problems = validate_arguments(ORDER_SCHEMA, {"address": {"city": "Paris"}})
    assert problems == [Problem("currency", "required", MISSING, {"enum": ["EUR", "USD"]})]


def test_nested_required_is_reported_on_its_dotted_name() -> None:
    problems = validate_arguments(ORDER_SCHEMA, {"currency": "EUR", "address": {}})
    assert problems == [Problem("address.city", "required", MISSING, {"type": "string"})]


def test_unknown_property_is_reported_on_its_own_name() -> None:
    problems = validate_arguments(ORDER_SCHEMA, {**VALID_ORDER, "zeta": 1, "alpha": "x"})
    declared = sorted(ORDER_SCHEMA["properties"])
    assert problems == [
        Problem("alpha", "additionalProperties", "x", declared),
        Problem("zeta", "additionalProperties", 1, declared),
    ]


def test_pattern_properties_are_not_unknown() -> None:
    schema = {"type": "object", "patternProperties": {"^x-": {}}, "additionalProperties": False}
    assert problem_map(validate_arguments(schema, {"x-a": 1, "y": 2})) == {"y": ("additionalProperties", 2, None)}


@pytest.mark.parametrize(
    ("field", "value", "kind", "expected"),
    [
        ("currency", "GBP", "enum", ["EUR", "USD"]),
        ("email", "not-an-email", "format", "email"),
        ("id", "not-a-uuid", "format", "uuid"),
        ("when", "2026-13-01T00:00:00Z", "format", "date-time"),
        ("when", "2026-11-20 14:30", "format", "date-time"),
        ("code", "abc", "pattern", "^[A-Z]{3}$"),
        ("count", 0, "minimum", 1),
        ("count", 11, "maximum", 10),
        ("count", "3", "type", "integer"),
    ],
)
def test_each_keyword_gives_its_kind(field: str, value: Any, kind: str, expected: Any) -> None:
    assert validate_arguments(ORDER_SCHEMA, {**VALID_ORDER, field: value}) == [Problem(field, kind, value, expected)]


def test_date_time_accepts_rfc3339_offsets_and_fractions() -> None:
    for stamp in ("2026-11-20T14:30:00.123+02:00", "2024-02-29t00:00:00z", "2026-06-30T23:59:60Z"):
        assert validate_arguments(ORDER_SCHEMA, {**VALID_ORDER, "when": stamp}) == [], stamp


def test_array_items_are_indexed_and_sorted_numerically() -> None:
    items = [{"sku": "ok"}] * 12
    items[2] = {}
    items[10] = {"sku": 1}
    problems = validate_arguments(ORDER_SCHEMA, {**VALID_ORDER, "items": items})
    assert [(p.path, p.kind) for p in problems] == [("items[2].sku", "required"), ("items[10].sku", "type")]


def test_problems_are_sorted_by_path_and_deduplicated() -> None:
    schema = {"allOf": [ORDER_SCHEMA, ORDER_SCHEMA]}
    problems = validate_arguments(schema, {"code": "abc", "count": 0, "address": {}})
    assert [p.path for p in problems] == ["address.city", "code", "count", "currency"]


@pytest.mark.parametrize("arguments", ["abc", 5, None, [1, 2], True])
def test_arguments_that_are_not_an_object_are_a_root_type_problem(arguments: Any) -> None:
    assert validate_arguments(ORDER_SCHEMA, arguments) == [Problem(ROOT, "type", arguments, "object")]


DRAFT7 = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "definitions": {
        "node": {
            "type": "object",
            "properties": {"value": {"type": "integer"}, "next": {"$ref": "#/definitions/node"}},
            "required": ["value"],
        }
    },
    "type": "object",
    "properties": {"head": {"$ref": "#/definitions/node"}},
    "required": ["head"],
}


def test_draft7_definitions_and_recursive_refs() -> None:
    arguments = {"head": {"value": 1, "next": {"value": "two", "next": {}}}}
    assert validate_arguments(DRAFT7, arguments) == [
        Problem("head.next.next.value", "required", MISSING, {"type": "integer"}),
        Problem("head.next.value", "type", "two", "integer"),
    ]


def test_draft7_is_honoured_not_read_as_2020_12() -> None:
    # draft-07 has no prefixItems (an unknown keyword there); 2020-12 checks the first item
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "array",
              "prefixItems": [{"type": "string"}]}
    assert validate_arguments(schema, [1]) == []
    assert validate_arguments({**schema, "$schema": "https://json-schema.org/draft/2020-12/schema"}, [1]) == [
        Problem("[0]", "type", 1, "string")
    ]


def test_draft4_boolean_exclusive_maximum() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"n": {"type": "number", "maximum": 5, "exclusiveMaximum": True}},
    }
    assert validate_arguments(schema, {"n": 5}) == [Problem("n", "exclusiveMaximum", 5, 5)]


def test_dependent_required_is_a_missing_field() -> None:
    schema = {"type": "object", "properties": {"card": {}, "cvc": {"type": "string"}},
              "dependentRequired": {"card": ["cvc"]}}
    assert validate_arguments(schema, {"card": "4111"}) == [Problem("cvc", "required", MISSING, {"type": "string"})]


def test_recursive_2020_schema_with_defs() -> None:
    schema = {
        "$defs": {"tree": {"type": "object", "properties": {"name": {"type": "string"},
                                                            "children": {"type": "array",
                                                                         "items": {"$ref": "#/$defs/tree"}}},
                           "required": ["name"], "additionalProperties": False}},
        "$ref": "#/$defs/tree",
    }
    arguments = {"name": "root", "children": [{"name": "a"}, {"name": "b", "children": [{"nom": "c"}]}]}
    assert problem_map(validate_arguments(schema, arguments)) == {
        "children[1].children[0].name": ("required", MISSING, {"type": "string"}),
        "children[1].children[0].nom": ("additionalProperties", "c", ["children", "name"]),
    }


# --------------------------------------------------------------------------- grouped tools


@pytest.fixture(scope="module")
def grouped_schema() -> dict[str, Any]:
    return load_json(fixture_path("grouped.json"))["tools"][0]["inputSchema"]


def test_grouped_tool_reports_the_aimed_actions_problems(grouped_schema: dict[str, Any]) -> None:
    assert validate_arguments(grouped_schema, {"action": "get_invoice"}) == [
        Problem("id", "required", MISSING, {"type": "string"})
    ]
    assert validate_arguments(grouped_schema, {"action": "list", "limit": 51}) == [Problem("limit", "maximum", 51, 50)]


def test_grouped_tool_unknown_action_lists_the_actions(grouped_schema: dict[str, Any]) -> None:
    assert validate_arguments(grouped_schema, {"action": "delete"}) == [
        Problem("action", "enum", "delete", ["get_invoice", "list", "listAll"])
    ]


def test_grouped_tool_missing_discriminator_lists_the_actions(grouped_schema: dict[str, Any]) -> None:
    problems = validate_arguments(grouped_schema, {"id": "inv_1"})
    assert problems == [Problem("action", "required", MISSING, {"enum": ["get_invoice", "list", "listAll"]})]
    assert describe_problem(problems[0]) == (
        "Missing required field. You sent: (missing). Expected one of: 'get_invoice', 'list', 'listAll'."
    )


def test_type_union_lists_every_type() -> None:
    schema = {"type": "object", "properties": {"x": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}}
    assert validate_arguments(schema, {"x": [1]}) == [Problem("x", "type", [1], ["string", "integer"])]


def test_one_of_matching_twice_is_one_problem() -> None:
    schema = {"oneOf": [{"type": "integer"}, {"minimum": 0}]}
    problems = validate_arguments(schema, 3)
    assert [(p.path, p.kind) for p in problems] == [(ROOT, "oneOf")]
    assert problems[0].message == "The value matches more than one of the allowed forms."


def test_union_reports_the_branch_of_the_values_type() -> None:
    schema = {"anyOf": [{"type": "string", "minLength": 3}, {"type": "integer", "minimum": 10}]}
    assert problem_map(validate_arguments(schema, "ab")) == {"(root)": ("minLength", "ab", 3)}
    assert problem_map(validate_arguments(schema, 2)) == {"(root)": ("minimum", 2, 10)}


def test_unrelated_union_failure_is_one_union_problem() -> None:
    schema = {"anyOf": [{"type": "object", "properties": {"a": {"const": 1}}},
                        {"type": "object", "properties": {"b": {"const": 2}}}]}
    assert problem_map(validate_arguments(schema, {"a": 0, "b": 0})) == {"(root)": ("anyOf", {"a": 0, "b": 0}, None)}


# --------------------------------------------------------------------------- never raising


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "strin"},
        {"$ref": "#/nowhere"},
        {"$ref": "https://example.com/remote.json"},
        {"pattern": "("},
        {"$schema": ["not", "hashable"]},
        {"required": "id"},
        5,
        "schema",
        None,
    ],
)
def test_unusable_schema_is_one_root_problem(schema: Any) -> None:
    problems = validate_arguments(schema, {"id": 1})
    assert len(problems) == 1 and problems[0].path == ROOT and problems[0].kind == "other"
    assert problems[0].message is not None and problems[0].message.startswith("The tool's input schema is invalid")


def test_boolean_schemas() -> None:
    assert validate_arguments(True, {"a": 1}) == []
    assert problem_map(validate_arguments(False, {})) == {ROOT: ("other", {}, None)}


def test_deeply_nested_arguments_do_not_raise() -> None:
    deep: Any = "x"
    for _ in range(5000):
        deep = [deep]
    schema = {"$defs": {"n": {"anyOf": [{"type": "integer"}, {"type": "array", "items": {"$ref": "#/$defs/n"}}]}},
              "$ref": "#/$defs/n"}
    problems = validate_arguments(schema, deep)
    assert problems == [Problem(ROOT, "other", deep, None, "The arguments nest too deeply to be checked.")]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=schemas() | json_values, arguments=json_values)
def test_never_raises_and_always_renders(schema: Any, arguments: Any) -> None:
    problems = validate_arguments(schema, arguments)
    assert all(isinstance(p, Problem) and p.kind in PROBLEM_KINDS for p in problems)
    ET.fromstring(render_validation_error("tool", None, problems))
