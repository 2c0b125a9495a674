"""Arrays: ``prefixItems`` positions and the schema of the positions past them (``items``,
else ``unevaluatedItems``, else any value), and ``contains``."""

from __future__ import annotations

from app.diff.describe import value_label
from app.diff.schema.effective import list_at
from app.diff.schema.kinds import Kind
from app.diff.schema.walk import Pair, SchemaComparer, check
from app.jsontypes import JSON


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
    for keyword, label in (("contains", "[contains]"),):
        if keyword in b and keyword in a:
            cmp.walk(cmp.child(pair, b[keyword], a[keyword], (keyword,), label), depth + 1)
        elif keyword in b or keyword in a:
            relation = "added" if keyword in a else "removed"
            node = pair.after if keyword in a else pair.before
            cmp.emit(Kind.UNCLASSIFIED, pair, node.at(keyword),
                     value_label(b[keyword]) if keyword in b else None,
                     value_label(a[keyword]) if keyword in a else None,
                     keyword=keyword, detail=f"{keyword} {relation}")
