"""ContractDiff, tool surface: RULES.md "Surface (per tool)" (existence, renames, texts,
_meta, execution, annotations), grouped tools' actions, and "Prompts and resources".

Each case asserts the complete list of deltas as (rule, severity, tool, action, field, path).
"""

from __future__ import annotations

import copy
import json

import pytest

from app import load_surface
from app.diff import diff
from app.jsontypes import JSON
from tests.conftest import fixture_path

EMPTY = {"type": "object"}


def tool(name: str = "t", schema: JSON = None, **fields: JSON) -> dict[str, JSON]:
    return {"name": name, "inputSchema": EMPTY if schema is None else schema, **fields}


def run(before: JSON, after: JSON) -> list[tuple[str, str, str | None, str | None, str, str]]:
    """Deltas between two surfaces given as tools/list results (or lists of tools)."""
    result = diff(load_surface(before), load_surface(after))
    return [(d.rule, d.severity.value, d.tool, d.action, d.field, d.path) for d in result.deltas]


def tools(*entries: dict[str, JSON]) -> JSON:
    return {"tools": list(entries)}


# -- existence and renames ------------------------------------------------------------------------

ARGS = {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}


def test_tool_removed_and_added():
    assert run(tools(tool("a"), tool("b")), tools(tool("a"))) == [
        ("tool.removed", "BREAKING", "b", None, "tool", "/tools/b")]
    assert run(tools(tool("a")), tools(tool("a"), tool("b"))) == [
        ("tool.added", "SAFE", "b", None, "tool", "/tools/b")]


def test_a_rename_with_equal_input_schemas_is_reported_once():
    assert run(tools(tool("add", ARGS)), tools(tool("get-sum", ARGS))) == [
        ("tool.renamed", "BREAKING", "get-sum", None, "tool", "/tools/get-sum")]
    (renamed,) = diff(load_surface(tools(tool("add", ARGS))), load_surface(tools(tool("get-sum", ARGS)))).deltas
    assert (renamed.before, renamed.after) == ("add", "get-sum")


def test_a_rename_whose_schemas_differ_only_in_wording_is_a_rename_plus_the_wording():
    worded = copy.deepcopy(ARGS)
    worded["title"] = "get_sumArguments"
    worded["properties"]["a"]["description"] = "First number"
    worded["required"] = ["b", "a"]
    assert run(tools(tool("add", ARGS)), tools(tool("get-sum", worded))) == [
        ("tool.renamed", "BREAKING", "get-sum", None, "tool", "/tools/get-sum"),
        ("input.description.changed", "COSMETIC", "get-sum", None, "input.a",
         "/tools/get-sum/inputSchema/properties/a/description"),
        ("input.description.changed", "COSMETIC", "get-sum", None, "input",
         "/tools/get-sum/inputSchema/title"),
    ]


def test_different_input_schemas_are_removed_and_added_not_renamed():
    other = copy.deepcopy(ARGS)
    other["properties"]["a"]["type"] = "integer"
    assert run(tools(tool("add", ARGS)), tools(tool("get-sum", other))) == [
        ("tool.removed", "BREAKING", "add", None, "tool", "/tools/add"),
        ("tool.added", "SAFE", "get-sum", None, "tool", "/tools/get-sum"),
    ]


def test_a_renamed_tool_is_compared_for_everything_else():
    after = tool("get-sum", ARGS, annotations={"readOnlyHint": True}, outputSchema={"type": "object"})
    assert run(tools(tool("add", ARGS)), tools(after)) == [
        ("tool.renamed", "BREAKING", "get-sum", None, "tool", "/tools/get-sum"),
        ("tool.annotation.declared", "RISKY", "get-sum", None, "annotations", "/tools/get-sum/annotations"),
        ("output.schema.added", "SAFE", "get-sum", None, "output", "/tools/get-sum/outputSchema"),
    ]


