"""Numeric bounds, size counts, ``multipleOf`` and ``uniqueItems``.

Bounds are compared as effective limits (integer-aware, an absent ``minLength`` is 0).
A bound at or beyond the interoperable integer range (±(2^53-1), I-JSON) on both sides
limits nothing a client can send exactly: ``bound.integer-range``, COSMETIC (zod 4 adds
``maximum: 9007199254740991`` to every integer).
"""

from __future__ import annotations

from app.diff.describe import NO_LIMIT, bound_label
from app.diff.schema.effective import (
    COUNT_BOUNDS,
    admitted_types,
    beyond_safe_range,
    bound_relation,
    count_beyond_safe_range,
    count_relation,
    list_at,
    multiple_relation,
    numeric_bound,
)
from app.diff.schema.instances import matches
from app.diff.schema.kinds import Effect, Kind, maps
from app.diff.schema.walk import Pair, SchemaComparer, check
from app.jsontypes import JSON

maps(Kind.BOUND_TIGHTENED, Effect.NARROWS, input="input.bound.tightened", output="output.bound.tightened")
maps(Kind.BOUND_RELAXED, Effect.WIDENS, input="input.bound.relaxed", output="output.bound.relaxed")
# multipleOf changed to a value that neither divides nor is a multiple of the old one: some
# old values are refused (input: tightened, as RULES.md says) and some new ones appear
# (output: relaxed).
maps(Kind.BOUND_CHANGED, Effect.BOTH, input="input.bound.tightened", output="output.bound.relaxed")
maps(Kind.BOUND_INTEGER_RANGE, Effect.COSMETIC, input="input.bound.integer-range",
     output="output.bound.integer-range")

_RELATIONS = {"tightened": Kind.BOUND_TIGHTENED, "relaxed": Kind.BOUND_RELAXED, "changed": Kind.BOUND_CHANGED}


@check("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "uniqueItems", *COUNT_BOUNDS)
def check_bounds(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    b, a = pair.before.schema, pair.after.schema
    for side in ("min", "max"):
        before, after = numeric_bound(b, side), numeric_bound(a, side)
        relation = bound_relation(before, after, side)
        if relation:
            keyword = (after or before).keyword  # type: ignore[union-attr]
            node = pair.after if after else pair.before
            before_label = bound_label(before.keyword, before.raw) if before else NO_LIMIT
            after_label = bound_label(after.keyword, after.raw) if after else NO_LIMIT
            kind = _RELATIONS[relation]
            if beyond_safe_range(before, side) and beyond_safe_range(after, side):
                kind = Kind.BOUND_INTEGER_RANGE
            cmp.emit(kind, pair, node.at(keyword), before_label, after_label, keyword=keyword, limit=after_label)
    for keyword in COUNT_BOUNDS:
        if keyword in ("minProperties", "minLength") and (keyword in b or keyword in a):
            relation = count_relation(keyword, _count(b, keyword), _count(a, keyword))
        else:
            relation = count_relation(keyword, b.get(keyword), a.get(keyword))
        if relation:
            cosmetic = count_beyond_safe_range(keyword, b.get(keyword)) and count_beyond_safe_range(
                keyword, a.get(keyword))
            _emit_simple_bound(cmp, pair, keyword, Kind.BOUND_INTEGER_RANGE if cosmetic else _RELATIONS[relation])
    relation = multiple_relation(_step(b, a), _step(a, b))
    if relation:
        _emit_simple_bound(cmp, pair, "multipleOf", _RELATIONS[relation])
    if bool(b.get("uniqueItems")) != bool(a.get("uniqueItems")):
        kind = Kind.BOUND_TIGHTENED if a.get("uniqueItems") else Kind.BOUND_RELAXED
        _emit_simple_bound(cmp, pair, "uniqueItems", kind)


def _step(schema: dict[str, JSON], other: dict[str, JSON]) -> JSON:
    """``multipleOf`` as it applies: an integer type is a multiple of 1 (asked only when the
    other side spells one, so number -> integer stays one type delta)."""
    if "multipleOf" not in schema and "multipleOf" in other and admitted_types(schema) == {"integer"}:
        return 1
    return schema.get("multipleOf")


def _count(schema: dict[str, JSON], keyword: str) -> JSON:
    """A count limit as it applies: ``required`` names are properties an object must have,
    so ``minProperties`` is at least their number; a pattern the empty string fails asks for
    ``minLength`` 1 (asked only where a side spells the keyword: a new required property or
    pattern is its own delta)."""
    value = schema.get(keyword)
    pattern = schema.get("pattern")
    if keyword == "minLength" and isinstance(pattern, str) and not matches(pattern, ""):
        # a pattern the empty string does not match (".+") asks for one character at least
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else 1
    if keyword == "minProperties":
        required = {n for n in list_at(schema, "required") if isinstance(n, str)}
        if required and (not isinstance(value, int) or isinstance(value, bool) or value < len(required)):
            return len(required)
    return value


def _emit_simple_bound(cmp: SchemaComparer, pair: Pair, keyword: str, kind: Kind) -> None:
    b, a = pair.before.schema, pair.after.schema
    before = bound_label(keyword, b[keyword]) if keyword in b and b[keyword] is not False else NO_LIMIT
    after = bound_label(keyword, a[keyword]) if keyword in a and a[keyword] is not False else NO_LIMIT
    node = pair.after if keyword in a else pair.before
    cmp.emit(kind, pair, node.at(keyword), before, after, keyword=keyword, limit=after)
