"""Conditionals: ``if``/``then``/``else``, ``dependentRequired`` and ``dependentSchemas``
(draft-07 ``dependencies`` is read as both)."""

from __future__ import annotations

from app.diff.describe import schema_summary, value_label
from app.diff.schema.instances import Undecidable, merge_schemas, sampler_for
from app.diff.schema.kinds import Effect, Kind, maps
from app.diff.schema.walk import Pair, SchemaComparer, check
from app.jsonio import canonical_json
from app.jsontypes import JSON

maps(Kind.CONDITIONAL_ADDED, Effect.NARROWS, input="input.conditional.added", output="output.conditional.added")
maps(Kind.CONDITIONAL_REMOVED, Effect.WIDENS, input="input.conditional.removed",
     output="output.conditional.removed")
maps(Kind.CONDITIONAL_CHANGED, Effect.BOTH, input="input.conditional.changed", output="output.conditional.changed")

_RELATIONS = {"added": Kind.CONDITIONAL_ADDED, "removed": Kind.CONDITIONAL_REMOVED,
              "changed": Kind.CONDITIONAL_CHANGED}


@check("if", "then", "else")
def check_if_then_else(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    keys = ("if", "then", "else")
    b = {k: pair.before.schema[k] for k in keys if k in pair.before.schema}
    a = {k: pair.after.schema[k] for k in keys if k in pair.after.schema}
    if canonical_json(b) == canonical_json(a):
        return
    relation = "added" if not b else "removed" if not a else "changed"
    node = pair.before if relation == "removed" else pair.after
    changed = next(k for k in keys if canonical_json(b.get(k)) != canonical_json(a.get(k)))
    keyword = "if" if relation != "changed" else changed
    node = node if keyword in node.schema else pair.before
    cmp.emit(_RELATIONS[relation], pair, node.at(keyword), value_label(b) if b else None,
             value_label(a) if a else None, keyword="if/then/else", seeds=_triggering(pair, a.get("if")))


def _triggering(pair: Pair, condition: JSON) -> list[JSON]:
    """Old-place values that meet the new ``if`` (where a new ``then`` applies)."""
    if not isinstance(condition, dict):
        return []
    try:
        return sampler_for(pair.before.root).samples(merge_schemas(pair.before.schema, condition))[:6]
    except Undecidable:
        return []


@check("dependentRequired")
def check_dependent_required(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    b = pair.before.schema.get("dependentRequired") or {}
    a = pair.after.schema.get("dependentRequired") or {}
    assert isinstance(b, dict) and isinstance(a, dict)
    for name in sorted(set(b) | set(a)):
        b_set = set(b.get(name, [])) if isinstance(b.get(name), list) else set()
        a_set = set(a.get(name, [])) if isinstance(a.get(name), list) else set()
        if b_set == a_set and (name in b) == (name in a):
            continue
        relation = ("added" if a_set > b_set or name not in b
                    else "removed" if a_set < b_set or name not in a else "changed")
        node = pair.before if relation == "removed" else pair.after
        before = f"with {name}: {', '.join(sorted(b_set))}" if name in b else None
        after = f"with {name}: {', '.join(sorted(a_set))}" if name in a else None
        cmp.emit(_RELATIONS[relation], pair, node.at("dependentRequired", name),
                 before, after, keyword="dependentRequired", trigger=name, seeds=_with(pair, name))


@check("dependentSchemas")
def check_dependent_schemas(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    b = pair.before.schema.get("dependentSchemas") or {}
    a = pair.after.schema.get("dependentSchemas") or {}
    assert isinstance(b, dict) and isinstance(a, dict)
    for name in sorted(set(b) | set(a)):
        if name in b and name in a and canonical_json(b[name]) == canonical_json(a[name]):
            continue
        relation = "added" if name not in b else "removed" if name not in a else "changed"
        node = pair.before if relation == "removed" else pair.after
        cmp.emit(_RELATIONS[relation], pair, node.at("dependentSchemas", name),
                 schema_summary(b[name]) if name in b else None, schema_summary(a[name]) if name in a else None,
                 keyword="dependentSchemas", trigger=name, seeds=_with(pair, name))


def _with(pair: Pair, name: str) -> list[JSON]:
    """Old-place objects that send ``name`` (where a dependency on it applies)."""
    try:
        objects = [v for v in sampler_for(pair.before.root).samples(pair.before.schema)[:2] if isinstance(v, dict)]
    except Undecidable:
        objects = []
    base: dict[str, JSON] = objects[0] if objects else {}
    full: dict[str, JSON] = objects[-1] if objects else {}
    values: list[JSON] = ["a", 1, None, True, {}, []]
    seeds: list[JSON] = [{**base, name: value} for value in values]
    # with the trigger, each other property left out in turn (a dependency extended to it)
    seeds += [{k: v for k, v in {**full, name: full.get(name, "a")}.items() if k != other}
              for other in sorted(full) if other != name]
    return seeds