def test_tools_without_arguments_need_alike_names_to_be_a_rename():
    assert [r[0] for r in run(tools(tool("get_time")), tools(tool("get-time")))] == ["tool.renamed"]
    assert sorted(r[0] for r in run(tools(tool("ping")), tools(tool("shutdown")))) == ["tool.added", "tool.removed"]


def test_a_schema_several_tools_share_does_not_say_which_became_which():
    # git 0.2.0 -> 0.4.0: two removed and two added tools all take {repo_path}
    repo = {"type": "object", "properties": {"repo_path": {"type": "string"}}, "required": ["repo_path"]}
    before = tools(tool("git_list_branches", repo), tool("git_list_tags", repo))
    after = tools(tool("git_status", repo), tool("git_reset", repo))
    assert sorted(r[0] for r in run(before, after)) == ["tool.added", "tool.added", "tool.removed", "tool.removed"]
    # ... unless the names say it: a prefix added to every tool
    after = tools(tool("repo_git_list_branches", repo), tool("repo_git_list_tags", repo))
    assert [(r[0], r[2]) for r in run(before, after)] == [
        ("tool.renamed", "repo_git_list_branches"), ("tool.renamed", "repo_git_list_tags")]


# -- texts and metadata ----------------------------------------------------------------------------

TEXTS = [
    ({}, {"title": "T"}, "tool.title.changed", "COSMETIC", "title"),
    ({"title": "T"}, {"title": "U"}, "tool.title.changed", "COSMETIC", "title"),
    ({}, {"annotations": {"title": "T"}}, "tool.title.changed", "COSMETIC", "annotations.title"),
    ({}, {"description": "D"}, "tool.description.changed", "COSMETIC", "description"),
    ({"icons": [{"src": "a.png"}]}, {"icons": [{"src": "b.png"}]}, "tool.icons.changed", "COSMETIC", "icons"),
    ({}, {"_meta": {"k": 1}}, "tool.meta.changed", "RISKY", "_meta"),
    ({"_meta": {"k": 1}}, {"_meta": {"k": 2}}, "tool.meta.changed", "RISKY", "_meta"),
]


@pytest.mark.parametrize("before,after,rule,severity,field", TEXTS)
def test_texts_and_meta(before, after, rule, severity, field):
    path = "/tools/t/" + field.replace(".", "/")
    assert run(tools(tool(**before)), tools(tool(**after))) == [(rule, severity, "t", None, field, path)]


# -- execution.taskSupport (default forbidden) --------------------------------------------------------

EXECUTION = [
    (None, "required", "BREAKING"),
    ("optional", "required", "BREAKING"),
    ("forbidden", "required", "BREAKING"),
    (None, "optional", "SAFE"),
    ("forbidden", "optional", "SAFE"),
    ("optional", "forbidden", "RISKY"),
    ("optional", None, "RISKY"),
    ("required", "optional", "RISKY"),
    ("required", None, "RISKY"),
]


@pytest.mark.parametrize("before,after,severity", EXECUTION)
def test_task_support(before, after, severity):
    def entry(value):
        return tool() if value is None else tool(execution={"taskSupport": value})

    assert run(tools(entry(before)), tools(entry(after))) == [
        ("tool.execution.changed", severity, "t", None, "execution.taskSupport", "/tools/t/execution/taskSupport")]


def test_explicit_default_task_support_is_no_change():
    assert run(tools(tool()), tools(tool(execution={"taskSupport": "forbidden"}))) == []


# -- annotations (missing hints take the spec defaults) ---------------------------------------------

