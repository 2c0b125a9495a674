"""The JSON Schema walk shared by the input and output rule families.

It pairs up the two schemas place by place (properties, items, union branches, ...) on
their effective forms and reports each difference as a *kind* of change
(``property.removed``, ``type.narrowed``, ``bound.tightened``, ...) with the facts a rule
needs. It never decides severity: the family of the side being compared (input or
output, where the direction flips) maps each kind to one of its registered rules.

Every keyword is owned by one check; whatever no check owns and still differs is found
with deepdiff and reported as ``unclassified``, so nothing is dropped silently.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from typing import Any, Callable, Protocol

from deepdiff import DeepDiff

from app.diff.describe import NO_LIMIT, bound_label, how_to_pass, schema_summary, type_label, value_label, values_label
from app.diff.schema_effective import (
    ANNOTATION_KEYWORDS,
    COUNT_BOUNDS,
    IGNORED_KEYWORDS,
    UNION_KEYWORDS,
    Node,
    as_object,
    bound_relation,
    count_relation,
    is_closed,
    multiple_relation,
    numeric_bound,
    type_relation,
    type_set,
    value_key,
    value_set,
)
from app.jsonio import canonical_json
from app.schemas import escape_pointer_token

JSON = Any
MAX_DEPTH = 64


@dataclass(frozen=True)
class Pair:
    """The same place in the before and after schema."""

    before: Node
    after: Node
    field: str
    """Dotted, readable: ``input.address.city``, ``output.items[]``."""
    name: str
    """The argument as a model knows it: ``address.city``; the root is ``(root)``."""
    required_before: bool = False
    required_after: bool = False


class Sink(Protocol):
    def __call__(self, kind: str, pair: Pair, at: str, before: str | None, after: str | None, **facts: Any) -> None:
        ...


def _join(field: str, name: str, token: str) -> tuple[str, str]:
    if token.startswith("["):
        return field + token, (name if name != "(root)" else "") + token
    return f"{field}.{token}", token if name == "(root)" else f"{name}.{token}"


class SchemaComparer:
    """Walks two schemas and reports kinds of change to a sink."""

    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self._visited: set[tuple[str | None, str | None, str]] = set()

    # -- entry ---------------------------------------------------------------------

    def compare(self, before: Node, after: Node, field: str) -> None:
        self.walk(Pair(before, after, field, "(root)"), 0)

    def probe(self, before: Node, after: Node, field: str = "", name: str = "(root)") -> list[tuple[str, dict[str, Any]]]:
        """The kinds a comparison would report, without reporting them."""
        found: list[tuple[str, dict[str, Any]]] = []

        def collect(kind: str, pair: Pair, at: str, before: str | None, after: str | None, **facts: Any) -> None:
            found.append((kind, facts))

        SchemaComparer(collect).walk(Pair(before, after, field, name), 0)
        return found

    def emit(self, kind: str, pair: Pair, at: str, before: str | None = None, after: str | None = None, **facts: Any) -> None:
        self.sink(kind, pair, at, before, after, name=pair.name, **facts)

    def walk(self, pair: Pair, depth: int) -> None:
        b, a = pair.before.schema, pair.after.schema
        if b == a and canonical_json(b) == canonical_json(a) and not _has_ref(b) and not _has_ref(a):
            return
        pair = _lift_to_union(pair)
        b, a = pair.before.schema, pair.after.schema
        guard = (pair.before.ref_target, pair.after.ref_target, pair.field)
        if pair.before.ref_target and pair.after.ref_target:
            if guard in self._visited:
                return  # a recursive schema: this place was already compared
            self._visited.add(guard)
        if depth > MAX_DEPTH:
            self.emit("unclassified", pair, pair.after.pointer, None, None, detail="schema nested too deeply to compare")
            return
        for keywords, check in CHECKS:
            if any(keyword in b or keyword in a for keyword in keywords):
                check(self, pair, depth)
        self._unclassified(pair)

    def child(self, pair: Pair, before_raw: JSON, after_raw: JSON, tokens: tuple[str, ...], label: str,
              required_before: bool = False, required_after: bool = False) -> Pair:
        field, name = _join(pair.field, pair.name, label)
        return Pair(
            pair.before.child(before_raw, *tokens),
            pair.after.child(after_raw, *tokens),
            field,
            name,
            required_before,
            required_after,
        )

    # -- safety net ----------------------------------------------------------------

    def _unclassified(self, pair: Pair) -> None:
        b = {k: v for k, v in pair.before.schema.items() if k not in OWNED}
        a = {k: v for k, v in pair.after.schema.items() if k not in OWNED}
        if b == a and canonical_json(b) == canonical_json(a):
            return
        found = DeepDiff(b, a, ignore_order=False, verbose_level=2, view="tree")
        for report_type, items in sorted(found.items()):
            for item in items:
                tokens = [str(token) for token in item.path(output_format="list")]
                keyword = tokens[0] if tokens else ""
                removed = report_type.endswith("_removed")
                base = pair.before.pointer if removed else pair.after.pointer
                at = base + "".join("/" + escape_pointer_token(t) for t in tokens)
                before = None if item.t1 is _NOT_PRESENT or report_type.endswith("_added") else value_label(item.t1)
                after = None if item.t2 is _NOT_PRESENT or removed else value_label(item.t2)
                self.emit("unclassified", pair, at, before, after, keyword=keyword,
                          detail=f"{keyword or 'schema'} {report_type.replace('_', ' ')}")


class _NotPresentMarker:
    pass


try:  # deepdiff marks the missing side of an added/removed item with this sentinel
    from deepdiff.helper import notpresent as _NOT_PRESENT
except ImportError:  # pragma: no cover - older deepdiff
    _NOT_PRESENT = _NotPresentMarker()


def _has_ref(schema: JSON) -> bool:
    """Whether a subtree holds a ``$ref`` (whose target may differ though the text is equal)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "$ref" in node:
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


