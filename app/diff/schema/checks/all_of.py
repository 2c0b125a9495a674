"""``allOf``: branches matched like union branches; a repeated branch is one branch, and a
branch that adds no constraint to the rest of the node changes nothing."""

from __future__ import annotations

from app.diff.describe import schema_summary
from app.diff.schema.checks.unions import branches, match_branches
from app.diff.schema.effective import Node, object_at, value_key
from app.diff.schema.instances import merge_schemas
from app.diff.schema.kinds import Effect, Kind, maps
from app.diff.schema.walk import Pair, SchemaComparer, below, check

maps(Kind.ALL_OF_BRANCH_ADDED, Effect.NARROWS, input="input.all-of.branch-added", output="output.all-of.branch-added")
maps(Kind.ALL_OF_BRANCH_REMOVED, Effect.WIDENS, input="input.all-of.branch-removed",
     output="output.all-of.branch-removed")


def _distinct(nodes: list[Node]) -> list[Node]:
    seen: set[str] = set()
    out = []
    for node in nodes:
        key = value_key(node.schema)
        if key not in seen:
            seen.add(key)
            out.append(node)
    return out


def _without_all_of(node: Node) -> Node:
    rest = {k: v for k, v in node.schema.items() if k != "allOf"}
    return Node(rest, node.root, node.pointer, None, spelling=node.spelling)


def _adds_nothing(cmp: SchemaComparer, node: Node, branch: Node) -> bool:
    """Whether the rest of ``node`` already implies ``branch`` (an ``allOf: [{type: object}]``
    beside ``type: object``)."""
    rest = _without_all_of(node)
    merged = Node(merge_schemas(rest.schema, branch.schema), node.root, node.pointer, None, spelling=node.spelling)
    return not node.lifted and cmp.covers(rest, merged)


def _unevaluated_names(cmp: SchemaComparer, pair: Pair, removed: Node, kept: list[Node]) -> None:
    """A removed branch's properties were evaluated: under ``unevaluatedProperties`` (and no
    ``additionalProperties``) of the node, a name no one declares any more falls to it."""
    after = pair.after.schema
    if "additionalProperties" in after or "unevaluatedProperties" not in after:
        return
    declared = set(object_at(after, "properties"))
    for node in kept:
        declared |= set(object_at(node.schema, "properties"))
    catch = pair.after.child(after["unevaluatedProperties"], "unevaluatedProperties")
    for name, sub in sorted(object_at(removed.schema, "properties").items()):
        if name in declared:
            continue
        old = removed.child(sub, "properties", name)
        sub_pair = below(pair, name)
        cmp.sink(Kind.PROPERTY_REMOVED, sub_pair, old.pointer, schema_summary(old.schema), None, name=sub_pair.name,
                 closed=not cmp.covers(old, catch), required=False, schema=old.schema)


@check("allOf")
def check_all_of(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    b_nodes = _distinct(branches(pair.before, "allOf"))
    a_nodes = _distinct(branches(pair.after, "allOf"))
    pairs, removed, added = match_branches(b_nodes, a_nodes)
    for b_node, a_node in pairs:
        cmp.walk(Pair(b_node, a_node, pair.field, pair.name, pair.required_before, pair.required_after,
                      pair.instance, combined=True), depth + 1)
    for node in removed:
        _unevaluated_names(cmp, pair, node, a_nodes)
        if _adds_nothing(cmp, pair.after, node):
            continue
        cmp.emit(Kind.ALL_OF_BRANCH_REMOVED, pair, node.pointer, schema_summary(node.schema), None, keyword="allOf")
    for node in added:
        if _adds_nothing(cmp, pair.before, node):
            continue
        cmp.emit(Kind.ALL_OF_BRANCH_ADDED, pair, node.pointer, None, schema_summary(node.schema), keyword="allOf")