ANNOTATIONS = [
    # (before annotations, after annotations, rule, severity, hint): hints declared on both sides,
    # or dropped (back to the spec default)
    ({"readOnlyHint": True}, {"readOnlyHint": False}, "tool.annotation.read-only.lost", "BREAKING", "readOnlyHint"),
    ({"readOnlyHint": True}, {}, "tool.annotation.read-only.lost", "BREAKING", "readOnlyHint"),
    ({"readOnlyHint": False}, {"readOnlyHint": True}, "tool.annotation.read-only.gained", "RISKY", "readOnlyHint"),
    ({"destructiveHint": False}, {"destructiveHint": True}, "tool.annotation.destructive.gained", "BREAKING",
     "destructiveHint"),
    ({"destructiveHint": False}, None, "tool.annotation.destructive.gained", "BREAKING", "destructiveHint"),
    ({"destructiveHint": True}, {"destructiveHint": False}, "tool.annotation.destructive.lost", "RISKY",
     "destructiveHint"),
    ({"idempotentHint": False}, {"idempotentHint": True}, "tool.annotation.idempotent.changed", "RISKY",
     "idempotentHint"),
    ({"idempotentHint": True}, {"idempotentHint": False}, "tool.annotation.idempotent.changed", "RISKY",
     "idempotentHint"),
    ({"openWorldHint": False}, None, "tool.annotation.open-world.widened", "RISKY", "openWorldHint"),
    ({"openWorldHint": True}, {"openWorldHint": False}, "tool.annotation.open-world.narrowed", "SAFE",
     "openWorldHint"),
]


@pytest.mark.parametrize("before,after,rule,severity,hint", ANNOTATIONS)
def test_annotation_hints(before, after, rule, severity, hint):
    def entry(annotations):
        return tool() if annotations is None else tool(annotations=annotations)

    assert run(tools(entry(before)), tools(entry(after))) == [
        (rule, severity, "t", None, f"annotations.{hint}", f"/tools/t/annotations/{hint}")]


def test_a_hint_dropped_says_its_value_is_the_spec_default_not_a_claim():
    (delta,) = diff(load_surface(tools(tool(annotations={"destructiveHint": False}))),
                    load_surface(tools(tool(annotations={})))).deltas
    assert (delta.before, delta.after) == ("false", "true (undeclared: spec default)")


def test_annotations_added_with_the_spec_defaults_are_no_change():
    defaults = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True}
    assert run(tools(tool()), tools(tool(annotations=defaults))) == []
    assert run(tools(tool(annotations=defaults)), tools(tool(annotations={}))) == []