# --- checks: each owns its keywords ----------------------------------------------------

Check = Callable[[SchemaComparer, Pair, int], None]
CHECKS: list[tuple[tuple[str, ...], Check]] = []


def check(*keywords: str) -> Callable[[Check], Check]:
    def register(function: Check) -> Check:
        CHECKS.append((keywords, function))
        return function

    return register


def _kw_path(node: Node, keyword: str) -> str:
    return f"{node.pointer}/{escape_pointer_token(keyword)}"


@check("type")
def check_type(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    b, a = pair.before.schema, pair.after.schema
    relation = type_relation(type_set(b), type_set(a))
    if relation:
        cmp.emit(f"type.{relation}", pair, _kw_path(pair.after, "type"), type_label(b), type_label(a))


@check("enum", "const")
def check_values(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    b, a = pair.before.schema, pair.after.schema
    before, after = value_set(b), value_set(a)
    at = _kw_path(pair.after, "const" if "const" in a else "enum")
    if before == after or (before is not None and after is not None and before.keys() == after.keys()):
        return
    allowed = values_label(list(after.values())) if after is not None else None
    if before is None and after is not None:
        kind = "const.added" if "const" in a and "enum" not in a else "enum.added"
        cmp.emit(kind, pair, at, None, allowed, allowed=allowed, value=allowed, schema=a)
        return
    if after is None and before is not None:
        kind = "const.removed" if "const" in b and "enum" not in b else "enum.removed"
        label = values_label(list(before.values()))
        cmp.emit(kind, pair, _kw_path(pair.before, "const" if "const" in b else "enum"), label, None, schema=a)
        return
    assert before is not None and after is not None
    if len(before) == 1 and len(after) == 1 and "const" in b and "const" in a:
        cmp.emit("const.changed", pair, at, values_label(list(before.values())), allowed, allowed=allowed, schema=a)
        return
    for key in sorted(before.keys() - after.keys()):
        label = value_label(before[key])
        cmp.emit("enum.value-removed", pair, at, label, None, value=label, allowed=allowed, schema=a)
    for key in sorted(after.keys() - before.keys()):
        label = value_label(after[key])
        cmp.emit("enum.value-added", pair, at, None, label, value=label, allowed=allowed, schema=a)


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
            cmp.emit(f"bound.{relation}", pair, _kw_path(node, keyword), before_label, after_label,
                     keyword=keyword, limit=after_label)
    for keyword in COUNT_BOUNDS:
        relation = count_relation(keyword, b.get(keyword), a.get(keyword))
        if relation:
            _emit_simple_bound(cmp, pair, keyword, relation)
    relation = multiple_relation(b.get("multipleOf"), a.get("multipleOf"))
    if relation:
        _emit_simple_bound(cmp, pair, "multipleOf", relation)
    if bool(b.get("uniqueItems")) != bool(a.get("uniqueItems")):
        _emit_simple_bound(cmp, pair, "uniqueItems", "tightened" if a.get("uniqueItems") else "relaxed")


def _emit_simple_bound(cmp: SchemaComparer, pair: Pair, keyword: str, relation: str) -> None:
    b, a = pair.before.schema, pair.after.schema
    before = bound_label(keyword, b[keyword]) if keyword in b and b[keyword] is not False else NO_LIMIT
    after = bound_label(keyword, a[keyword]) if keyword in a and a[keyword] is not False else NO_LIMIT
    node = pair.after if keyword in a else pair.before
    cmp.emit(f"bound.{relation}", pair, _kw_path(node, keyword), before, after, keyword=keyword, limit=after)


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
    before = value_label(b) if b is not None else None
    after = value_label(a) if a is not None else None
    if b is None:
        cmp.emit(f"{keyword}.added", pair, _kw_path(pair.after, keyword), None, after, keyword=keyword)
    elif a is None:
        cmp.emit(f"{keyword}.removed", pair, _kw_path(pair.before, keyword), before, None, keyword=keyword)
    else:
        cmp.emit(f"{keyword}.changed", pair, _kw_path(pair.after, keyword), before, after, keyword=keyword)


@check("properties", "required", "patternProperties")
def check_properties(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    b, a = pair.before.schema, pair.after.schema
    b_props = b.get("properties") if isinstance(b.get("properties"), dict) else {}
    a_props = a.get("properties") if isinstance(a.get("properties"), dict) else {}
    b_req = {n for n in b.get("required", []) if isinstance(n, str)} if isinstance(b.get("required"), list) else set()
    a_req = {n for n in a.get("required", []) if isinstance(n, str)} if isinstance(a.get("required"), list) else set()
    closed_after = is_closed(a, "additionalProperties") or is_closed(a, "unevaluatedProperties")
    for name in sorted(b_props.keys() - a_props.keys()):
        node = pair.before.child(b_props[name], "properties", name)
        field, display = _join(pair.field, pair.name, name)
        sub = replace(pair, field=field, name=display)
        cmp.sink("property.removed", sub, node.pointer, schema_summary(node.schema), None, name=display,
                 closed=closed_after, required=name in b_req, schema=node.schema)
    for name in sorted(a_props.keys() - b_props.keys()):
        node = pair.after.child(a_props[name], "properties", name)
        field, display = _join(pair.field, pair.name, name)
        sub = replace(pair, field=field, name=display)
        required = name in a_req
        summary = schema_summary(node.schema)
        cmp.sink("property.added-required" if required else "property.added", sub, node.pointer, None, ("required " if required else "optional ") + summary,
                 name=display, required=required, schema=node.schema, type=type_label(node.schema),
                 how=how_to_pass(node.schema))
    for name in sorted(a_req - b_req):
        if name in a_props and name not in b_props:
            continue  # reported as a new required property
        schema = pair.after.child(a_props.get(name, {}), "properties", name).schema
        field, display = _join(pair.field, pair.name, name)
        sub = replace(pair, field=field, name=display)
        cmp.sink("required.added", sub, _kw_path(pair.after, "required"), "optional", f"required ({schema_summary(schema)})",
                 name=display, schema=schema, type=type_label(schema), how=how_to_pass(schema))
    for name in sorted(b_req - a_req):
        if name in b_props and name not in a_props:
            continue  # reported as a removed property
        field, display = _join(pair.field, pair.name, name)
        sub = replace(pair, field=field, name=display)
        cmp.sink("required.removed", sub, _kw_path(pair.before, "required"), "required", "optional", name=display)
    for name in sorted(b_props.keys() & a_props.keys()):
        child = cmp.child(pair, b_props[name], a_props[name], ("properties", name), name,
                          name in b_req, name in a_req)
        cmp.walk(child, depth + 1)
    b_pat = b.get("patternProperties") if isinstance(b.get("patternProperties"), dict) else {}
    a_pat = a.get("patternProperties") if isinstance(a.get("patternProperties"), dict) else {}
    for pattern in sorted(b_pat.keys() | a_pat.keys()):
        if pattern in b_pat and pattern in a_pat:
            cmp.walk(cmp.child(pair, b_pat[pattern], a_pat[pattern], ("patternProperties", pattern), f"/{pattern}/"),
                     depth + 1)
        else:
            node = pair.after if pattern in a_pat else pair.before
            cmp.emit("unclassified", pair, node.pointer + "/patternProperties/" + escape_pointer_token(pattern),
                     value_label(b_pat[pattern]) if pattern in b_pat else None,
                     value_label(a_pat[pattern]) if pattern in a_pat else None,
                     keyword="patternProperties", detail=f"patternProperties {pattern!r} "
                     + ("added" if pattern in a_pat else "removed"))


@check("additionalProperties", "unevaluatedProperties")
def check_additional(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        b_raw, a_raw = pair.before.schema.get(keyword), pair.after.schema.get(keyword)
        if b_raw == a_raw and canonical_json(b_raw) == canonical_json(a_raw):
            continue
        b_closed, a_closed = is_closed(pair.before.schema, keyword), is_closed(pair.after.schema, keyword)
        if b_closed == a_closed and b_closed:
            continue
        before_label = "closed" if b_closed else ("open" if b_raw in (None, True, {}) else schema_summary(b_raw))
        after_label = "closed" if a_closed else ("open" if a_raw in (None, True, {}) else schema_summary(a_raw))
        node = pair.after if a_raw is not None else pair.before
        at = _kw_path(node, keyword)
        if a_closed and not b_closed:
            relation = "closed"
        elif b_closed and not a_closed:
            relation = "opened"
        else:
            # both open or schema-valued: grade by what the extra-property schema now admits
            sub = cmp.child(pair, as_object(b_raw), as_object(a_raw), (keyword,), "*")
            kinds = [kind for kind, _ in cmp.probe(sub.before, sub.after, sub.field, sub.name)]
            if not kinds:
                continue
            relation = "closed" if any(k in NARROWING_KINDS for k in kinds) else "opened"
            if all(k in COSMETIC_KINDS for k in kinds):
                cmp.walk(sub, depth + 1)
                continue
        cmp.emit(f"additional-properties.{relation}", pair, at, before_label, after_label, keyword=keyword)


@check("items", "prefixItems", "contains", "propertyNames", "unevaluatedItems")
def check_items(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    b, a = pair.before.schema, pair.after.schema
    if "items" in b or "items" in a:
        cmp.walk(cmp.child(pair, b.get("items", {}), a.get("items", {}), ("items",), "[]"), depth + 1)
    b_pre = b.get("prefixItems") if isinstance(b.get("prefixItems"), list) else []
    a_pre = a.get("prefixItems") if isinstance(a.get("prefixItems"), list) else []
    for index in range(max(len(b_pre), len(a_pre))):
        before = b_pre[index] if index < len(b_pre) else b.get("items", {})
        after = a_pre[index] if index < len(a_pre) else a.get("items", {})
        cmp.walk(cmp.child(pair, before, after, ("prefixItems", str(index)), f"[{index}]"), depth + 1)
    for keyword, label in (("contains", "[contains]"), ("propertyNames", "{name}"), ("unevaluatedItems", "[]")):
        if keyword in b and keyword in a:
            cmp.walk(cmp.child(pair, b[keyword], a[keyword], (keyword,), label), depth + 1)
        elif keyword in b or keyword in a:
            relation = "added" if keyword in a else "removed"
            node = pair.after if keyword in a else pair.before
            cmp.emit("unclassified", pair, _kw_path(node, keyword),
                     value_label(b[keyword]) if keyword in b else None,
                     value_label(a[keyword]) if keyword in a else None,
                     keyword=keyword, detail=f"{keyword} {relation}")


@check(*UNION_KEYWORDS)
def check_unions(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    b, a = pair.before.schema, pair.after.schema
    b_kw = next((k for k in UNION_KEYWORDS if isinstance(b.get(k), list)), None)
    a_kw = next((k for k in UNION_KEYWORDS if isinstance(a.get(k), list)), None)
    if b_kw and a_kw and b_kw != a_kw:
        cmp.emit("union.keyword-changed", pair, _kw_path(pair.after, a_kw), b_kw, a_kw, keyword=a_kw)
    b_branches = _branches(pair.before, b_kw)
    a_branches = _branches(pair.after, a_kw)
    pairs, removed, added = match_branches(b_branches, a_branches)
    for b_node, a_node in pairs:
        cmp.walk(Pair(b_node, a_node, pair.field, pair.name, pair.required_before, pair.required_after), depth + 1)
    for b_node in removed:
        if any(_covers(cmp, b_node, a_node) for a_node in a_branches):
            continue
        cmp.emit("union.branch-removed", pair, b_node.pointer, schema_summary(b_node.schema), None,
                 keyword=b_kw or a_kw or "anyOf")
    for a_node in added:
        cmp.emit("union.branch-added", pair, a_node.pointer, None, schema_summary(a_node.schema),
                 keyword=a_kw or b_kw or "anyOf")


def _branches(node: Node, keyword: str | None) -> list[Node]:
    if keyword is None:
        return []
    if node.lifted:
        return [Node(node.schema[keyword][0], node.root, node.pointer, node.ref_target)]
    return [node.child(branch, keyword, str(index)) for index, branch in enumerate(node.schema[keyword])]


_STAY_ON_NODE = (*ANNOTATION_KEYWORDS, "default", "deprecated")


def _lift_to_union(pair: Pair) -> Pair:
    """``X`` -> ``anyOf: [X, Y]`` reads as one added branch: when only one side is a union
    (with nothing but annotations beside it), the other side's constraints become its
    single branch, so they are matched against the branches instead of the node."""
    b, a = pair.before.schema, pair.after.schema
    b_kw = next((k for k in UNION_KEYWORDS if isinstance(b.get(k), list)), None)
    a_kw = next((k for k in UNION_KEYWORDS if isinstance(a.get(k), list)), None)
    if (b_kw is None) == (a_kw is None):
        return pair
    union, plain, keyword = (a, b, a_kw) if a_kw else (b, a, b_kw)
    if any(key != keyword and key not in _STAY_ON_NODE for key in union):
        return pair
    own = {k: v for k, v in plain.items() if k not in _STAY_ON_NODE}
    if not own:
        return pair
    wrapped = {**{k: v for k, v in plain.items() if k in _STAY_ON_NODE}, keyword: [own]}
    side = pair.before if a_kw else pair.after
    lifted = Node(wrapped, side.root, side.pointer, side.ref_target, lifted=True)
    return replace(pair, before=lifted) if a_kw else replace(pair, after=lifted)


def _discriminators(node: Node) -> dict[str, str]:
    properties = node.schema.get("properties")
    pins: dict[str, str] = {}
    if isinstance(properties, dict):
        for name, sub in properties.items():
            sub = as_object(sub)
            values = value_set(sub)
            if values is not None and len(values) == 1:
                pins[name] = next(iter(values))
    return pins


def _similarity(b: Node, a: Node) -> float:
    b_props = set(b.schema.get("properties", {}) or {}) if isinstance(b.schema.get("properties"), dict) else set()
    a_props = set(a.schema.get("properties", {}) or {}) if isinstance(a.schema.get("properties"), dict) else set()
    score = 0.0
    if type_set(b.schema) == type_set(a.schema):
        score += 1.0
    if b_props or a_props:
        score += 2.0 * len(b_props & a_props) / len(b_props | a_props)
    score += SequenceMatcher(None, canonical_json(b.schema)[:400], canonical_json(a.schema)[:400]).ratio()
    return score


def match_branches(before: list[Node], after: list[Node]) -> tuple[list[tuple[Node, Node]], list[Node], list[Node]]:
    """Pair union branches: equal ones, then by discriminator value, then by likeness."""
    remaining_b, remaining_a = list(before), list(after)
    pairs: list[tuple[Node, Node]] = []
    keys_a = {id(n): canonical_json(n.schema) for n in remaining_a}
    for b_node in list(remaining_b):
        key = canonical_json(b_node.schema)
        match = next((n for n in remaining_a if keys_a[id(n)] == key), None)
        if match is not None:
            pairs.append((b_node, match))
            remaining_b.remove(b_node)
            remaining_a.remove(match)
    for b_node in list(remaining_b):
        pins = _discriminators(b_node)
        if not pins:
            continue
        match = next((n for n in remaining_a if any(_discriminators(n).get(k) == v for k, v in pins.items())), None)
        if match is not None:
            pairs.append((b_node, match))
            remaining_b.remove(b_node)
            remaining_a.remove(match)
    scored = sorted(
        ((_similarity(b, a), i, j) for i, b in enumerate(remaining_b) for j, a in enumerate(remaining_a)),
        key=lambda item: (-item[0], item[1], item[2]),
    )
    used_b: set[int] = set()
    used_a: set[int] = set()
    for score, i, j in scored:
        if score < 1.5 or i in used_b or j in used_a:
            continue
        used_b.add(i)
        used_a.add(j)
        pairs.append((remaining_b[i], remaining_a[j]))
    removed = [n for i, n in enumerate(remaining_b) if i not in used_b]
    added = [n for j, n in enumerate(remaining_a) if j not in used_a]
    return pairs, removed, added


def _covers(cmp: SchemaComparer, before: Node, after: Node) -> bool:
    """Whether an after-branch still accepts everything a before-branch accepted."""
    return not any(kind in NARROWING_KINDS or kind == "unclassified" for kind, _ in cmp.probe(before, after))


@check("allOf")
def check_all_of(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    b_list = pair.before.schema.get("allOf") if isinstance(pair.before.schema.get("allOf"), list) else []
    a_list = pair.after.schema.get("allOf") if isinstance(pair.after.schema.get("allOf"), list) else []
    b_nodes = [pair.before.child(x, "allOf", str(i)) for i, x in enumerate(b_list)]
    a_nodes = [pair.after.child(x, "allOf", str(i)) for i, x in enumerate(a_list)]
    pairs, removed, added = match_branches(b_nodes, a_nodes)
    for b_node, a_node in pairs:
        cmp.walk(Pair(b_node, a_node, pair.field, pair.name, pair.required_before, pair.required_after), depth + 1)
    for node in removed:
        cmp.emit("all-of.branch-removed", pair, node.pointer, schema_summary(node.schema), None, keyword="allOf")
    for node in added:
        cmp.emit("all-of.branch-added", pair, node.pointer, None, schema_summary(node.schema), keyword="allOf")


@check("if", "then", "else")
def check_if_then_else(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    keys = ("if", "then", "else")
    b = {k: pair.before.schema[k] for k in keys if k in pair.before.schema}
    a = {k: pair.after.schema[k] for k in keys if k in pair.after.schema}
    if canonical_json(b) == canonical_json(a):
        return
    relation = "added" if not b else "removed" if not a else "changed"
    node = pair.before if relation == "removed" else pair.after
    cmp.emit(f"conditional.{relation}", pair, _kw_path(node, "if"), value_label(b) if b else None,
             value_label(a) if a else None, keyword="if/then/else")


@check("dependentRequired")
def check_dependent_required(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    b = pair.before.schema.get("dependentRequired") or {}
    a = pair.after.schema.get("dependentRequired") or {}
    for name in sorted(set(b) | set(a)):
        b_set = set(b.get(name, [])) if isinstance(b.get(name), list) else set()
        a_set = set(a.get(name, [])) if isinstance(a.get(name), list) else set()
        if b_set == a_set and (name in b) == (name in a):
            continue
        relation = "added" if a_set > b_set or name not in b else "removed" if a_set < b_set or name not in a else "changed"
        node = pair.before if relation == "removed" else pair.after
        before = f"with {name}: {', '.join(sorted(b_set))}" if name in b else None
        after = f"with {name}: {', '.join(sorted(a_set))}" if name in a else None
        cmp.emit(f"conditional.{relation}", pair, _kw_path(node, "dependentRequired") + "/" + escape_pointer_token(name),
                 before, after, keyword="dependentRequired", trigger=name)


@check("dependentSchemas")
def check_dependent_schemas(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    b = pair.before.schema.get("dependentSchemas") or {}
    a = pair.after.schema.get("dependentSchemas") or {}
    for name in sorted(set(b) | set(a)):
        if name in b and name in a and canonical_json(b[name]) == canonical_json(a[name]):
            continue
        relation = "added" if name not in b else "removed" if name not in a else "changed"
        node = pair.before if relation == "removed" else pair.after
        cmp.emit(f"conditional.{relation}", pair, _kw_path(node, "dependentSchemas") + "/" + escape_pointer_token(name),
                 schema_summary(b[name]) if name in b else None, schema_summary(a[name]) if name in a else None,
                 keyword="dependentSchemas", trigger=name)


@check("not")
def check_not(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    b, a = pair.before.schema.get("not"), pair.after.schema.get("not")
    if canonical_json(b) != canonical_json(a):
        node = pair.after if a is not None else pair.before
        cmp.emit("not.changed", pair, _kw_path(node, "not"), value_label(b) if b is not None else None,
                 value_label(a) if a is not None else None, keyword="not")


@check("default")
def check_default(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    b, a = pair.before.schema, pair.after.schema
    if ("default" in b) == ("default" in a) and value_key(b.get("default")) == value_key(a.get("default")):
        return
    node = pair.after if "default" in a else pair.before
    cmp.emit("default.changed", pair, _kw_path(node, "default"),
             value_label(b["default"]) if "default" in b else "no default",
             value_label(a["default"]) if "default" in a else "no default", keyword="default")


@check("deprecated")
def check_deprecated(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    b, a = bool(pair.before.schema.get("deprecated")), bool(pair.after.schema.get("deprecated"))
    if b != a:
        node = pair.after if "deprecated" in pair.after.schema else pair.before
        cmp.emit("deprecated.added" if a else "deprecated.removed", pair, _kw_path(node, "deprecated"),
                 str(b).lower(), str(a).lower(), keyword="deprecated")


@check(*ANNOTATION_KEYWORDS)
def check_annotations(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    b, a = pair.before.schema, pair.after.schema
    for keyword in ANNOTATION_KEYWORDS:
        if keyword in b or keyword in a:
            if keyword in b and keyword in a and value_key(b[keyword]) == value_key(a[keyword]):
                continue
            node = pair.after if keyword in a else pair.before
            cmp.emit("description.changed", pair, _kw_path(node, keyword),
                     value_label(b[keyword]) if keyword in b else None,
                     value_label(a[keyword]) if keyword in a else None, keyword=keyword)


OWNED: frozenset[str] = frozenset(
    [keyword for keywords, _ in CHECKS for keyword in keywords] + list(IGNORED_KEYWORDS)
)
"""Keywords some check explains; the rest goes to the unclassified safety net."""

NARROWING_KINDS = frozenset({
    "property.removed", "property.added-required", "required.added", "type.changed", "type.narrowed",
    "enum.value-removed", "enum.added", "const.added", "const.changed", "bound.tightened", "pattern.added",
    "pattern.changed", "format.added", "format.changed", "additional-properties.closed", "union.branch-removed",
    "union.keyword-changed", "all-of.branch-added", "conditional.added", "conditional.changed", "not.changed",
})
"""Kinds that can refuse an input the old schema accepted (used to judge coverage)."""
COSMETIC_KINDS = frozenset({"description.changed", "deprecated.added", "deprecated.removed"})
