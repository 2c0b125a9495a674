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

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from typing import Any, Protocol

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
    is_false,
    list_at,
    multiple_relation,
    numeric_bound,
    object_at,
    type_relation,
    type_set,
    value_key,
    value_set,
)
from app.jsonio import canonical_json
from app.jsontypes import JSON
from app.schemas import resolve_local_ref

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
        self._active: set[tuple[str, str]] = set()
        """Locations of the places being compared on the current path (recursion guard)."""
        self._refs_equal: dict[str, bool] = {}

    # -- entry ---------------------------------------------------------------------

    def compare(self, before: Node, after: Node, field: str) -> None:
        self.walk(Pair(before, after, field, "(root)"), 0)

    def probe(
        self, before: Node, after: Node, field: str = "", name: str = "(root)"
    ) -> list[tuple[str, dict[str, Any]]]:
        """The kinds a comparison would report, without reporting them."""
        found: list[tuple[str, dict[str, Any]]] = []

        def collect(kind: str, pair: Pair, at: str, before: str | None, after: str | None, **facts: Any) -> None:
            found.append((kind, facts))

        SchemaComparer(collect).walk(Pair(before, after, field, name), 0)
        return found

    def emit(
        self, kind: str, pair: Pair, at: str, before: str | None = None, after: str | None = None, **facts: Any
    ) -> None:
        self.sink(kind, pair, at, before, after, name=pair.name, **facts)

    def walk(self, pair: Pair, depth: int) -> None:
        if self._same(pair.before, pair.after):
            return
        pair = _lift(_lift(pair, UNION_KEYWORDS), ("allOf",))
        b, a = pair.before.schema, pair.after.schema
        guard = None
        if pair.before.location is not None and pair.after.location is not None and not (
                pair.before.lifted or pair.after.lifted):
            guard = (pair.before.location, pair.after.location)
            if guard in self._active:
                return  # round a recursive schema: this place is being compared further up
            self._active.add(guard)
        try:
            if depth > MAX_DEPTH:
                self.emit("unclassified", pair, pair.after.pointer, None, None,
                          detail="schema nested too deeply to compare")
                return
            for keywords, check in CHECKS:
                if any(keyword in b or keyword in a for keyword in keywords):
                    check(self, pair, depth)
            self._unclassified(pair)
        finally:
            if guard is not None:
                self._active.discard(guard)

    def _same(self, before: Node, after: Node) -> bool:
        """Equal text, and every ``$ref`` it reaches (transitively) leads to equal text on both
        sides: then the two places admit the same values and there is nothing to walk."""
        b, a = before.schema, after.schema
        if b != a or canonical_json(b) != canonical_json(a):
            return False
        pending = list(_refs(b))
        while pending:
            ref = pending.pop()
            known = self._refs_equal.get(ref)
            if known is False:
                return False
            if known:
                continue
            b_target = resolve_local_ref(before.root, ref) if ref.startswith("#") else None
            a_target = resolve_local_ref(after.root, ref) if ref.startswith("#") else None
            equal = (b_target is not None and a_target is not None
                     and canonical_json(b_target) == canonical_json(a_target))
            if not equal and not ref.startswith("#"):
                equal = True  # a remote reference is not followed: equal text is all we can compare
            self._refs_equal[ref] = equal
            if not equal:
                return False
            pending.extend(_refs(b_target))
        return True

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
        # deepdiff only here, when keywords no check owns differ: a diff that never needs the
        # safety net never pays its ~180 ms import (command start-up, bench/start_bench.py).
        from deepdiff import DeepDiff

        not_present = _not_present()
        found = DeepDiff(b, a, ignore_order=False, verbose_level=2, view="tree")
        for report_type, items in sorted(found.items()):
            for item in items:
                tokens = [str(token) for token in item.path(output_format="list")]
                keyword = tokens[0] if tokens else ""
                removed = report_type.endswith("_removed")
                node = pair.before if removed else pair.after
                at = node.at(tokens[0], *tokens[1:]) if tokens else node.pointer
                before = None if item.t1 is not_present or report_type.endswith("_added") else value_label(item.t1)
                after = None if item.t2 is not_present or removed else value_label(item.t2)
                self.emit("unclassified", pair, at, before, after, keyword=keyword,
                          detail=f"{keyword or 'schema'} {report_type.replace('_', ' ')}")


class _NotPresentMarker:
    pass


