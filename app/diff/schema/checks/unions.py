"""``anyOf`` / ``oneOf``: branches matched and compared, coverage of lost values by the
other branches, a first union added or dropped, and ``oneOf`` exclusivity (a value two
branches accept is refused).

A union's verdict is about the values the whole union admits: narrowing one branch
refuses nothing when another branch still accepts the lost values, and a union added
over an old schema refuses nothing when one of its branches covers it. Where the walk
cannot decide (do two ``oneOf`` branches overlap on the old values?), old-valid samples
are validated against the new schema (``instances``).
"""

from __future__ import annotations

from dataclasses import replace
from difflib import SequenceMatcher
from typing import Any

from app.diff.describe import schema_summary, value_label
from app.diff.schema.effective import (
    ANNOTATION_KEYWORDS,
    Node,
    admitted_types,
    as_object,
    type_set,
    value_key,
    value_set,
)
from app.diff.schema.instances import Undecidable, merge_schemas, sampler_for, validators
from app.diff.schema.kinds import Effect, Kind, effect, maps
from app.diff.schema.walk import TRANSFORMS, Pair, SchemaComparer, check
from app.jsonio import canonical_json
from app.jsontypes import JSON

UNION_KEYWORDS = ("anyOf", "oneOf")

maps(Kind.UNION_BRANCH_REMOVED, Effect.NARROWS, input="input.union.branch-removed",
     output="output.union.branch-removed")
maps(Kind.UNION_BRANCH_ADDED, Effect.WIDENS, input="input.union.branch-added", output="output.union.branch-added")
maps(Kind.UNION_ADDED, Effect.NARROWS, input="input.union.added", output="output.union.added")
maps(Kind.UNION_REMOVED, Effect.WIDENS, input="input.union.removed", output="output.union.removed")
maps(Kind.ONE_OF_OVERLAP, Effect.NARROWS, input="input.union.one-of-overlap", output="output.union.one-of-overlap")
maps(Kind.ONE_OF_RELAXED, Effect.WIDENS, input="input.union.one-of-relaxed", output="output.union.one-of-relaxed")

SAMPLES = 24
"""Old-valid samples tried when a question about a union is decided by values."""


