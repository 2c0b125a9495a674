"""Objects: declared properties, ``required``, the catch-all schemas that cover the names no
declaration names (``patternProperties``, then ``additionalProperties``, then
``unevaluatedProperties``), and ``propertyNames``.

A new declared property is compared with the catch-all schema that covered its name
before (``bar: number`` added under ``additionalProperties: {type: string}`` refuses
``{"bar": "x"}``); a removed one with what covers it now. A property whose schema is
``false`` admits no value: removing it refuses nothing.
"""

from __future__ import annotations

from typing import Any

from app.diff.describe import how_to_pass, schema_summary, type_label, value_label
from app.diff.schema.effective import Node, as_object, is_false, list_at, object_at
from app.diff.schema.instances import Undecidable, matches, regex_samples, sampler_for, validators
from app.diff.schema.kinds import Effect, Kind, effect, maps
from app.diff.schema.walk import Pair, SchemaComparer, Wild, below, check


def _property_removed(direction: str) -> Any:
    def choose(facts: dict[str, Any]) -> tuple[str, str]:
        if direction == "input":
            return "input.property.removed", "closed object" if facts.get("closed") else "open object"
        return "output.property.removed", "required" if facts.get("required") else "optional"

    return choose


maps(Kind.PROPERTY_REMOVED, Effect.NARROWS, input=_property_removed("input"), output=_property_removed("output"))
maps(Kind.PROPERTY_ADDED, Effect.WIDENS, input="input.property.added", output="output.property.added")
maps(Kind.PROPERTY_ADDED_REQUIRED, Effect.NARROWS, input="input.property.added-required",
     output="output.property.added")
maps(Kind.REQUIRED_ADDED, Effect.NARROWS, input="input.required.added", output="output.required.added")
maps(Kind.REQUIRED_REMOVED, Effect.WIDENS, input="input.required.removed", output="output.required.removed")
# A property declared `false` (refused) on an object that accepted it as an undocumented
# extra, and the reverse: a refused name that is accepted again.
maps(Kind.PROPERTY_FORBIDDEN, Effect.NARROWS, input="input.additional-properties.closed",
     output="output.additional-properties.closed")
maps(Kind.PROPERTY_ALLOWED, Effect.WIDENS, input="input.additional-properties.opened",
     output="output.additional-properties.opened")
maps(Kind.ADDITIONAL_CLOSED, Effect.NARROWS, input="input.additional-properties.closed",
     output="output.additional-properties.closed")
maps(Kind.ADDITIONAL_OPENED, Effect.WIDENS, input="input.additional-properties.opened",
     output="output.additional-properties.opened")
maps(Kind.PROPERTY_NAMES_NARROWED, Effect.NARROWS, input="input.property-names.narrowed",
     output="output.property-names.narrowed")
maps(Kind.PROPERTY_NAMES_RELAXED, Effect.WIDENS, input="input.property-names.relaxed",
     output="output.property-names.relaxed")


# --- what covers an undeclared name -------------------------------------------------------


def catch_all(node: Node, name: str) -> list[Node] | None:
    """The schemas an undeclared property ``name`` must satisfy: the patternProperties
    whose regex matches it, else additionalProperties, else unevaluatedProperties.
    None when nothing does (an open object: any value)."""
    schema = node.schema
    patterns = object_at(schema, "patternProperties")
    matching = [node.child(sub, "patternProperties", pattern) for pattern, sub in patterns.items()
                if matches(pattern, name)]
    if matching:
        return matching
    keyword = extra_keyword(schema)
    return None if keyword is None else [node.child(schema[keyword], keyword)]


def extra_keyword(schema: dict[str, Any]) -> str | None:
    """The keyword that decides undeclared names: ``additionalProperties`` (it evaluates
    every name, so ``unevaluatedProperties`` beside it sees none), else
    ``unevaluatedProperties``."""
    if "additionalProperties" in schema:
        return "additionalProperties"
    return "unevaluatedProperties" if "unevaluatedProperties" in schema else None


def _refuses_all(nodes: list[Node] | None) -> bool:
    return nodes is not None and any(is_false(node.schema) for node in nodes)


def _filtered(cmp: SchemaComparer, keep: Any) -> SchemaComparer:
    """A comparer that reports to ``cmp``'s sink only the kinds ``keep`` accepts."""

    def sink(kind: Kind, pair: Pair, at: str, before: str | None, after: str | None, **facts: Any) -> None:
        if keep(kind):
            cmp.sink(kind, pair, at, before, after, **facts)

    return SchemaComparer(sink, cmp.checkpoint, cmp.nesting)