def _not_present() -> object:
    """deepdiff's sentinel for the missing side of an added/removed item."""
    try:
        from deepdiff.helper import notpresent
    except ImportError:  # pragma: no cover - older deepdiff
        return _NotPresentMarker()
    return notpresent


def _refs(schema: JSON) -> set[str]:
    """Every ``$ref`` string in a subtree."""
    found: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                found.add(ref)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


# --- checks: each owns its keywords ----------------------------------------------------

Check = Callable[[SchemaComparer, Pair, int], None]
CHECKS: list[tuple[tuple[str, ...], Check]] = []


def check(*keywords: str) -> Callable[[Check], Check]:
    def register(function: Check) -> Check:
        CHECKS.append((keywords, function))
        return function

    return register


def _kw_path(node: Node, keyword: str) -> str:
    """Where a keyword of a node is written (draft-07 and collapsed spellings included)."""
    return node.at(keyword)


@check("type", "not")  # "not": the schema false is read as {"not": {}}, an empty type set
def check_type(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    b, a = pair.before.schema, pair.after.schema
    relation = type_relation(type_set(b), type_set(a))
    if relation:
        node = pair.after if "type" in a or is_false(a) else pair.before
        cmp.emit(f"type.{relation}", pair, _kw_path(node, "type"), type_label(b), type_label(a))


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
    if len(before) == 1 and len(after) == 1:
        # enum ["a"] is const "a" (RULES.md principle 2): one fixed value replaced by another
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
    b_props, a_props = object_at(b, "properties"), object_at(a, "properties")
    b_req = {n for n in list_at(b, "required") if isinstance(n, str)}
    a_req = {n for n in list_at(a, "required") if isinstance(n, str)}
    for name in sorted(b_props.keys() - a_props.keys()):
        node = pair.before.child(b_props[name], "properties", name)
        field, display = _join(pair.field, pair.name, name)
        sub = replace(pair, field=field, name=display)
        cmp.sink("property.removed", sub, node.pointer, schema_summary(node.schema), None, name=display,
                 closed=_refuses_undeclared(pair.after, name, node), required=name in b_req, schema=node.schema)
    for name in sorted(a_props.keys() - b_props.keys()):
        node = pair.after.child(a_props[name], "properties", name)
        field, display = _join(pair.field, pair.name, name)
        sub = replace(pair, field=field, name=display)
        required = name in a_req
        summary = schema_summary(node.schema)
        cmp.sink("property.added-required" if required else "property.added", sub, node.pointer, None,
                 ("required " if required else "optional ") + summary, name=display, required=required,
                 schema=node.schema, type=type_label(node.schema), how=how_to_pass(node.schema))
    for name in sorted(a_req - b_req):
        if name in a_props and name not in b_props:
            continue  # reported as a new required property
        schema = pair.after.child(a_props.get(name, {}), "properties", name).schema
        field, display = _join(pair.field, pair.name, name)
        sub = replace(pair, field=field, name=display)
        cmp.sink("required.added", sub, _kw_path(pair.after, "required"), "optional",
                 f"required ({schema_summary(schema)})", name=display, schema=schema, type=type_label(schema),
                 how=how_to_pass(schema))
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
    b_pat, a_pat = object_at(b, "patternProperties"), object_at(a, "patternProperties")
    for pattern in sorted(b_pat.keys() | a_pat.keys()):
        if pattern in b_pat and pattern in a_pat:
            cmp.walk(cmp.child(pair, b_pat[pattern], a_pat[pattern], ("patternProperties", pattern), f"/{pattern}/"),
                     depth + 1)
        else:
            node = pair.after if pattern in a_pat else pair.before
            cmp.emit("unclassified", pair, node.at("patternProperties", pattern),
                     value_label(b_pat[pattern]) if pattern in b_pat else None,
                     value_label(a_pat[pattern]) if pattern in a_pat else None,
                     keyword="patternProperties", detail=f"patternProperties {pattern!r} "
                     + ("added" if pattern in a_pat else "removed"))


def _refuses_undeclared(after: Node, name: str, old: Node) -> bool:
    """Whether an object now refuses values the removed property ``name`` accepted.

    RULES.md calls an object closed when additionalProperties or unevaluatedProperties is
    false. When what now applies to the name is a schema instead (the patternProperties
    whose pattern matches it, else additionalProperties, else unevaluatedProperties), the
    removal is graded as on a closed object if that schema no longer accepts every value
    the property accepted (calls that send it may now be rejected), as on an open one if it
    does (the argument is accepted and no longer documented)."""
    schema = after.schema
    patterns = object_at(schema, "patternProperties")
    applies = [after.child(sub, "patternProperties", pattern) for pattern, sub in patterns.items()
               if _matches(pattern, name)]
    if not applies:
        keyword = next((k for k in ("additionalProperties", "unevaluatedProperties") if k in schema), None)
        if keyword is None:
            return False
        applies = [after.child(schema[keyword], keyword)]
    return not all(_covers(SchemaComparer(_ignore), old, node) for node in applies)


def _matches(pattern: str, name: str) -> bool:
    try:
        return re.search(pattern, name) is not None
    except (re.error, RecursionError):
        return False  # a pattern Python cannot read: assume it does not apply


def _ignore(*args: Any, **kwargs: Any) -> None:
    return None


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
            if any(k in NARROWING_KINDS for k in kinds):
                relation = "closed"
            elif all(k in WIDENING_KINDS or k in COSMETIC_KINDS for k in kinds) and not all(
                    k in COSMETIC_KINDS for k in kinds):
                relation = "opened"
            else:
                # wording only, or changes that neither narrow nor widen (a default, an
                # unclassified keyword): report each where it is, never as "opened" (SAFE)
                cmp.walk(sub, depth + 1)
                continue
        cmp.emit(f"additional-properties.{relation}", pair, at, before_label, after_label, keyword=keyword)


@check("items", "prefixItems", "contains", "propertyNames", "unevaluatedItems")
def check_items(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    b, a = pair.before.schema, pair.after.schema
    if "items" in b or "items" in a:
        cmp.walk(cmp.child(pair, b.get("items", {}), a.get("items", {}), ("items",), "[]"), depth + 1)
    b_pre, a_pre = list_at(b, "prefixItems"), list_at(a, "prefixItems")
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
    b_branches = _branches(pair.before, b_kw)
    a_branches = _branches(pair.after, a_kw)
    discriminator = _discriminator(b_branches, a_branches)
    if b_kw and a_kw and b_kw != a_kw and discriminator is None:
        # oneOf <-> anyOf only matters when branches can overlap; branches that pin one
        # property to distinct values never do (a discriminated union reads the same).
        cmp.emit("union.keyword-changed", pair, _kw_path(pair.after, a_kw), b_kw, a_kw, keyword=a_kw)
    pairs, removed, added = match_branches(b_branches, a_branches, discriminator)
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
    if keyword is None or not isinstance(node.schema.get(keyword), list):
        return []
    if node.lifted:
        # The node's own constraints, wrapped: each branch still lives where the node does.
        return [Node(as_object(branch), node.root, node.pointer, node.location, spelling=node.spelling)
                for branch in node.schema[keyword]]
    return [node.child(branch, keyword, str(index)) for index, branch in enumerate(node.schema[keyword])]


_STAY_ON_NODE = (*ANNOTATION_KEYWORDS, "default", "deprecated")


def _lift(pair: Pair, keywords: tuple[str, ...]) -> Pair:
    """``X`` -> ``anyOf: [X, Y]`` reads as one added branch: when only one side has the
    union (or ``allOf``), the other side's own constraints become its branches, so they are
    matched against the branches instead of the node. Keywords both sides share beside the
    union stay on the node. A plain type list met by a union is one branch per type (the
    form ``anyOf: [{type: a}, {type: b}]`` collapsed into)."""
    b, a = pair.before.schema, pair.after.schema
    b_kw = next((k for k in keywords if isinstance(b.get(k), list) and b[k]), None)
    a_kw = next((k for k in keywords if isinstance(a.get(k), list) and a[k]), None)
    if (b_kw is None) == (a_kw is None):
        return pair
    union, plain, keyword = (a, b, a_kw) if a_kw else (b, a, b_kw)
    assert keyword is not None
    beside = {k: v for k, v in union.items() if k != keyword and k not in _STAY_ON_NODE}
    if any(k not in plain or value_key(plain[k]) != value_key(v) for k, v in beside.items()):
        return pair
    own = {k: v for k, v in plain.items() if k not in _STAY_ON_NODE and k not in beside}
    if not own or keyword in own:
        return pair
    types = own.get("type")
    if keyword != "allOf" and set(own) == {"type"} and isinstance(types, list) and len(types) > 1:
        branches: list[JSON] = [{"type": t} for t in sorted(set(types))]
    else:
        branches = [own]
    wrapped = {**{k: v for k, v in plain.items() if k not in own}, keyword: branches}
    side = pair.before if a_kw else pair.after
    lifted = Node(wrapped, side.root, side.pointer, side.location, lifted=True, spelling=side.spelling)
    return replace(pair, before=lifted) if a_kw else replace(pair, after=lifted)


def _pins(node: Node) -> dict[str, str]:
    """Properties a branch pins to one value (``const`` or a one-value ``enum``)."""
    properties = node.schema.get("properties")
    pins: dict[str, str] = {}
    if isinstance(properties, dict):
        for name, sub in properties.items():
            sub = as_object(sub)
            values = value_set(sub)
            if values is not None and len(values) == 1:
                pins[name] = next(iter(values))
    return pins


def _discriminator(before: list[Node], after: list[Node]) -> str | None:
    """The property every branch on both sides pins, to distinct values on each side
    (``action`` preferred): the key branches are matched by. A property two branches pin
    to the same value (``version: 1``) tells them apart from nothing."""
    sides = [[_pins(node) for node in before], [_pins(node) for node in after]]
    every = [pins for side in sides for pins in side]
    if not before or not after:
        return None
    common = set(every[0]).intersection(*every[1:])
    keys = sorted(k for k in common if all(len({pins[k] for pins in side}) == len(side) for side in sides))
    if not keys:
        return None
    return "action" if "action" in keys else keys[0]


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


def match_branches(before: list[Node], after: list[Node],
                   discriminator: str | None = None) -> tuple[list[tuple[Node, Node]], list[Node], list[Node]]:
    """Pair union branches: by discriminator value when the branches have one (then a
    branch whose value is gone is removed, whatever it looks like: ``list`` never pairs
    with ``listAll``), else equal ones first, then the most alike."""
    remaining_b, remaining_a = list(before), list(after)
    pairs: list[tuple[Node, Node]] = []
    if discriminator is not None:
        by_value = {_pins(node)[discriminator]: node for node in after}
        matched = [(b, by_value.get(_pins(b)[discriminator])) for b in before]
        pairs = [(b, a) for b, a in matched if a is not None]
        used = {id(a) for _, a in pairs}
        return pairs, [b for b, a in matched if a is None], [a for a in after if id(a) not in used]
    keys_a = {id(n): canonical_json(n.schema) for n in remaining_a}
    for b_node in list(remaining_b):
        key = canonical_json(b_node.schema)
        match = next((n for n in remaining_a if keys_a[id(n)] == key), None)
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
    b_nodes = _branches(pair.before, "allOf")
    a_nodes = _branches(pair.after, "allOf")
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
    changed = next(k for k in keys if canonical_json(b.get(k)) != canonical_json(a.get(k)))
    keyword = "if" if relation != "changed" else changed
    node = node if keyword in node.schema else pair.before
    cmp.emit(f"conditional.{relation}", pair, _kw_path(node, keyword), value_label(b) if b else None,
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
        relation = ("added" if a_set > b_set or name not in b
                    else "removed" if a_set < b_set or name not in a else "changed")
        node = pair.before if relation == "removed" else pair.after
        before = f"with {name}: {', '.join(sorted(b_set))}" if name in b else None
        after = f"with {name}: {', '.join(sorted(a_set))}" if name in a else None
        cmp.emit(f"conditional.{relation}", pair, node.at("dependentRequired", name),
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
        cmp.emit(f"conditional.{relation}", pair, node.at("dependentSchemas", name),
                 schema_summary(b[name]) if name in b else None, schema_summary(a[name]) if name in a else None,
                 keyword="dependentSchemas", trigger=name)


@check("not")
def check_not(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    if is_false(pair.before.schema) or is_false(pair.after.schema):
        return  # the schema `false` admits no value: check_type grades it as an empty type set
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
WIDENING_KINDS = frozenset({
    "property.added", "required.removed", "type.widened", "enum.value-added", "enum.removed", "const.removed",
    "bound.relaxed", "pattern.removed", "format.removed", "additional-properties.opened", "union.branch-added",
    "all-of.branch-removed", "conditional.removed",
})
"""Kinds that only accept more than before (the SAFE side of the input table)."""
COSMETIC_KINDS = frozenset({"description.changed", "deprecated.added", "deprecated.removed"})
