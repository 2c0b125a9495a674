"""ContractDiff on real contract evolutions: every consecutive pair of versions in
tests/corpus, with the deltas RULES.md requires, worked out by reading the two captures
(what changed, and which row of RULES.md grades it) - not from the tool's output.

``COUNTS`` pins every compatibility delta of each pair (rule and severity, counted); the
security axis (``security.*``) belongs to its own family and is left out here. The tests
below it pin the deltas that matter most with their tool, field and path.
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from itertools import pairwise
from pathlib import Path

import pytest

from app import load_surface
from app.diff import Delta, diff
from app.model import Surface
from tests.conftest import CORPUS, CORPUS_SERVERS, corpus_versions

PAIRS = [(server, before.stem, after.stem) for server in CORPUS_SERVERS
         for before, after in pairwise(corpus_versions(server))]


@cache
def load(server: str, version: str) -> Surface:
    return load_surface(Path(CORPUS / server / f"{version}.json"))


def deltas(server: str, before: str, after: str) -> list[Delta]:
    """The compatibility deltas (the security axis left out) from one version to the next."""
    return [d for d in diff(load(server, before), load(server, after)).deltas if d.category != "security"]


def find(found: list[Delta], rule: str, tool: str | None, field: str | None = None) -> list[Delta]:
    return [d for d in found if d.rule == rule and d.tool == tool and (field is None or d.field == field)]


B, R, S, C = "BREAKING", "RISKY", "SAFE", "COSMETIC"

COUNTS: dict[tuple[str, str, str], dict[tuple[str, str], int]] = {
    # 6 new tools (annotatedMessage, getResourceLinks, getResourceReference, printEnv, startElicitation,
    # structuredContent) and the prompt resource_prompt
    ("everything", "0.6.2", "2025.7.29"): {("tool.added", S): 6, ("prompt.added", S): 1},
    ("everything", "2025.7.29", "2025.9.12"): {("tool.removed", B): 1},  # startElicitation
    # Renames (RULES.md tool.renamed / prompt.renamed): add -> get-sum keeps its input contract;
    # annotatedMessage, getResourceLinks, longRunningOperation (a "trigger" prefix), getTinyImage and
    # printEnv (both "additionalProperties: false" dropped; "print" -> "get"), getResourceReference and
    # structuredContent (arguments changed) keep their names apart from casing, separators and a leading
    # verb: 8 renames, each with a new title (as echo has) and 7 new descriptions. sampleLLM is gone
    # (nothing like it is new); gzip-file-as-resource and the two toggles are new.
    # get-env / get-tiny-image reopen their roots; get-resource-reference drops resourceId's bounds and
    # requirement, gains a default 1 and an optional resourceType; get-structured-content's location
    # becomes an enum and loses minLength 1; two argument descriptions changed.
    # Prompts: simple_prompt -> simple-prompt, resource_prompt -> resource-prompt (with a new required
    # resourceType); complex_prompt is gone, args-prompt and completable-prompt are new; 2 titles, a
    # description and an argument description changed. The 100 static resources are gone, 7 documents new.
    ("everything", "2025.9.12", "2026.1.14"): {
        ("tool.renamed", B): 8, ("tool.removed", B): 1, ("tool.added", S): 3,
        ("tool.title.changed", C): 9, ("tool.description.changed", C): 7,
        ("input.additional-properties.opened", S): 2, ("input.bound.relaxed", S): 3, ("input.default.changed", R): 1,
        ("input.description.changed", C): 2, ("input.enum.added", B): 1, ("input.property.added", S): 1,
        ("input.required.removed", S): 1,
        ("prompt.renamed", B): 2, ("prompt.removed", B): 1, ("prompt.added", S): 2,
        ("prompt.argument.added-required", B): 1, ("prompt.description.changed", C): 4,
        ("resource.removed", B): 100, ("resource.added", S): 7,
    },
    # annotations declared for the first time on all 12 tools (9 claim read-only, none destructive, 10
    # idempotent, 11 closed-world): one tool.annotation.declared each, RISKY as every one claims to be
    # non-destructive; 8 input roots reopened, one argument description dropped from args-prompt
    ("everything", "2026.1.14", "2026.8.31"): {
        ("tool.added", S): 1, ("tool.annotation.declared", R): 12,
        ("input.additional-properties.opened", S): 8, ("prompt.description.changed", C): 1,
    },
    ("filesystem", "0.5.1", "2025.3.28"): {("tool.added", S): 2, ("input.property.added", S): 1},
    # read_file: "DEPRECATED: Use read_text_file instead." (read_text_file is one of the 3 new tools)
    ("filesystem", "2025.3.28", "2025.7.29"): {
        ("tool.added", S): 3, ("input.property.added", S): 2, ("tool.description.changed", C): 2,
        ("tool.deprecated", R): 1},
    # every tool gains a title and an output schema; first annotations: 10 claim read-only, create_directory
    # and move_file claim not destructive, create_directory and write_file idempotent (13 tools; edit_file
    # declares only the defaults); list_allowed_directories closes its root ($schema added beside it);
    # read_multiple_files.paths gains minItems 1 and a description
    ("filesystem", "2025.7.29", "2025.11.25"): {
        ("output.schema.added", S): 14, ("tool.title.changed", C): 14, ("tool.annotation.declared", R): 13,
        ("input.additional-properties.closed", R): 1, ("input.bound.tightened", B): 1,
        ("input.property.added", S): 1, ("input.description.changed", C): 2, ("tool.description.changed", C): 2,
    },
    # 14 roots and edit_file's edits[] reopened, openWorldHint false declared everywhere (SAFE), taskSupport "forbidden"
    # spelled out (the default: nothing), move_file now destructive, read_media_file's result items
    # become an anyOf of the old shape (without "blob") and a new resource shape
    ("filesystem", "2025.11.25", "2026.8.31"): {
        ("input.additional-properties.opened", S): 15, ("tool.annotation.declared", S): 14,
        ("tool.annotation.destructive.gained", B): 1, ("output.enum.value-removed", S): 1,
        ("output.union.branch-added", B): 1, ("tool.description.changed", C): 1,
    },
    # 9 tools gone, 5 new; {repo_path} is shared by 2 removed and 4 added tools, so no pair is a rename;
    # git_commit.files and git_log.ref removed from open objects; pydantic titles renamed
    ("git", "0.2.0", "0.4.0"): {
        ("tool.removed", B): 9, ("tool.added", S): 5, ("input.property.removed", R): 2,
        ("input.description.changed", C): 2, ("tool.description.changed", C): 2,
    },
    ("git", "0.4.0", "2025.7.1"): {("tool.added", S): 6, ("input.property.added", S): 2},
    ("git", "2025.7.1", "2025.9.25"): {("tool.removed", B): 1, ("input.property.added", S): 2},
    # first annotations on all 12 tools (7 read-only, 11 non-destructive, 9 idempotent, 12 closed-world),
    # git_add.files minItems 1, every pydantic title renamed
    ("git", "2025.9.25", "2026.10.19"): {
        ("input.bound.tightened", B): 1, ("input.description.changed", C): 12, ("tool.annotation.declared", R): 12,
        ("tool.description.changed", C): 1,
    },
    # 8 new tools; 9 argument descriptions dropped (create_issue x7, push_files.files[] x2)
    ("github", "0.6.2", "2025.1.23"): {("tool.added", S): 8, ("input.description.changed", C): 9},
    ("github", "2025.1.23", "2025.3.19"): {("tool.added", S): 9},
    ("github", "2025.3.19", "2025.3.28"): {},  # same tools/list
    ("github", "2025.3.28", "2025.4.8"): {("input.union.branch-added", S): 1, ("input.description.changed", C): 1},
    # every root and every items object closed
    ("memory", "0.6.2", "2025.9.25"): {("input.additional-properties.closed", R): 14},
    ("memory", "2025.9.25", "2025.11.25"): {
        ("output.schema.added", S): 9, ("tool.title.changed", C): 9, ("input.description.changed", C): 9},
    ("memory", "2025.11.25", "2026.1.26"): {("input.additional-properties.opened", S): 1},  # read_graph
    ("memory", "2026.1.26", "2026.8.31"): {
        ("input.additional-properties.opened", S): 13, ("resource.added", S): 1,
        ("tool.annotation.declared", R): 9,  # first annotations: 3 read-only, 6 non-destructive, 9 closed-world
    },
    ("puppeteer", "0.6.2", "2025.5.12"): {("input.property.added", S): 3, ("input.description.changed", C): 1},
    ("time", "0.5.1", "2026.1.26"): {},  # same tools/list
    # both tools declare themselves read-only, non-destructive, idempotent and closed-world for the first time
    ("time", "2026.1.26", "2026.6.4"): {
        ("tool.annotation.declared", R): 2,
        ("tool.description.changed", C): 1,
    },
    # output schemas with $ref/$defs appear; the inputs only gain pydantic titles
    ("time", "2026.6.4", "2026.10.19"): {("output.schema.added", S): 2, ("input.description.changed", C): 6},
}


def test_every_consecutive_pair_has_expectations():
    assert sorted(PAIRS) == sorted(COUNTS)


@pytest.mark.parametrize("server,before,after", PAIRS)
def test_every_compatibility_delta_of_each_pair(server, before, after):
    found = Counter((d.rule, d.severity.value) for d in deltas(server, before, after))
    assert dict(found) == COUNTS[(server, before, after)]


@pytest.mark.parametrize("server,version", [(s, v.stem) for s in CORPUS_SERVERS for v in corpus_versions(s)])
def test_every_version_against_itself_is_unchanged(server, version):
    same = load_surface(Path(CORPUS / server / f"{version}.json"))
    assert diff(load(server, version), same).deltas == ()


# -- the deltas that matter, with their place ------------------------------------------------------


def test_filesystem_2025_7_29_to_2025_11_25():
    found = deltas("filesystem", "2025.7.29", "2025.11.25")
    (min_items,) = find(found, "input.bound.tightened", "read_multiple_files", "input.paths")
    assert (min_items.severity.value, min_items.path, min_items.after) == (
        "BREAKING", "/tools/read_multiple_files/inputSchema/properties/paths/minItems", "at least 1 item")
    assert len(find(found, "output.schema.added", "read_text_file", "output")) == 1
    # first annotations: one delta per tool, worded as a declaration, never "no longer claims"
    (read_only,) = find(found, "tool.annotation.declared", "list_directory")
    assert (read_only.severity.value, read_only.description, read_only.before) == (
        "RISKY", 'Tool "list_directory" now declares itself read-only', "undeclared, spec default not read-only")
    (create,) = find(found, "tool.annotation.declared", "create_directory")
    assert create.description == 'Tool "create_directory" now declares itself non-destructive and idempotent'
    (closed,) = find(found, "input.additional-properties.closed", "list_allowed_directories", "input")
    assert (closed.severity.value, closed.path) == (
        "RISKY", "/tools/list_allowed_directories/inputSchema/additionalProperties")
    assert {d.tool for d in found if d.rule == "tool.annotation.declared" and "non-destructive" in d.after} == {
        "create_directory", "move_file"}
    assert not [d for d in found if d.rule.startswith("tool.annotation.") and d.rule != "tool.annotation.declared"]


def test_filesystem_2025_11_25_to_2026_8_31():
    found = deltas("filesystem", "2025.11.25", "2026.8.31")
    (destructive,) = [d for d in found if d.rule == "tool.annotation.destructive.gained"]
    assert (destructive.tool, destructive.severity.value, destructive.before, destructive.after) == (
        "move_file", "BREAKING", "false", "true")
    opened = [d for d in found if d.rule == "input.additional-properties.opened"]
    assert {d.field for d in opened} == {"input", "input.edits[]"}
    assert all(d.severity.value == "SAFE" for d in opened)
    # read_media_file: the old result shape lost "blob" (SAFE for output); the new shape is a result
    # the old reader refuses (its type enum lacks "resource"): an output branch added, BREAKING
    (blob,) = find(found, "output.enum.value-removed", "read_media_file", "output.content[].type")
    assert blob.path == "/tools/read_media_file/outputSchema/properties/content/items/anyOf/0/properties/type/enum"
    (shape,) = find(found, "output.union.branch-added", "read_media_file", "output.content[]")
    assert shape.path == "/tools/read_media_file/outputSchema/properties/content/items/anyOf/1"


def test_memory_closes_roots_and_items():
    found = deltas("memory", "0.6.2", "2025.9.25")
    fields = {(d.tool, d.field) for d in found}
    assert ("create_entities", "input") in fields and ("create_entities", "input.entities[]") in fields
    assert ("read_graph", "input") in fields
    (items,) = find(found, "input.additional-properties.closed", "add_observations", "input.observations[]")
    assert items.path == "/tools/add_observations/inputSchema/properties/observations/items/additionalProperties"


def test_git_add_files_needs_an_item():
    (min_items,) = [d for d in deltas("git", "2025.9.25", "2026.10.19") if d.rule == "input.bound.tightened"]
    assert (min_items.tool, min_items.field, min_items.severity.value) == ("git_add", "input.files", "BREAKING")


def test_git_init_removed_and_optional_nullable_timestamps_added():
    found = deltas("git", "2025.7.1", "2025.9.25")
    (removed,) = find(found, "tool.removed", "git_init")
    assert removed.severity.value == "BREAKING"
    added = find(found, "input.property.added", "git_log")
    assert sorted(d.field for d in added) == ["input.end_timestamp", "input.start_timestamp"]
    assert {d.after for d in added} == {"optional null or string"}


def test_git_tools_sharing_one_schema_are_not_paired_as_renames():
    found = deltas("git", "0.2.0", "0.4.0")
    assert find(found, "tool.renamed", "git_status") == []
    assert {d.tool for d in found if d.rule == "tool.removed"} >= {"git_list_branches", "git_list_tags"}


def test_github_review_comments_gain_a_second_shape():
    # items: {path, position, body} -> anyOf [{path, position, body}, {path, line, body}]: the old
    # shape is still a branch, so only a branch is added (the description says "position or line")
    found = deltas("github", "2025.3.28", "2025.4.8")
    (branch,) = find(found, "input.union.branch-added", "create_pull_request_review", "input.comments[]")
    assert branch.path == "/tools/create_pull_request_review/inputSchema/properties/comments/items/anyOf/1"
    assert branch.severity.value == "SAFE"


def test_time_output_schemas_with_references():
    found = deltas("time", "2026.6.4", "2026.10.19")
    assert sorted(d.tool for d in found if d.rule == "output.schema.added") == ["convert_time", "get_current_time"]
    assert {d.rule for d in found} == {"output.schema.added", "input.description.changed"}


def test_everything_renames_keep_their_old_names():
    found = deltas("everything", "2025.9.12", "2026.1.14")
    renames = {(d.before, d.after) for d in found if d.rule == "tool.renamed"}
    assert renames == {("add", "get-sum"), ("annotatedMessage", "get-annotated-message"),
                       ("getResourceLinks", "get-resource-links"),
                       ("longRunningOperation", "trigger-long-running-operation"),
                       ("getTinyImage", "get-tiny-image"), ("printEnv", "get-env"),
                       ("getResourceReference", "get-resource-reference"),
                       ("structuredContent", "get-structured-content")}
    # nothing new is like sampleLLM: removed, and the three new tools stay new
    assert find(found, "tool.removed", "sampleLLM")
    assert sorted(d.tool for d in found if d.rule == "tool.added") == [
        "gzip-file-as-resource", "toggle-simulated-logging", "toggle-subscriber-updates"]
    # a renamed tool is compared in full at its new name: getTinyImage reopened its root
    (opened,) = find(found, "input.additional-properties.opened", "get-tiny-image")
    assert opened.severity.value == "SAFE"
    prompts = {(d.before, d.after) for d in found if d.rule == "prompt.renamed"}
    assert prompts == {("simple_prompt", "simple-prompt"), ("resource_prompt", "resource-prompt")}


def test_everything_renames_carry_a_confidence_and_the_new_name_as_the_fix():
    found = deltas("everything", "2025.9.12", "2026.1.14")
    (tiny,) = find(found, "tool.renamed", "get-tiny-image")
    assert "confidence 1.00" in tiny.description and tiny.hint == 'Call "get-tiny-image" instead of "getTinyImage".'
    (summed,) = find(found, "tool.renamed", "get-sum")  # names unalike: the equal contract decides
    assert "same contract" in summed.description and "confidence 0.80" in summed.description


def test_going_back_flips_the_grades():
    # the reverse of a closing is an opening, of an added output schema a removed one
    back = Counter(d.rule for d in deltas("memory", "2025.9.25", "0.6.2"))
    assert back == {"input.additional-properties.opened": 14}
    back = Counter((d.rule, d.severity.value) for d in deltas("filesystem", "2025.11.25", "2025.7.29"))
    assert back[("output.schema.removed", "RISKY")] == 14
    assert back[("input.bound.relaxed", "SAFE")] == 1
    assert back[("tool.annotation.read-only.lost", "BREAKING")] == 10
