"""Arrays: ``prefixItems`` positions and the schema of the positions past them (``items``,
else ``unevaluatedItems``, else any value), and ``contains``."""

from __future__ import annotations

from app.diff.describe import value_label
from app.diff.schema.effective import list_at
from app.diff.schema.kinds import Effect, Kind, maps
from app.diff.schema.walk import Pair, SchemaComparer, check
from app.jsontypes import JSON

maps(Kind.CONTAINS_ADDED, Effect.NARROWS, input="input.contains.added", output="output.contains.added")
maps(Kind.CONTAINS_REMOVED, Effect.WIDENS, input="input.contains.removed", output="output.contains.removed")


def rest_keyword(schema: dict[str, JSON]) -> str | None:
    """The keyword that decides the positions past ``prefixItems``: ``items`` (which
    evaluates them all, so ``unevaluatedItems`` beside it sees none), else ``unevaluatedItems``."""
    if "items" in schema:
        return "items"
    return "unevaluatedItems" if "unevaluatedItems" in schema else None


@check("items", "prefixItems", "contains", "unevaluatedItems")
def check_items(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    b, a = pair.before.schema, pair.after.schema
    b_kw, a_kw = rest_keyword(b), rest_keyword(a)
    b_rest: JSON = b[b_kw] if b_kw else True
    a_rest: JSON = a[a_kw] if a_kw else True
    if b_kw or a_kw:
        keyword = a_kw or b_kw
        assert keyword is not None
        cmp.walk(cmp.child(pair, b_rest, a_rest, (b_kw or keyword,), "[]", after_tokens=(a_kw or keyword,)), depth + 1)
    b_pre, a_pre = list_at(b, "prefixItems"), list_at(a, "prefixItems")
    for index in range(max(len(b_pre), len(a_pre))):
        before = b_pre[index] if index < len(b_pre) else b_rest
        after = a_pre[index] if index < len(a_pre) else a_rest
        cmp.walk(cmp.child(pair, before, after, ("prefixItems", str(index)), f"[{index}]"), depth + 1)
    if "contains" in b and "contains" in a:
        cmp.walk(cmp.child(pair, b["contains"], a["contains"], ("contains",), "[contains]"), depth + 1)
    elif "contains" in a:
        cmp.emit(Kind.CONTAINS_ADDED, pair, pair.after.at("contains"), None, value_label(a["contains"]),
                 keyword="contains", seeds=[[]])
    elif "contains" in b:
        cmp.emit(Kind.CONTAINS_REMOVED, pair, pair.before.at("contains"), value_label(b["contains"]), None,
                 keyword="contains")
