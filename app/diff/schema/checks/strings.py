"""``pattern`` and ``format``: added, changed or removed (regex containment is undecidable)."""

from __future__ import annotations

from app.diff.describe import value_label
from app.diff.schema.kinds import Effect, Kind, maps
from app.diff.schema.walk import Pair, SchemaComparer, check

maps(Kind.PATTERN_ADDED, Effect.NARROWS, input="input.pattern.added", output="output.pattern.added")
maps(Kind.PATTERN_CHANGED, Effect.BOTH, input="input.pattern.changed", output="output.pattern.changed")
maps(Kind.PATTERN_REMOVED, Effect.WIDENS, input="input.pattern.removed", output="output.pattern.removed")
maps(Kind.FORMAT_ADDED, Effect.NARROWS, input="input.format.added", output="output.format.added")
maps(Kind.FORMAT_CHANGED, Effect.BOTH, input="input.format.changed", output="output.format.changed")
maps(Kind.FORMAT_REMOVED, Effect.WIDENS, input="input.format.removed", output="output.format.removed")

_KINDS = {
    "pattern": (Kind.PATTERN_ADDED, Kind.PATTERN_CHANGED, Kind.PATTERN_REMOVED),
    "format": (Kind.FORMAT_ADDED, Kind.FORMAT_CHANGED, Kind.FORMAT_REMOVED),
}


@check("pattern")
def check_pattern(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    _added_changed_removed(cmp, pair, "pattern")


@check("format")
def check_format(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    _added_changed_removed(cmp, pair, "format")


def _added_changed_removed(cmp: SchemaComparer, pair: Pair, keyword: str) -> None:
    b, a = pair.before.schema.get(keyword), pair.after.schema.get(keyword)
    if b == a:
        return
    added, changed, removed = _KINDS[keyword]
    before = value_label(b) if b is not None else None
    after = value_label(a) if a is not None else None
    if b is None:
        cmp.emit(added, pair, pair.after.at(keyword), None, after, keyword=keyword)
    elif a is None:
        cmp.emit(removed, pair, pair.before.at(keyword), before, None, keyword=keyword)
    else:
        cmp.emit(changed, pair, pair.after.at(keyword), before, after, keyword=keyword)
