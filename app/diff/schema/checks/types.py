"""``type`` (and the types ``const``/``enum`` values imply): the set of JSON types a place admits."""

from __future__ import annotations

from app.diff.describe import type_label
from app.diff.schema.effective import admitted_types, integral_step, is_false, set_relation
from app.diff.schema.kinds import Effect, Kind, maps
from app.diff.schema.walk import Pair, SchemaComparer, check

maps(Kind.TYPE_CHANGED, Effect.BOTH, input="input.type.changed", output="output.type.changed")
maps(Kind.TYPE_NARROWED, Effect.NARROWS, input="input.type.narrowed", output="output.type.narrowed")
maps(Kind.TYPE_WIDENED, Effect.WIDENS, input="input.type.widened", output="output.type.widened")

_RELATIONS = {"changed": Kind.TYPE_CHANGED, "narrowed": Kind.TYPE_NARROWED, "widened": Kind.TYPE_WIDENED}
_EVERY_TYPE = {"string", "number", "integer", "boolean", "object", "array", "null"}


@check("type", "not", "const", "enum")  # "not": the schema false is {"not": {}}, an empty type set
def check_type(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    """Types are compared as admitted: ``const "a"`` without ``type`` admits only strings,
    so it becomes ``type: string`` without a type change (only the value set widens)."""
    b, a = pair.before.schema, pair.after.schema
    b_types, a_types = admitted_types(b), admitted_types(a)
    relation = set_relation(_EVERY_TYPE if b_types is None else b_types, _EVERY_TYPE if a_types is None else a_types)
    if relation == "narrowed" and b_types is not None and integral_step(b) and a_types == b_types - {"number"}:
        return  # number with multipleOf 10 -> integer: every old value was an integer already
    if relation:
        node = pair.after if "type" in a or is_false(a) else pair.before
        cmp.emit(_RELATIONS[relation], pair, node.at("type"), type_label(b), type_label(a))
