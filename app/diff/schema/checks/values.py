"""``enum`` and ``const``: the values a place is restricted to (``const`` is a one-value
``enum``, numbers equal at every depth, values the declared type refuses do not count)."""

from __future__ import annotations

from app.diff.describe import value_label, values_label
from app.diff.schema.effective import admitted_values, few_values
from app.diff.schema.kinds import Effect, Kind, maps
from app.diff.schema.walk import Pair, SchemaComparer, check

maps(Kind.ENUM_VALUE_REMOVED, Effect.NARROWS, input="input.enum.value-removed", output="output.enum.value-removed")
maps(Kind.ENUM_VALUE_ADDED, Effect.WIDENS, input="input.enum.value-added", output="output.enum.value-added")
maps(Kind.ENUM_ADDED, Effect.NARROWS, input="input.enum.added", output="output.enum.added")
maps(Kind.ENUM_REMOVED, Effect.WIDENS, input="input.enum.removed", output="output.enum.removed")
maps(Kind.CONST_ADDED, Effect.NARROWS, input="input.const.added", output="output.const.added")
maps(Kind.CONST_CHANGED, Effect.BOTH, input="input.const.changed", output="output.const.changed")
maps(Kind.CONST_REMOVED, Effect.WIDENS, input="input.const.removed", output="output.const.removed")


@check("enum", "const")
def check_values(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    b, a = pair.before.schema, pair.after.schema
    before, after = admitted_values(b), admitted_values(a)
    if (before is None) != (after is None):
        # `type: null` is `enum: [null]`, `type: boolean` is `enum: [false, true]`
        before = before if before is not None else few_values(b)
        after = after if after is not None else few_values(a)
    at = pair.after.at("const" if "const" in a else "enum")
    if before == after or (before is not None and after is not None and before.keys() == after.keys()):
        return
    allowed = values_label(list(after.values())) if after is not None else None
    if before is None and after is not None:
        kind = Kind.CONST_ADDED if "const" in a and "enum" not in a else Kind.ENUM_ADDED
        cmp.emit(kind, pair, at, None, allowed, allowed=allowed, value=allowed, schema=a)
        return
    if after is None and before is not None:
        kind = Kind.CONST_REMOVED if "const" in b and "enum" not in b else Kind.ENUM_REMOVED
        label = values_label(list(before.values()))
        cmp.emit(kind, pair, pair.before.at("const" if "const" in b else "enum"), label, None, schema=a)
        return
    assert before is not None and after is not None
    if len(before) == 1 and len(after) == 1:
        # enum ["a"] is const "a" (RULES.md principle 2): one fixed value replaced by another
        cmp.emit(Kind.CONST_CHANGED, pair, at, values_label(list(before.values())), allowed, allowed=allowed,
                 schema=a, seeds=list(before.values()))
        return
    for key in sorted(before.keys() - after.keys()):
        label = value_label(before[key])
        cmp.emit(Kind.ENUM_VALUE_REMOVED, pair, at, label, None, value=label, allowed=allowed, schema=a,
                 seeds=[before[key]])
    for key in sorted(after.keys() - before.keys()):
        label = value_label(after[key])
        cmp.emit(Kind.ENUM_VALUE_ADDED, pair, at, None, label, value=label, allowed=allowed, schema=a,
                 seeds=[after[key]])