@check(*UNION_KEYWORDS)
def check_unions(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    b, a = pair.before.schema, pair.after.schema
    b_kw = next((k for k in UNION_KEYWORDS if isinstance(b.get(k), list)), None)
    a_kw = next((k for k in UNION_KEYWORDS if isinstance(a.get(k), list)), None)
    if b_kw is None and a_kw is not None:
        _union_added(cmp, pair, a_kw)
        return
    if a_kw is None and b_kw is not None:
        cmp.emit(Kind.UNION_REMOVED, pair, pair.before.at(b_kw), schema_summary(b), None, keyword=b_kw)
        return
    assert b_kw is not None and a_kw is not None
    b_branches = _distinct(branches(pair.before, b_kw), b_kw)
    a_branches = _distinct(branches(pair.after, a_kw), a_kw)
    discriminator = _discriminator(b_branches, a_branches)
    pairs, removed, added = match_branches(b_branches, a_branches, discriminator)
    for b_node, a_node in pairs:
        _walk_branch(cmp, pair, b_node, a_node, b_branches, a_branches, depth)
    for b_node in removed:
        if any(cmp.covers(b_node, a_node) for a_node in a_branches):
            continue
        cmp.emit(Kind.UNION_BRANCH_REMOVED, pair, b_node.pointer, schema_summary(b_node.schema), None, keyword=b_kw)
    for a_node in added:
        if any(cmp.covers(a_node, b_node) for b_node in b_branches):
            continue  # the values of the new branch were accepted by an old one
        cmp.emit(Kind.UNION_BRANCH_ADDED, pair, a_node.pointer, None, schema_summary(a_node.schema), keyword=a_kw)
    if a_kw == "oneOf":
        if discriminator is None and not _disjoint(a_branches):
            _exclusivity(cmp, pair, a_branches, keyword_changed=b_kw != a_kw)
    elif b_kw == "oneOf" and discriminator is None and not _disjoint(b_branches):
        cmp.emit(Kind.ONE_OF_RELAXED, pair, pair.after.at(a_kw), b_kw, a_kw, keyword=a_kw)


def _walk_branch(cmp: SchemaComparer, pair: Pair, b_node: Node, a_node: Node, b_branches: list[Node],
                 a_branches: list[Node], depth: int) -> None:
    """Compare a matched pair of branches; what it loses is no loss when another new branch
    still accepts it, and what it gains no gain when another old branch accepted it."""
    child = Pair(b_node, a_node, pair.field, pair.name, pair.required_before, pair.required_after, pair.instance,
                 combined=True)
    found = cmp.probe(b_node, a_node, pair.field, pair.name, pair.instance)
    if not found:
        return
    drop_refusals = any(effect(kind).may_refuse for kind, _ in found) and any(
        cmp.covers(b_node, other) for other in a_branches if other is not a_node)
    drop_gains = any(effect(kind).may_admit for kind, _ in found) and any(
        cmp.covers(a_node, other) for other in b_branches if other is not b_node)
    if not drop_refusals and not drop_gains:
        cmp.walk(child, depth + 1)
        return

    def sink(kind: Kind, pair: Pair, at: str, before: str | None, after: str | None, **facts: Any) -> None:
        kind_effect = effect(kind)
        if drop_refusals and kind_effect.may_refuse and not kind_effect.may_admit:
            return
        if drop_gains and kind_effect.may_admit and not kind_effect.may_refuse:
            return
        if drop_refusals and drop_gains and kind_effect is Effect.BOTH:
            return
        cmp.sink(kind, pair, at, before, after, **facts)

    SchemaComparer(sink, cmp.checkpoint, cmp.nesting).walk(child, depth + 1)


def _union_added(cmp: SchemaComparer, pair: Pair, keyword: str) -> None:
    """A first union over a schema that had none: a new constraint, graded by whether one
    branch still accepts every old value (then nothing changes), else BREAKING, with an
    old-valid sample the new schema refuses when one is found."""
    a_branches = branches(pair.after, keyword)
    old = pair.before
    for branch in a_branches:
        merged = Node(merge_schemas(old.schema, branch.schema), old.root, old.pointer, None, spelling=old.spelling)
        if cmp.covers(old, merged) and (keyword == "anyOf" or len(a_branches) == 1):
            return
    refused = _refused_samples(pair)
    if keyword == "oneOf" and not refused and _disjoint(a_branches) and any(
            cmp.covers(old, Node(merge_schemas(old.schema, b.schema), old.root, old.pointer, None))
            for b in a_branches):
        return
    cmp.emit(Kind.UNION_ADDED, pair, pair.after.at(keyword), None, schema_summary(pair.after.schema),
             keyword=keyword, seeds=refused[:1])


def _refused_samples(pair: Pair) -> list[JSON]:
    """Values the before place accepts and the after place refuses (a bounded search)."""
    try:
        sampler = sampler_for(pair.before.root)
        new = validators(pair.after.root)
        return [value for value in sampler.valid_samples(pair.before.schema, SAMPLES)
                if not new.accepts(pair.after.schema, value)]
    except Undecidable:
        return []


def _exclusivity(cmp: SchemaComparer, pair: Pair, a_branches: list[Node], keyword_changed: bool) -> None:
    """``oneOf`` refuses a value two branches accept: look for an old-valid value that
    more than one new branch accepts."""
    before = _as_written(pair.before)
    try:
        sampler = sampler_for(pair.before.root)
        new = validators(pair.after.root)
        old = validators(pair.before.root)
        samples = sampler.valid_samples(before, SAMPLES)
        # the values each new branch is built around, where the old place took them too
        for branch in a_branches:
            samples += [value for value in sampler_for(pair.after.root).samples(branch.schema)[:6]
                        if old.accepts(before, value)]
        for value in samples:
            matching = [i for i, branch in enumerate(a_branches) if new.accepts(branch.schema, value)]
            if len(matching) > 1 and not new.accepts(pair.after.schema, value):
                first, second = (a_branches[i] for i in matching[:2])
                cmp.emit(Kind.ONE_OF_OVERLAP, pair, pair.after.at("oneOf"), None,
                         f"{schema_summary(first.schema)} | {schema_summary(second.schema)}", keyword="oneOf",
                         seeds=[value], value=value_label(value))
                return
    except Undecidable:
        pass
    if keyword_changed:
        cmp.emit(Kind.UNCLASSIFIED, pair, pair.after.at("oneOf"), "anyOf", "oneOf", keyword="oneOf",
                 detail="anyOf -> oneOf: branches that may overlap now refuse the values they share")


def _as_written(node: Node) -> JSON:
    """The values a node admits as a schema: a lifted node's branches are its own
    constraints split up (per type), whose union (``anyOf``) is the node, never a ``oneOf``."""
    if not node.lifted:
        return node.schema
    return {("anyOf" if k in UNION_KEYWORDS else k): v for k, v in node.schema.items()}


def _disjoint(nodes: list[Node]) -> bool:
    """Whether no value can match two of the branches, decided by their types alone."""
    seen: set[str] = set()
    for node in nodes:
        types = admitted_types(node.schema)
        if types is None or types & seen:
            return False
        seen |= types
    return True


def _distinct(nodes: list[Node], keyword: str) -> list[Node]:
    """``anyOf`` branches without repeats (a repeated branch adds nothing); ``oneOf``
    repeats are kept: two equal branches refuse every value they accept."""
    if keyword == "oneOf":
        return nodes
    seen: set[str] = set()
    out = []
    for node in nodes:
        key = value_key(node.schema)
        if key not in seen:
            seen.add(key)
            out.append(node)
    return out


def branches(node: Node, keyword: str | None) -> list[Node]:
    if keyword is None or not isinstance(node.schema.get(keyword), list):
        return []
    if node.lifted:
        # The node's own constraints, wrapped: each branch still lives where the node does.
        return [Node(as_object(branch), node.root, node.pointer, node.location, spelling=node.spelling)
                for branch in node.schema[keyword]]
    return [node.child(branch, keyword, str(index)) for index, branch in enumerate(node.schema[keyword])]


_STAY_ON_NODE = (*ANNOTATION_KEYWORDS, "default", "deprecated")


def lift(pair: Pair, keywords: tuple[str, ...]) -> Pair:
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
    if "additionalProperties" in beside and ("properties" in own or "patternProperties" in own):
        return pair  # additionalProperties sees only its own node's properties: moving them changes it
    types = own.get("type")
    if keyword != "allOf" and set(own) == {"type"} and isinstance(types, list) and len(types) > 1:
        wrapped_branches: list[JSON] = [{"type": t} for t in sorted(set(types))]
    else:
        wrapped_branches = [own]
    wrapped = {**{k: v for k, v in plain.items() if k not in own}, keyword: wrapped_branches}
    side = pair.before if a_kw else pair.after
    lifted = Node(wrapped, side.root, side.pointer, side.location, lifted=True, spelling=side.spelling)
    return replace(pair, before=lifted) if a_kw else replace(pair, after=lifted)


TRANSFORMS.append(lambda pair: lift(lift(pair, UNION_KEYWORDS), ("allOf",)))


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
