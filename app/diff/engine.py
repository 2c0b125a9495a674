"""ContractDiff: compare a known-good surface with a new one, rule by rule.

Pure: no I/O. Equal server digests mean no work at all; per tool, equal digests skip
the tool. Deltas come out in the order RULES.md fixes (severity, tool, action, path).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

from app.budget import checkpoint
from app.diff import rules as _rules  # noqa: F401  (registers every rule family)
from app.diff.describe import schema_summary
from app.diff.emitter import Emitter, Scope
from app.diff.family import INPUT, OUTPUT
from app.diff.model import Delta, DiffResult, ToolChanges
from app.diff.renames import Item, Rename, match
from app.diff.rules.annotations_surface import (
    compare_actions,
    compare_deprecation,
    compare_tool_surface,
    emit_added,
    emit_removed,
    emit_renamed,
)
from app.diff.rules.fusion import compare_fusion
from app.diff.rules.prompts_resources import compare_prompts, compare_resources
from app.diff.rules.security import compare_prompt_security, compare_tool_security, new_tool_security
from app.diff.schema import Effect, Node, SchemaComparer, effect, make_node, resolve
from app.diff.schema.effective import list_at, object_at
from app.jsonio import canonical_json
from app.model import Action, Surface, Tool
from app.schemas import pointer

if TYPE_CHECKING:
    from app.policy import Policy


def diff(before: Surface, after: Surface, policy: Policy | None = None) -> DiffResult:
    """Every change from ``before`` (the known-good lock) to ``after``, graded."""
    server = before.server or after.server  # the lock's name, not what a live server calls itself
    if before.integrity_digest == after.integrity_digest:
        names = after.sorted_tool_names  # precomputed with the digest: O(1) here
        result = DiffResult(server, before.integrity_digest, after.integrity_digest, ToolChanges(unchanged=names),
                            before_version=before.server_version, after_version=after.server_version)
        return policy.apply(result) if policy else result

    out = Emitter()
    removed = sorted(before.tools.keys() - after.tools.keys())
    added = sorted(after.tools.keys() - before.tools.keys())
    tool_names = frozenset(after.tools)
    renames = detect_renames([before.tools[n] for n in removed], [after.tools[n] for n in added])
    renamed_old = {rename.old for rename in renames}
    renamed_new = {rename.new for rename in renames}
    for rename in renames:
        emit_renamed(out, before.tools[rename.old], after.tools[rename.new], rename)
        # the rest of the contract may have changed with the name: compare it like any tool
        compare_tool(out, before.tools[rename.old], after.tools[rename.new], tool_names)
    for name in removed:
        checkpoint()
        if name not in renamed_old:
            emit_removed(out, before.tools[name], tool_names)
    for name in added:
        checkpoint()
        if name not in renamed_new:
            emit_added(out, after.tools[name])
            new_tool_security(out, after.tools[name], tool_names)
    changed, unchanged = [], []
    for name in sorted(before.tools.keys() & after.tools.keys()):
        checkpoint()  # the request's work budget (app.budget): a no-op outside a request
        if before.tools[name].digest == after.tools[name].digest:
            unchanged.append(name)
            continue
        changed.append(name)
        compare_tool(out, before.tools[name], after.tools[name], tool_names)

    renamed_prompts = compare_prompts(out, before.prompts, after.prompts)
    for name, prompt in sorted(after.prompts.items()):
        previous = before.prompts.get(renamed_prompts.get(name, name))
        if previous is None or previous.digest != prompt.digest:
            compare_prompt_security(out, previous, prompt, tool_names)
    compare_resources(out, before.resources, after.resources, "resources")
    compare_resources(out, before.resource_templates, after.resource_templates, "resourceTemplates")

    result = DiffResult(
        server=server,
        before_digest=before.integrity_digest,
        after_digest=after.integrity_digest,
        tools=ToolChanges(tuple(added), tuple(removed), tuple(changed), tuple(unchanged)),
        deltas=tuple(sorted(out.deltas, key=Delta.sort_key)),
        before_version=before.server_version,
        after_version=after.server_version,
    )
    return policy.apply(result) if policy else result


def compare_tool(out: Emitter, before: Tool, after: Tool, tool_names: frozenset[str]) -> None:
    """One tool present on both sides with different digests."""
    compare_tool_surface(out, before, after)
    compare_deprecation(out, before, after, tool_names)
    compare_actions(out, before, after)
    if before.input_schema is not None and after.input_schema is not None:
        compare_input(out, before, after)
    compare_output(out, before, after)
    compare_tool_security(out, before, after, tool_names)
    if before.fusion is not None and after.fusion is not None:
        compare_fusion(out, before, after)


def _root(tool: Tool, schema_key: str, without: str | None = None) -> Node:
    """A tool's input or output schema as the walk's root node (``without`` a keyword: a
    grouped tool's union, compared action by action)."""
    raw = tool.input_schema if schema_key == "inputSchema" else tool.output_schema
    at = pointer("tools", tool.name, schema_key)
    if without is None:
        return make_node(raw, raw, at)
    assert isinstance(raw, dict)  # a grouped tool's input schema: the union left out is one of its keywords
    schema, spelling, _ = resolve({k: v for k, v in raw.items() if k != without}, raw)
    return Node(schema, raw, at, "", spelling=spelling)


def compare_input(out: Emitter, before: Tool, after: Tool) -> None:
    """The input schema; for a grouped tool, its shared part and then each common action.

    A grouped tool's branches pin distinct discriminator values, so they never overlap:
    its union keyword (oneOf or anyOf) is no part of the contract, and the shared part is
    compared without it on either side."""
    b_actions, a_actions = before.actions, after.actions
    b_keyword, a_keyword = _union_keyword(before), _union_keyword(after)
    if not b_keyword or not a_keyword:
        INPUT.compare(out, Scope(after.name), _root(before, "inputSchema"), _root(after, "inputSchema"), "input")
        return
    INPUT.compare(out, Scope(after.name), _root(before, "inputSchema", b_keyword),
                  _root(after, "inputSchema", a_keyword), "input")
    for name in sorted(b_actions.keys() & a_actions.keys()):
        b_node, a_node = _branch(before, b_actions[name]), _branch(after, a_actions[name])
        INPUT.compare(out, Scope(after.name, name), b_node, a_node, f"actions.{name}.input")


def _branch(tool: Tool, action: Action) -> Node:
    """The union branch of a grouped tool's input schema that pins ``action``."""
    keyword, index = action.keyword, action.index
    assert keyword is not None and index is not None  # set for every action split from a union
    return make_node(tool.input_schema[keyword][index], tool.input_schema,
                     pointer("tools", tool.name, "inputSchema", keyword, str(index)), pointer(keyword, str(index)))


def _union_keyword(tool: Tool) -> str | None:
    """The union keyword a grouped tool's inputSchema groups its actions under."""
    return next((action.keyword for action in tool.actions.values()), None)


def compare_output(out: Emitter, before: Tool, after: Tool) -> None:
    scope = Scope(after.name)
    if before.output_schema is None and after.output_schema is None:
        return
    if before.output_schema is None:
        out.emit("output.schema.added", scope, field="output", path=pointer("tools", after.name, "outputSchema"),
                 before=None, after=schema_summary(after.output_schema))
    elif after.output_schema is None:
        out.emit("output.schema.removed", scope, field="output", path=pointer("tools", before.name, "outputSchema"),
                 before=schema_summary(before.output_schema), after=None)
    else:
        OUTPUT.compare(out, scope, _root(before, "outputSchema"), _root(after, "outputSchema"), "output")


# --- renames --------------------------------------------------------------------------


def _same_input(before: Tool, after: Tool) -> bool:
    """Equal input contracts: the schema walk finds nothing beyond wording."""
    if before.input_schema is None or after.input_schema is None:
        b = ((before.fusion or {}).get("surface") or {}).get("inputSchemaDigest")
        a = ((after.fusion or {}).get("surface") or {}).get("inputSchemaDigest")
        return b is not None and b == a
    comparer = SchemaComparer(lambda *args, **kwargs: None)
    kinds = comparer.probe(_root(before, "inputSchema"), _root(after, "inputSchema"))
    return all(effect(kind) is Effect.COSMETIC for kind, _ in kinds)


def rename_item(tool: Tool) -> Item:
    """A tool as the rename matcher sees it: its name, and its input contract as features
    (argument names, their declared types, which are required, the actions of a grouped
    tool). The shape - argument names and required ones - pairs tools with unrelated names
    only when it is informative: a tool that takes no arguments has none."""
    checkpoint()
    if not isinstance(tool.input_schema, dict):
        digest = ((tool.fusion or {}).get("surface") or {}).get("inputSchemaDigest")
        features: frozenset[Hashable] = frozenset({("digest", digest)} if digest else ())
        actions = frozenset(("action", name) for name in tool.actions)
        return Item(tool.name, tool.name, features | actions, ("digest", digest) if digest else None)
    root = _root(tool, "inputSchema").schema
    properties = object_at(root, "properties")
    required = frozenset(r for r in list_at(root, "required") if isinstance(r, str))
    found: set[Hashable] = {("action", name) for name in tool.actions}
    for name, schema in properties.items():
        found.add(("argument", name))
        if isinstance(schema, dict) and "type" in schema:
            found.add(("type", name, canonical_json(schema["type"])))
    found.update(("required", name) for name in required)
    shape = ("schema", frozenset(properties), required, frozenset(tool.actions))
    trivial = not properties and not tool.actions and not any(
        k in root for k in ("anyOf", "oneOf", "allOf", "patternProperties", "additionalProperties"))
    return Item(tool.name, tool.name, frozenset(found), None if trivial else shape)


def detect_renames(removed: list[Tool], added: list[Tool]) -> list[Rename]:
    """Renamed tools among the removed and added ones (:mod:`app.diff.renames`): by their
    normalised names and input contracts, one to one, each with a confidence."""
    by_name = {tool.name: tool for tool in (*removed, *added)}
    return match([rename_item(tool) for tool in removed], [rename_item(tool) for tool in added],
                 lambda old, new: _same_input(by_name[old], by_name[new]))