def _constrains(kind: Kind) -> bool:
    return effect(kind) not in (Effect.COSMETIC, Effect.NEUTRAL)


@check("properties", "required", "patternProperties")
def check_properties(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    b, a = pair.before.schema, pair.after.schema
    b_props, a_props = object_at(b, "properties"), object_at(a, "properties")
    b_req = {n for n in list_at(b, "required") if isinstance(n, str)}
    a_req = {n for n in list_at(a, "required") if isinstance(n, str)}
    for name in sorted(b_props.keys() - a_props.keys()):
        _removed(cmp, pair, name, b_req)
    for name in sorted(a_props.keys() - b_props.keys()):
        _added(cmp, pair, name, a_req, depth)
    for name in sorted(a_req - b_req):
        if name in a_props and name not in b_props:
            continue  # reported as a new required property
        schema = pair.after.child(a_props.get(name, {}), "properties", name).schema
        cmp.sink(Kind.REQUIRED_ADDED, below(pair, name), pair.after.at("required"), "optional",
                 f"required ({schema_summary(schema)})", name=below(pair, name).name, schema=schema,
                 type=type_label(schema), how=how_to_pass(schema), absent=name)
    for name in sorted(b_req - a_req):
        if name in b_props and name not in a_props:
            continue  # reported as a removed property
        sub = below(pair, name)
        cmp.sink(Kind.REQUIRED_REMOVED, sub, pair.before.at("required"), "required", "optional", name=sub.name)
    for name in sorted(b_props.keys() & a_props.keys()):
        child = cmp.child(pair, b_props[name], a_props[name], ("properties", name), name,
                          name in b_req, name in a_req)
        cmp.walk(child, depth + 1)
    _pattern_properties(cmp, pair, depth)


def _removed(cmp: SchemaComparer, pair: Pair, name: str, b_req: set[str]) -> None:
    node = pair.before.child(object_at(pair.before.schema, "properties")[name], "properties", name)
    sub = below(pair, name)
    now = catch_all(pair.after, name)
    if is_false(node.schema):
        # a refused name: nothing old is refused now; accepted again unless still refused
        if not _refuses_all(now):
            cmp.sink(Kind.PROPERTY_ALLOWED, sub, node.pointer, "no value", schema_summary(
                now[0].schema) if now else "any value", name=sub.name)
        return
    closed = now is not None and not all(cmp.covers(node, covering) for covering in now)
    cmp.sink(Kind.PROPERTY_REMOVED, sub, node.pointer, schema_summary(node.schema), None, name=sub.name,
             closed=closed, required=name in b_req, schema=node.schema)


def _added(cmp: SchemaComparer, pair: Pair, name: str, a_req: set[str], depth: int) -> None:
    node = pair.after.child(object_at(pair.after.schema, "properties")[name], "properties", name)
    sub = below(pair, name)
    before = catch_all(pair.before, name)
    required = name in a_req
    if is_false(node.schema):
        if not _refuses_all(before):
            cmp.sink(Kind.PROPERTY_FORBIDDEN, sub, node.pointer, schema_summary(before[0].schema) if before
                     else "any value", "no value", name=sub.name, seeds_at=name)
        return
    summary = schema_summary(node.schema)
    cmp.sink(Kind.PROPERTY_ADDED_REQUIRED if required else Kind.PROPERTY_ADDED, sub, node.pointer, None,
             ("required " if required else "optional ") + summary, name=sub.name, required=required,
             schema=node.schema, type=type_label(node.schema), how=how_to_pass(node.schema), absent=name)
    if before is not None and not _refuses_all(before):
        # the name was covered by a catch-all schema: its values are compared like a property's
        covering = before[0]
        child = _pair_at(pair, covering, node, name)
        _filtered(cmp, _constrains).walk(child, depth + 1)


def _pair_at(pair: Pair, before: Node, after: Node, label: str) -> Pair:
    sub = below(pair, label)
    return Pair(before, after, sub.field, sub.name, False, False, (*pair.instance, label))


def _pattern_properties(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    b, a = pair.before.schema, pair.after.schema
    b_pat, a_pat = object_at(b, "patternProperties"), object_at(a, "patternProperties")
    for pattern in sorted(b_pat.keys() | a_pat.keys()):
        label = f"/{pattern}/"
        if pattern in b_pat and pattern in a_pat:
            cmp.walk(cmp.child(pair, b_pat[pattern], a_pat[pattern], ("patternProperties", pattern), label),
                     depth + 1)
            continue
        if pattern in a_pat:
            new = pair.after.child(a_pat[pattern], "patternProperties", pattern)
            keyword = extra_keyword(b)
            if keyword is None:
                old = pair.before.child(True, "patternProperties", pattern)
            else:
                old = pair.before.child(b[keyword], keyword)
            declared = object_at(b, "properties")
            for name in sorted(declared):
                if name in object_at(a, "properties") and matches(pattern, name):
                    # a declared property the new pattern matches must satisfy both
                    prop = pair.before.child(declared[name], "properties", name)
                    _filtered(cmp, lambda kind: effect(kind).may_refuse).walk(
                        _pair_at(pair, prop, new, name), depth + 1)
            _names_matched(cmp, pair, pattern, pair.before, new, depth)
            if keyword is None:
                if not is_false(new.schema) and as_object(a_pat[pattern]) != {}:
                    cmp.emit(Kind.ADDITIONAL_CLOSED, pair, new.pointer, "open", schema_summary(new.schema),
                             keyword="patternProperties")
                elif is_false(new.schema):
                    cmp.emit(Kind.ADDITIONAL_CLOSED, pair, new.pointer, "open", "no value",
                             keyword="patternProperties")
                continue
            _filtered(cmp, _constrains).walk(
                Pair(old, new, *_named(pair, label), instance=(*pair.instance, Wild("pattern", pattern))), depth + 1)
        else:
            old = pair.before.child(b_pat[pattern], "patternProperties", pattern)
            _names_matched(cmp, pair, pattern, pair.after, old, depth, old_side=False)
            keyword = extra_keyword(a)
            new = pair.after.child(a[keyword], keyword) if keyword else pair.after.child(True, "patternProperties",
                                                                                         pattern)
            _filtered(cmp, _constrains).walk(
                Pair(old, new, *_named(pair, label), instance=(*pair.instance, Wild("pattern", pattern))), depth + 1)


def _names_matched(cmp: SchemaComparer, pair: Pair, pattern: str, other: Node, node: Node, depth: int,
                   old_side: bool = True) -> None:
    """A pattern added (``old_side``: ``other`` is the old object) or removed: names it
    matches that another pattern of the other side covers are compared under both schemas
    (``^ba+b$: boolean`` replacing ``b.*b: integer`` refuses ``{"bab": 0}``)."""
    other_patterns = object_at(other.schema, "patternProperties")
    declared = object_at(other.schema, "properties")
    seen: set[str] = set()
    for name in regex_samples(pattern)[:6]:
        if name in declared or name in seen:
            continue
        covering = [other.child(sub, "patternProperties", p) for p, sub in other_patterns.items()
                    if p != pattern and matches(p, name)]
        if not covering:
            continue
        seen.add(name)
        before, after = (covering[0], node) if old_side else (node, covering[0])
        _filtered(cmp, _constrains).walk(_pair_at(pair, before, after, name), depth + 1)
        return


def _refused_name(pair: Pair, old: Node, new: Node, unconstrained: bool) -> str | None:
    """A property name the old propertyNames accepted and the new one refuses, if one is found."""
    try:
        old_checker, new_checker = validators(pair.before.root), validators(pair.after.root)
        names = [*sampler_for(pair.after.root).beyond(new.schema), *sampler_for(pair.before.root).samples(
            old.schema if not unconstrained else {"type": "string"})]
        for name in names:
            if isinstance(name, str) and (unconstrained or old_checker.accepts(old.schema, name)) and \
                    not new_checker.accepts(new.schema, name):
                return name
    except Undecidable:
        return None
    return None


def _samples(pair: Pair, node: Node) -> list[Any]:
    try:
        return sampler_for(pair.before.root).samples(node.schema)[:4]
    except Undecidable:
        return []


def _named(pair: Pair, label: str) -> tuple[str, str]:
    sub = below(pair, label)
    return sub.field, sub.name


@check("additionalProperties", "unevaluatedProperties")
def check_additional(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    """The catch-all for undeclared names, read as one effective schema whichever keyword
    spells it (``additionalProperties: false`` -> ``unevaluatedProperties: false`` is no change)."""
    b_kw, a_kw = extra_keyword(pair.before.schema), extra_keyword(pair.after.schema)
    b_raw = pair.before.schema.get(b_kw) if b_kw else None
    a_raw = pair.after.schema.get(a_kw) if a_kw else None
    b_closed, a_closed = is_false(b_raw), is_false(a_raw)
    if b_closed and a_closed:
        return
    if b_raw is None and a_raw is None:
        return
    before_label = "closed" if b_closed else ("open" if b_raw in (None, True, {}) else schema_summary(b_raw))
    after_label = "closed" if a_closed else ("open" if a_raw in (None, True, {}) else schema_summary(a_raw))
    node = pair.after if a_kw else pair.before
    keyword = a_kw or b_kw
    assert keyword is not None
    at = node.at(keyword)
    if a_closed and not b_closed:
        kind = Kind.ADDITIONAL_CLOSED
    elif b_closed and not a_closed:
        kind = Kind.ADDITIONAL_OPENED
    else:
        # both open or schema-valued: grade by what the extra-property schema now admits
        sub = cmp.child(pair, as_object(b_raw) if b_raw is not None else {}, as_object(a_raw) if a_raw is not None
                        else {}, (b_kw or keyword,), "*", after_tokens=(a_kw or keyword,))
        kinds = [found for found, _ in cmp.probe(sub.before, sub.after, sub.field, sub.name)]
        if not kinds:
            return
        effects = {effect(found) for found in kinds}
        narrows, widens = bool(effects & {Effect.NARROWS, Effect.BOTH}), bool(effects & {Effect.WIDENS, Effect.BOTH})
        if narrows and widens:
            # neither contains the other (string -> integer): it refuses some old extras and
            # admits new ones, one delta each way
            cmp.emit(Kind.ADDITIONAL_CLOSED, pair, at, before_label, after_label, keyword=keyword)
            kind = Kind.ADDITIONAL_OPENED
        elif narrows:
            kind = Kind.ADDITIONAL_CLOSED
        elif widens:
            kind = Kind.ADDITIONAL_OPENED
        else:
            # wording only, or changes that neither narrow nor widen (a default): report
            # each where it is, never as "opened" (SAFE)
            cmp.walk(sub, depth + 1)
            return
    cmp.emit(kind, pair, at, before_label, after_label, keyword=keyword)


@check("propertyNames")
def check_property_names(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    """Graded by the names it refuses: a declared argument's name refused is BREAKING
    (calls that send it fail), only undeclared names refused is like closing the object."""
    b_raw, a_raw = pair.before.schema.get("propertyNames"), pair.after.schema.get("propertyNames")
    if value_label(b_raw) == value_label(a_raw):
        return
    if a_raw is None or as_object(a_raw) == {}:
        if b_raw is not None and as_object(b_raw) != {}:
            cmp.emit(Kind.PROPERTY_NAMES_RELAXED, pair, pair.before.at("propertyNames"), value_label(b_raw), None,
                     keyword="propertyNames")
        return
    old = pair.before.child(b_raw if b_raw is not None else True, "propertyNames")
    new = pair.after.child(a_raw, "propertyNames")
    at = new.pointer
    try:
        checker = validators(pair.after.root)
        old_checker = validators(pair.before.root)
        declared = [name for name in object_at(pair.before.schema, "properties")
                    if not is_false(object_at(pair.before.schema, "properties")[name])]
        refused = [name for name in declared if (b_raw is None or old_checker.accepts(old.schema, name))
                   and not checker.accepts(new.schema, name)]
    except Undecidable:
        refused = []
    if refused:
        for name in refused:
            sub = below(pair, name)
            cmp.emit(Kind.PROPERTY_NAMES_NARROWED, sub, at, value_label(b_raw) if b_raw is not None else None,
                     value_label(a_raw), keyword="propertyNames", refused=name, seeds_at=name)
        return
    documented = pair.before.schema.get(extra_keyword(pair.before.schema) or "")
    if isinstance(documented, dict) and documented and not is_false(documented):
        # the old object documented its extra names with a schema: a name it accepted and
        # the new propertyNames refuses is a refused documented argument
        found = _refused_name(pair, old, new, b_raw is None)
        if found is not None:
            extra = pair.before.child(documented, extra_keyword(pair.before.schema) or "additionalProperties")
            cmp.emit(Kind.PROPERTY_NAMES_NARROWED, below(pair, found), at,
                     value_label(b_raw) if b_raw is not None else None, value_label(a_raw), keyword="propertyNames",
                     refused=found, seeds=[{found: value} for value in _samples(pair, extra)])
            return
    if is_false(pair.after.schema.get(extra_keyword(pair.after.schema) or "", True)) and is_false(
            pair.before.schema.get(extra_keyword(pair.before.schema) or "", True)):
        return  # closed on both sides and every declared name still passes: no call changes
    probe = cmp.probe(old, new, "", "{name}")
    effects = {effect(found) for found, _ in probe}
    if b_raw is None or any(e.may_refuse for e in effects):
        cmp.emit(Kind.ADDITIONAL_CLOSED, pair, at, value_label(b_raw) if b_raw is not None else "any name",
                 value_label(a_raw), keyword="propertyNames")
    elif Effect.WIDENS in effects:
        cmp.emit(Kind.PROPERTY_NAMES_RELAXED, pair, at, value_label(b_raw), value_label(a_raw),
                 keyword="propertyNames")
