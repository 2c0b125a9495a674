"""Renames of tools, prompts and resources (RULES.md ``tool.renamed``, ``prompt.renamed``,
``resource.renamed``; app/diff/renames.py): normalised names and contracts, a confidence,
one to one; removed + added when nothing matches."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app import load_surface
from app.diff import diff
from app.diff.renames import RENAME_CONFIDENCE, Item, match, name_key, name_words
from app.jsontypes import JSON

NUMBERS = {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
           "required": ["a", "b"], "additionalProperties": False}
CLOSED_EMPTY = {"type": "object", "properties": {}, "additionalProperties": False}
OPEN_EMPTY = {"type": "object", "properties": {}}


def tool(name: str, schema: JSON = None, **fields: JSON) -> dict[str, JSON]:
    return {"name": name, "inputSchema": OPEN_EMPTY if schema is None else schema, **fields}


def rules(before: list[JSON], after: list[JSON], key: str = "tools") -> list[tuple[str, str | None, str | None]]:
    result = diff(load_surface({"tools": [], key: before}), load_surface({"tools": [], key: after}))
    return [(d.rule, d.before, d.after) for d in result.deltas if d.rule.endswith((".renamed", ".removed", ".added"))]


# --- names ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "words"), [
    ("getTinyImage", ("get", "tiny", "image")),
    ("get-tiny-image", ("get", "tiny", "image")),
    ("get_tiny_image", ("get", "tiny", "image")),
    ("GetTinyImage", ("get", "tiny", "image")),
    ("sampleLLM", ("sample", "llm")),
    ("HTTPServer_v2", ("http", "server", "v", "2")),
    ("old Tool 17", ("old", "tool", "17")),
    ("fs.read", ("fs", "read")),
])
def test_name_words_split_casing_separators_and_digits(name, words):
    assert name_words(name) == words


@pytest.mark.parametrize(("a", "b"), [
    ("printEnv", "get-env"), ("getTinyImage", "get-tiny-image"), ("longRunningOperation",
                                                                    "trigger-long-running-operation"),
    ("structuredContent", "get-structured-content"), ("simple_prompt", "simple-prompt"),
])
def test_one_name_apart_from_casing_separators_and_a_leading_verb(a, b):
    assert name_key(name_words(a)) == name_key(name_words(b))


@pytest.mark.parametrize(("a", "b"), [("read_file", "write_file"), ("get", "run"), ("list_tags", "tags"),
                                      ("git_status", "git_list_tags")])
def test_other_names_stay_apart(a, b):
    assert name_key(name_words(a)) != name_key(name_words(b))


def test_a_lone_verb_is_a_name():
    assert name_key(name_words("get")) == "get"


# --- the matcher ------------------------------------------------------------------------------------


def item(name: str, *features: str, shape: bool = False) -> Item:
    found = frozenset(features)
    return Item(name, name, found, found if shape else None)


def test_one_normalised_name_is_a_rename_whatever_the_contract():
    (found,) = match([item("getResourceReference", "id")], [item("get-resource-reference", "type", "other")])
    assert (found.old, found.new) == ("getResourceReference", "get-resource-reference")
    assert found.confidence == 0.9 and found.confidence >= RENAME_CONFIDENCE


def test_the_contract_raises_the_confidence_of_one_name():
    (alike,) = match([item("getX", "a", "b")], [item("get-x", "a", "b")])
    (unalike,) = match([item("getX", "a", "b")], [item("get-x", "c")])
    assert alike.confidence == 1.0 > unalike.confidence


def test_an_equal_contract_only_these_two_share_pairs_unrelated_names():
    old, new = item("add", "a", "b", shape=True), item("get-sum", "a", "b", shape=True)
    (found,) = match([old], [new], lambda o, n: True)
    assert (found.old, found.new, found.evidence) == ("add", "get-sum", "same contract")
    assert match([old], [new], lambda o, n: False) == []  # the walk found more than wording


def test_a_shape_several_items_share_says_nothing_alone():
    # git 0.2.0 -> 0.4.0: two removed and two added tools all take {repo_path}
    removed = [item("git_list_branches", "repo_path", shape=True), item("git_list_tags", "repo_path", shape=True)]
    added = [item("git_status", "repo_path", shape=True), item("git_reset", "repo_path", shape=True)]
    assert match(removed, added, lambda o, n: True) == []


def test_alike_names_with_alike_contracts_are_a_rename():
    (found,) = match([item("search_repos", "q", "page")], [item("search_repositories", "q", "page")])
    assert found.evidence == "alike names and contracts" and found.confidence >= RENAME_CONFIDENCE
    # ... but alike names with unalike contracts are not
    assert match([item("search_repos", "q", "page")], [item("search_repositories", "query")]) == []


def test_renames_are_one_to_one_most_confident_first():
    removed = [item("get_user", "id"), item("getUser", "id")]
    added = [item("user", "id")]
    (found,) = match(removed, added)
    assert found.old == "getUser"  # both are 1.0: ties by old name


def test_a_required_contract_similarity_keeps_other_contracts_apart():
    assert match([item("f", "mime:a")], [item("f", "mime:b")], min_contract=1.0) == []
    assert len(match([item("f", "mime:a")], [item("f", "mime:a")], min_contract=1.0)) == 1


@given(st.lists(st.text(min_size=1, max_size=12), max_size=12, unique=True),
       st.lists(st.text(min_size=1, max_size=12), max_size=12, unique=True))
def test_renames_pair_each_removed_and_added_name_at_most_once(removed, added):
    found = match([item(n, "x") for n in removed], [item(n, "x") for n in added])
    assert len({r.old for r in found}) == len(found) == len({r.new for r in found})
    assert {r.old for r in found} <= set(removed) and {r.new for r in found} <= set(added)
    assert all(RENAME_CONFIDENCE <= r.confidence <= 1.0 for r in found)


# --- tools, prompts, resources through the engine ----------------------------------------------------


def test_tool_renamed_with_casing_and_separators_changed_and_the_root_reopened():
    assert rules([tool("getTinyImage", CLOSED_EMPTY)], [tool("get-tiny-image", OPEN_EMPTY)]) == [
        ("tool.renamed", "getTinyImage", "get-tiny-image")]
    assert rules([tool("printEnv", CLOSED_EMPTY)], [tool("get-env", OPEN_EMPTY)]) == [
        ("tool.renamed", "printEnv", "get-env")]


def test_tools_without_arguments_and_unrelated_names_stay_removed_and_added():
    assert rules([tool("sampleLLM", CLOSED_EMPTY)], [tool("toggle-simulated-logging", OPEN_EMPTY)]) == [
        ("tool.removed", "sampleLLM", None), ("tool.added", None, "toggle-simulated-logging")]


def test_a_renamed_tool_with_changed_arguments_is_a_rename_plus_the_argument_changes():
    before = tool("getResourceReference", {"type": "object", "properties": {"id": {"type": "number"}},
                                           "required": ["id"]})
    after = tool("get-resource-reference", {"type": "object", "properties": {"id": {"type": "number"},
                                                                             "kind": {"type": "string"}},
                                            "required": ["id", "kind"]})
    result = diff(load_surface({"tools": [before]}), load_surface({"tools": [after]}))
    assert [(d.rule, d.tool, d.field) for d in result.deltas] == [
        ("tool.renamed", "get-resource-reference", "tool"),
        ("input.property.added-required", "get-resource-reference", "input.kind")]
    assert result.tools.removed == ("getResourceReference",) and result.tools.added == ("get-resource-reference",)


def test_a_rename_keeps_the_gate_breaking_and_names_the_fix():
    result = diff(load_surface({"tools": [tool("add", NUMBERS)]}),
                  load_surface({"tools": [tool("get-sum", copy.deepcopy(NUMBERS))]}))
    (renamed,) = result.deltas
    assert renamed.severity.value == "BREAKING" and renamed.hint == 'Call "get-sum" instead of "add".'


def test_prompts_renamed_by_name_and_arguments():
    before = [{"name": "simple_prompt"}, {"name": "complex_prompt", "arguments": [{"name": "t", "required": True}]}]
    after = [{"name": "simple-prompt"}, {"name": "args-prompt", "arguments": [{"name": "city", "required": True}]}]
    assert rules(before, after, "prompts") == [
        ("prompt.removed", "complex_prompt", None), ("prompt.renamed", "simple_prompt", "simple-prompt"),
        ("prompt.added", None, "args-prompt")]


def test_a_renamed_prompt_is_compared_in_full():
    before = [{"name": "resource_prompt", "arguments": [{"name": "resourceId", "required": True}]}]
    after = [{"name": "resource-prompt", "arguments": [{"name": "resourceId", "required": True},
                                                       {"name": "resourceType", "required": True}]}]
    result = diff(load_surface({"tools": [], "prompts": before}), load_surface({"tools": [], "prompts": after}))
    assert [(d.rule, d.field) for d in result.deltas] == [
        ("prompt.renamed", "prompts.resource-prompt"),
        ("prompt.argument.added-required", "prompts.resource-prompt.arguments.resourceType")]


def test_a_resource_under_a_new_uri_with_its_name_and_type_is_a_rename():
    before = [{"uri": "test://static/resource/1", "name": "Resource 1", "mimeType": "text/plain"},
              {"uri": "test://static/resource/2", "name": "Resource 2", "mimeType": "text/plain"}]
    after = [{"uri": "demo://static/resource/1", "name": "Resource 1", "mimeType": "text/plain"},
             {"uri": "demo://static/resource/2", "name": "Resource 2", "mimeType": "application/octet-stream"}]
    assert rules(before, after, "resources") == [
        ("resource.renamed", "test://static/resource/1", "demo://static/resource/1"),
        ("resource.removed", "test://static/resource/2", None),
        ("resource.added", None, "demo://static/resource/2")]


def test_resources_with_unrelated_names_are_removed_and_added():
    before = [{"uri": "test://static/resource/1", "name": "Resource 1", "mimeType": "text/plain"}]
    after = [{"uri": "demo://resource/static/document/architecture.md", "name": "architecture.md",
              "mimeType": "text/plain"}]
    assert [r[0] for r in rules(before, after, "resources")] == ["resource.removed", "resource.added"]
