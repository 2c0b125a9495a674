"""ContractDiff: compare a known-good surface with a new one, rule by rule.

Pure: no I/O. Equal server digests mean no work at all; per tool, equal digests skip
the tool. Deltas come out in the order RULES.md fixes (severity, tool, action, path).
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import TYPE_CHECKING

from app.diff import rules as _rules  # noqa: F401  (registers every rule family)
from app.diff.describe import schema_summary
from app.diff.emitter import Emitter, Scope
from app.diff.model import Delta, DiffResult, ToolChanges
from app.diff.rules.annotations_surface import (
    compare_actions,
    compare_tool_surface,
    emit_added,
    emit_removed,
    emit_renamed,
)
from app.diff.rules.fusion import compare_fusion
from app.diff.rules.input_schema import INPUT
from app.diff.rules.output_schema import OUTPUT
from app.diff.rules.prompts_resources import compare_prompts, compare_resources
from app.diff.rules.security import compare_prompt_security, compare_tool_security, new_tool_security
from app.diff.schema_compare import COSMETIC_KINDS, SchemaComparer
from app.diff.schema_effective import Node, list_at, make_node, object_at, resolve
from app.model import Action, Surface, Tool
from app.schemas import pointer

if TYPE_CHECKING:
    from app.policy import Policy


def diff(before: Surface, after: Surface, policy: Policy | None = None) -> DiffResult:
    """Every change from ``before`` (the known-good lock) to ``after``, graded."""
    server = after.server or before.server
    if before.integrity_digest == after.integrity_digest:
        names = tuple(sorted(after.tools))
        result = DiffResult(server, before.integrity_digest, after.integrity_digest, ToolChanges(unchanged=names),
                            before_version=before.server_version, after_version=after.server_version)
        return policy.apply(result) if policy else result

    out = Emitter()
    removed = sorted(before.tools.keys() - after.tools.keys())
    added = sorted(after.tools.keys() - before.tools.keys())
    tool_names = frozenset(after.tools)
    renames = detect_renames([before.tools[n] for n in removed], [after.tools[n] for n in added])
    renamed_old = {old for old, _ in renames}
    renamed_new = {new for _, new in renames}
    for old, new in renames:
        emit_renamed(out, before.tools[old], after.tools[new])
        # the rest of the contract may have changed with the name: compare it like any tool
        compare_tool(out, before.tools[old], after.tools[new], tool_names)
    for name in removed:
        if name not in renamed_old:
            emit_removed(out, before.tools[name])
    for name in added:
        if name not in renamed_new:
            emit_added(out, after.tools[name])
            new_tool_security(out, after.tools[name], tool_names)
    changed, unchanged = [], []
    for name in sorted(before.tools.keys() & after.tools.keys()):
        if before.tools[name].digest == after.tools[name].digest:
            unchanged.append(name)
            continue
        changed.append(name)
        compare_tool(out, before.tools[name], after.tools[name], tool_names)

    compare_prompts(out, before.prompts, after.prompts)
    for name, prompt in sorted(after.prompts.items()):
        previous = before.prompts.get(name)
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

_NON_ALNUM = re.compile(r"[^a-z0-9]")


def _name_likeness(a: str, b: str) -> float:
    return SequenceMatcher(None, _NON_ALNUM.sub("", a.lower()), _NON_ALNUM.sub("", b.lower())).ratio()


def _same_input(before: Tool, after: Tool) -> bool:
    """Equal input contracts: the schema walk finds nothing beyond wording."""
    if before.input_schema is None or after.input_schema is None:
        b = ((before.fusion or {}).get("surface") or {}).get("inputSchemaDigest")
        a = ((after.fusion or {}).get("surface") or {}).get("inputSchemaDigest")
        return b is not None and b == a
    comparer = SchemaComparer(lambda *args, **kwargs: None)
    kinds = comparer.probe(_root(before, "inputSchema"), _root(after, "inputSchema"))
    return all(kind in COSMETIC_KINDS for kind, _ in kinds)


def _signature(tool: Tool) -> tuple[object, ...]:
    """What two tools with equal input contracts must share: the argument names and the
    required ones at the root (the walk reports any difference there). Only tools with
    equal signatures are compared in full."""
    if not isinstance(tool.input_schema, dict):
        return ("digest", ((tool.fusion or {}).get("surface") or {}).get("inputSchemaDigest"))
    root = _root(tool, "inputSchema").schema
    required = list_at(root, "required")
    return ("schema", frozenset(object_at(root, "properties")), frozenset(r for r in required if isinstance(r, str)))


def _trivial(tool: Tool) -> bool:
    schema = tool.input_schema
    return isinstance(schema, dict) and not schema.get("properties") and not any(
        k in schema for k in ("anyOf", "oneOf", "allOf", "patternProperties", "additionalProperties"))


TRIVIAL_LIKENESS = 0.5
"""How alike two names must be to pair tools that take no arguments (any two such tools
have equal input schemas)."""
AMBIGUOUS_LIKENESS = 0.75
"""How alike two names must be when several removed or added tools share one input
schema: the schema alone does not say which became which."""


def detect_renames(removed: list[Tool], added: list[Tool]) -> list[tuple[str, str]]:
    """Pairs (old, new) of a removed and an added tool with equal input schemas, one to one.

    RULES.md: a removed and an added tool with equal input schemas are one renamed tool.
    When the schema singles out the pair (no other removed or added tool shares it), that
    is all it takes. When it does not - tools that take no arguments, or several tools
    sharing a shape such as ``{repo_path}`` - a pair is only a rename if the names look
    alike too (most alike first); otherwise the tools are reported removed and added."""
    by_signature: dict[tuple[object, ...], list[Tool]] = {}
    for tool in added:
        by_signature.setdefault(_signature(tool), []).append(tool)
    equal: list[tuple[Tool, Tool]] = [
        (old, new) for old in removed for new in by_signature.get(_signature(old), []) if _same_input(old, new)
    ]
    olds: dict[str, int] = {}
    news: dict[str, int] = {}
    for old, new in equal:
        olds[old.name] = olds.get(old.name, 0) + 1
        news[new.name] = news.get(new.name, 0) + 1
    candidates: list[tuple[float, str, str]] = []
    for old, new in equal:
        likeness = _name_likeness(old.name, new.name)
        if _trivial(old) and _trivial(new):
            if likeness < TRIVIAL_LIKENESS:
                continue
        elif (olds[old.name] > 1 or news[new.name] > 1) and likeness < AMBIGUOUS_LIKENESS:
            continue
        candidates.append((likeness, old.name, new.name))
    pairs: list[tuple[str, str]] = []
    used_old: set[str] = set()
    used_new: set[str] = set()
    for _, old_name, new_name in sorted(candidates, key=lambda c: (-c[0], c[1], c[2])):
        if old_name not in used_old and new_name not in used_new:
            pairs.append((old_name, new_name))
            used_old.add(old_name)
            used_new.add(new_name)
    return pairs