FIRST_DECLARATIONS = [
    # (after annotations, severity, the claims, the spec defaults they replace)
    ({"readOnlyHint": True}, "RISKY", "read-only", "not read-only"),
    ({"destructiveHint": False}, "RISKY", "non-destructive", "destructive"),
    ({"idempotentHint": True}, "RISKY", "idempotent", "not idempotent"),
    ({"openWorldHint": False}, "SAFE", "closed-world", "open-world"),
    ({"openWorldHint": False, "readOnlyHint": False, "title": "T"}, "SAFE", "closed-world", "open-world"),
    ({"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}, "RISKY",
     "read-only, non-destructive, idempotent and closed-world",
     "not read-only, destructive, not idempotent and open-world"),
]


@pytest.mark.parametrize("after,severity,claims,defaults", FIRST_DECLARATIONS)
def test_a_first_declaration_is_one_delta_graded_as_its_worst_effect(after, severity, claims, defaults):
    result = diff(load_surface(tools(tool())), load_surface(tools(tool(annotations=after))))
    deltas = [d for d in result.deltas if d.rule != "tool.title.changed"]
    assert [(d.rule, d.severity.value, d.field, d.path) for d in deltas] == [
        ("tool.annotation.declared", severity, "annotations", "/tools/t/annotations")]
    (delta,) = deltas
    assert delta.description == f'Tool "t" now declares itself {claims}'
    assert delta.before.startswith("undeclared, spec default") and delta.before.endswith(defaults)
    assert delta.after == f"declared {claims}"
    assert "no longer" not in delta.description  # it never claimed the opposite


def test_hints_declared_for_the_first_time_beside_declared_ones():
    # readOnlyHint was declared and flips (its own delta); destructiveHint is new (a first declaration)
    before = tool(annotations={"readOnlyHint": True})
    after = tool(annotations={"readOnlyHint": False, "destructiveHint": False})
    assert [(r[0], r[1]) for r in run(tools(before), tools(after))] == [
        ("tool.annotation.read-only.lost", "BREAKING"), ("tool.annotation.declared", "RISKY")]


# -- nothing slips through: tool-level facts no rule explains --------------------------------------

UNCLASSIFIED = [
    ({}, {"x-vendor": {"tier": 1}}, "x-vendor", "/tools/t/x-vendor"),
    ({"x-vendor": 1}, {}, "x-vendor", "/tools/t/x-vendor"),
    ({}, {"annotations": {"x-risk": "low"}}, "annotations.x-risk", "/tools/t/annotations/x-risk"),
    ({"execution": {"taskSupport": "optional"}}, {"execution": {"taskSupport": "optional", "ttl": 5}}, "execution",
     "/tools/t/execution"),
    # a hint that is not a boolean reads as the default; changing it is still a change
    ({"annotations": {"readOnlyHint": "yes"}}, {"annotations": {"readOnlyHint": "no"}}, "annotations.readOnlyHint",
     "/tools/t/annotations/readOnlyHint"),
]


@pytest.mark.parametrize("before,after,field,path", UNCLASSIFIED)
def test_unknown_tool_level_changes_are_unclassified(before, after, field, path):
    assert run(tools(tool(**before)), tools(tool(**after))) == [("tool.unclassified", "RISKY", "t", None, field, path)]


# -- grouped tools (RULES.md "Actions") -------------------------------------------------------------


def grouped() -> dict[str, JSON]:
    """billing: get_invoice (a $ref), list (const) and listAll (one-value enum)."""
    return json.loads(fixture_path("grouped.json").read_text())["tools"][0]


def changed(edit) -> dict[str, JSON]:
    billing = grouped()
    edit(billing["inputSchema"])
    return billing


BILLING = "/tools/billing/inputSchema"


def test_a_change_inside_an_action_carries_the_action_and_its_field():
    def tighten(schema):
        schema["oneOf"][1]["properties"]["limit"]["maximum"] = 10

    assert run(tools(grouped()), tools(changed(tighten))) == [
        ("input.bound.tightened", "BREAKING", "billing", "list", "actions.list.input.limit",
         BILLING + "/oneOf/1/properties/limit/maximum")]


def test_list_is_not_list_all():
    # listAll's branch changes; nothing may be attributed to "list" (a prefix of it)
    def retype(schema):
        schema["oneOf"][2]["properties"]["cursor"] = {"type": "integer"}

    assert run(tools(grouped()), tools(changed(retype))) == [
        ("input.type.changed", "BREAKING", "billing", "listAll", "actions.listAll.input.cursor",
         BILLING + "/oneOf/2/properties/cursor/type")]


def test_a_change_in_an_action_defined_by_reference():
    def retype(schema):
        schema["$defs"]["GetInvoice"]["properties"]["id"] = {"type": "integer"}

    assert run(tools(grouped()), tools(changed(retype))) == [
        ("input.type.changed", "BREAKING", "billing", "get_invoice", "actions.get_invoice.input.id",
         BILLING + "/oneOf/0/properties/id/type")]


def test_action_removed_and_added():
    def drop_list(schema):
        del schema["oneOf"][1]

    def add_delete(schema):
        schema["oneOf"].append(
            {"type": "object", "properties": {"action": {"const": "delete"}}, "required": ["action"]}
        )

    assert run(tools(grouped()), tools(changed(drop_list))) == [
        ("action.removed", "BREAKING", "billing", "list", "actions.list", BILLING + "/oneOf/1")]
    assert run(tools(grouped()), tools(changed(add_delete))) == [
        ("action.added", "SAFE", "billing", "delete", "actions.delete", BILLING + "/oneOf/3")]


def test_changes_outside_the_union_belong_to_the_whole_tool():
    def close(schema):
        schema["additionalProperties"] = False
        schema["description"] = "Pick an action"

    assert run(tools(grouped()), tools(changed(close))) == [
        ("input.additional-properties.closed", "RISKY", "billing", None, "input", BILLING + "/additionalProperties"),
        ("input.description.changed", "COSMETIC", "billing", None, "input", BILLING + "/description"),
    ]


def test_reordered_actions_and_oneof_to_anyof_are_no_change():
    def reorder(schema):
        schema["oneOf"].reverse()

    def any_of(schema):
        schema["anyOf"] = schema.pop("oneOf")

    assert run(tools(grouped()), tools(changed(reorder))) == []
    assert run(tools(grouped()), tools(changed(any_of))) == []


def test_actions_are_still_compared_when_the_union_keyword_changes():
    def any_of_and_tighten(schema):
        schema["anyOf"] = schema.pop("oneOf")
        schema["anyOf"][1]["properties"]["limit"]["maximum"] = 10

    assert run(tools(grouped()), tools(changed(any_of_and_tighten))) == [
        ("input.bound.tightened", "BREAKING", "billing", "list", "actions.list.input.limit",
         BILLING + "/anyOf/1/properties/limit/maximum")]


def test_a_pin_spelled_as_const_or_one_value_enum_is_the_same_action():
    def respell(schema):
        schema["oneOf"][1]["properties"]["action"] = {"enum": ["list"]}
        schema["oneOf"][2]["properties"]["action"] = {"const": "listAll"}

    assert run(tools(grouped()), tools(changed(respell))) == []


# -- prompts and resources ------------------------------------------------------------------------


def prompts(*entries: dict[str, JSON]) -> JSON:
    return {"tools": [], "prompts": list(entries)}


PROMPTS = [
    ([{"name": "p"}], [], "prompt.removed", "BREAKING", "prompts.p", "/prompts/p"),
    ([], [{"name": "p"}], "prompt.added", "SAFE", "prompts.p", "/prompts/p"),
    ([{"name": "p", "arguments": [{"name": "x"}]}], [{"name": "p"}], "prompt.argument.removed", "BREAKING",
     "prompts.p.arguments.x", "/prompts/p/arguments/x"),
    ([{"name": "p"}], [{"name": "p", "arguments": [{"name": "x", "required": True}]}],
     "prompt.argument.added-required", "BREAKING", "prompts.p.arguments.x", "/prompts/p/arguments/x"),
    ([{"name": "p"}], [{"name": "p", "arguments": [{"name": "x"}]}], "prompt.argument.added", "SAFE",
     "prompts.p.arguments.x", "/prompts/p/arguments/x"),
    ([{"name": "p", "arguments": [{"name": "x"}]}], [{"name": "p", "arguments": [{"name": "x", "required": True}]}],
     "prompt.argument.required.added", "BREAKING", "prompts.p.arguments.x", "/prompts/p/arguments/x/required"),
    ([{"name": "p", "arguments": [{"name": "x", "required": True}]}], [{"name": "p", "arguments": [{"name": "x"}]}],
     "prompt.argument.required.removed", "SAFE", "prompts.p.arguments.x", "/prompts/p/arguments/x/required"),
    ([{"name": "p"}], [{"name": "p", "description": "Summarise"}], "prompt.description.changed", "COSMETIC",
     "prompts.p.description", "/prompts/p/description"),
    ([{"name": "p"}], [{"name": "p", "title": "Summary"}], "prompt.description.changed", "COSMETIC",
     "prompts.p.title", "/prompts/p/title"),
    ([{"name": "p", "arguments": [{"name": "x"}]}], [{"name": "p", "arguments": [{"name": "x", "description": "X"}]}],
     "prompt.description.changed", "COSMETIC", "prompts.p.arguments.x.description",
     "/prompts/p/arguments/x/description"),
    ([{"name": "p"}], [{"name": "p", "icons": []}], "prompt.unclassified", "RISKY", "prompts.p.icons",
     "/prompts/p/icons"),
]


@pytest.mark.parametrize("before,after,rule,severity,field,path", PROMPTS)
def test_prompts(before, after, rule, severity, field, path):
    assert run(prompts(*before), prompts(*after)) == [(rule, severity, None, None, field, path)]


def test_prompt_arguments_are_compared_by_name_not_order():
    args = [{"name": "x"}, {"name": "y", "required": True}]
    assert run(prompts({"name": "p", "arguments": args}), prompts({"name": "p", "arguments": args[::-1]})) == []
    explicit = [{"name": "x", "required": False}, {"name": "y", "required": True}]
    assert run(prompts({"name": "p", "arguments": args}), prompts({"name": "p", "arguments": explicit})) == []


def resources(*entries: dict[str, JSON], key: str = "resources") -> JSON:
    return {"tools": [], key: list(entries)}


RESOURCES = [
    ([{"uri": "file:///a", "name": "a"}], [], "resource.removed", "BREAKING", "resources.file:///a",
     "/resources/file:~1~1~1a"),
    ([], [{"uri": "file:///a", "name": "a"}], "resource.added", "SAFE", "resources.file:///a",
     "/resources/file:~1~1~1a"),
    ([{"uri": "file:///a", "name": "a", "mimeType": "text/plain"}],
     [{"uri": "file:///a", "name": "a", "mimeType": "application/json"}], "resource.mime-type.changed", "RISKY",
     "resources.file:///a.mimeType", "/resources/file:~1~1~1a/mimeType"),
    ([{"uri": "file:///a", "name": "a"}], [{"uri": "file:///a", "name": "b"}], "resource.description.changed",
     "COSMETIC", "resources.file:///a.name", "/resources/file:~1~1~1a/name"),
    ([{"uri": "file:///a", "name": "a"}], [{"uri": "file:///a", "name": "a", "title": "A"}],
     "resource.description.changed", "COSMETIC", "resources.file:///a.title", "/resources/file:~1~1~1a/title"),
    ([{"uri": "file:///a", "name": "a"}], [{"uri": "file:///a", "name": "a", "description": "The a"}],
     "resource.description.changed", "COSMETIC", "resources.file:///a.description",
     "/resources/file:~1~1~1a/description"),
    ([{"uri": "file:///a", "name": "a"}], [{"uri": "file:///a", "name": "a", "size": 10}], "resource.unclassified",
     "RISKY", "resources.file:///a.size", "/resources/file:~1~1~1a/size"),
]


@pytest.mark.parametrize("before,after,rule,severity,field,path", RESOURCES)
def test_resources(before, after, rule, severity, field, path):
    assert run(resources(*before), resources(*after)) == [(rule, severity, None, None, field, path)]


def test_resource_templates_are_keyed_by_uri_template():
    before = resources({"uriTemplate": "file:///{path}", "name": "f"}, key="resourceTemplates")
    after = resources({"uriTemplate": "file:///{dir}/{path}", "name": "f"}, key="resourceTemplates")
    assert run(before, after) == [
        ("resource.removed", "BREAKING", None, None, "resourceTemplates.file:///{path}",
         "/resourceTemplates/file:~1~1~1{path}"),
        ("resource.added", "SAFE", None, None, "resourceTemplates.file:///{dir}/{path}",
         "/resourceTemplates/file:~1~1~1{dir}~1{path}"),
    ]


def test_a_recursive_definition_inside_an_action_is_reported_once_in_that_action():
    def schema(label: JSON) -> JSON:
        return {"type": "object", "oneOf": [
            {"type": "object", "properties": {"action": {"const": "plant"}, "tree": {"$ref": "#/$defs/Node"}}},
            {"type": "object", "properties": {"action": {"const": "fell"}, "id": {"type": "string"}}},
        ], "$defs": {"Node": {"type": "object", "properties": {
            "label": label, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}}

    assert run(tools(tool("garden", schema({"type": "string"}))),
               tools(tool("garden", schema({"type": "string", "maxLength": 20})))) == [
        ("input.bound.tightened", "BREAKING", "garden", "plant", "actions.plant.input.tree.label",
         "/tools/garden/inputSchema/oneOf/0/properties/tree/properties/label/maxLength")]
