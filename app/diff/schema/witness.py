"""Witnesses: a concrete value that shows a delta is real.

For an input delta, an argument object the old input schema accepts and the new one
refuses ("this call worked before and fails now"); for an output delta, a result the new
output schema allows and the old reader refuses. A witness is built where the change is
(values sampled at the delta's place, seeded by what the check knew: the removed enum
value, the old const), placed inside a whole argument object that the source schema
accepts, and reported only after jsonschema has checked both verdicts on the whole
schemas. When none is found, the witness says why.

Built lazily (``Delta.witness``): a diff pays nothing for it until a report shows it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from app.budget import checkpoint
from app.diff.model import Witness
from app.diff.schema.effective import effective, list_at, object_at
from app.diff.schema.instances import (
    Sampler,
    Undecidable,
    matches,
    merge_schemas,
    regex_samples,
    sampler_for,
    validators,
)
from app.diff.schema.walk import Segment, Wild
from app.jsontypes import JSON
from app.schemas import deref

MAX_CANDIDATES = 240
"""Whole values validated at most for one witness (two validations each)."""


@dataclass(frozen=True, eq=False)
class Evidence:
    """What a witness is built from: both root schemas, where the change is, the schemas
    of that place (effective), and values the check suggests trying first."""

    direction: str
    before_root: JSON
    after_root: JSON
    instance: tuple[Segment, ...]
    before: JSON
    after: JSON
    seeds: tuple[JSON, ...] = field(default=())

    def build(self) -> Witness:
        return build_witness(self)


def build_witness(evidence: Evidence) -> Witness:
    """A checked witness, or the reason there is none."""
    if evidence.direction == "input":
        source_root, target_root, local, limits = (evidence.before_root, evidence.after_root, evidence.before,
                                                   evidence.after)
        side, other = "the old input schema", "the new one"
    else:
        source_root, target_root, local, limits = (evidence.after_root, evidence.before_root, evidence.after,
                                                   evidence.before)
        side, other = "the new output schema", "the old one"
    try:
        accepts, refuses = validators(source_root), validators(target_root)
        sampler = sampler_for(source_root)
        values = [*evidence.seeds, *sampler.samples(local), *sampler_for(target_root).beyond(limits)]
        tried = 0
        for candidate in embed(sampler, source_root, evidence.instance, values):
            checkpoint()  # the request's work budget (app.budget)
            tried += 1
            if tried > MAX_CANDIDATES:
                break
            if accepts.valid(candidate) and not refuses.valid(candidate):
                return Witness(True, candidate)
    except Undecidable as exc:
        return Witness(False, reason=f"the schemas could not be checked with jsonschema ({exc})")
    except RecursionError:
        return Witness(False, reason="the schemas nest too deeply to build a value")
    if not values:
        return Witness(False, reason=f"{side} admits no value at this place")
    return Witness(False, reason=f"no value that {side} accepts and {other} refuses was found "
                                 f"({min(tried, MAX_CANDIDATES)} tried): the change may refuse none in practice")


def embed(sampler: Sampler, schema: JSON, path: tuple[Segment, ...], values: list[JSON],
          depth: int = 0) -> Iterator[JSON]:
    """Whole values with one of ``values`` at ``path`` and sampled values around it."""
    if not path:
        yield from values
        return
    if depth > 32:
        return
    root = sampler.root
    node = effective(deref(root, schema), root)
    for keyword in ("anyOf", "oneOf"):
        branches = list_at(node, keyword)
        if branches:
            rest = {k: v for k, v in node.items() if k != keyword}
            for branch in branches:
                yield from embed(sampler, merge_schemas(rest, effective(deref(root, branch), root)), path, values,
                                 depth + 1)
            return
    branches = list_at(node, "allOf")
    if branches:
        merged = {k: v for k, v in node.items() if k != "allOf"}
        for branch in branches:
            merged = merge_schemas(merged, effective(deref(root, branch), root))
        leftover = [b for b in list_at(merged, "allOf") if b not in branches]
        merged = {k: v for k, v in merged.items() if k != "allOf"} | ({"allOf": leftover} if leftover else {})
        yield from embed(sampler, merged, path, values, depth + 1)
        return
    segment, rest_path = path[0], path[1:]
    if isinstance(segment, int) or (isinstance(segment, Wild) and segment.what == "item"):
        if isinstance(segment, int):
            yield from _in_array(sampler, node, segment, rest_path, values, depth)
            return
        # any item: the positions past prefixItems (where items/unevaluatedItems apply); the
        # other side may have more prefix positions, so a few further ones are tried too
        first = len(list_at(node, "prefixItems"))
        for index in (first, first + 1, first + 2):
            yield from _in_array(sampler, node, index, rest_path, values, depth)
        return
    yield from _in_object(sampler, node, segment, rest_path, values, depth)


def _in_array(sampler: Sampler, node: dict[str, JSON], index: int, path: tuple[Segment, ...], values: list[JSON],
              depth: int) -> Iterator[JSON]:
    prefix = list_at(node, "prefixItems")
    rest = node.get("items", node.get("unevaluatedItems", True))
    child = prefix[index] if index < len(prefix) else rest
    base: list[JSON] = [sampler.minimal(prefix[position] if position < len(prefix) else rest)
                        for position in range(index + 1)]
    bases = [base]
    minimum = node.get("minItems")
    if isinstance(minimum, int) and minimum > len(base):
        found = sampler.samples(rest)
        bases = [base + [found[(i + 1) % len(found)] if found else None for i in range(minimum - len(base))]]
    for value in embed(sampler, child, path, values, depth + 1):
        for items in bases:
            placed = list(items)
            placed[index] = value
            yield placed


def _in_object(sampler: Sampler, node: dict[str, JSON], segment: Segment, path: tuple[Segment, ...],
               values: list[JSON], depth: int) -> Iterator[JSON]:
    properties = object_at(node, "properties")
    if isinstance(segment, int):
        return
    if isinstance(segment, str):
        name = segment
    elif segment.what == "pattern" and segment.pattern is not None:
        names = [n for n in regex_samples(segment.pattern) if n not in properties]
        if not names:
            return
        name = names[0]
    elif segment.what == "name":
        yield from _named(sampler, node, values)
        return
    else:
        candidates = [n for n in ("extra", "x_extra", "zz9") if n not in properties
                      and not any(matches(p, n) for p in object_at(node, "patternProperties"))]
        if not candidates:
            return
        name = candidates[0]
    child = properties[name] if name in properties else sampler._extra(node, name)
    base = sampler.minimal({**node, "required": [n for n in list_at(node, "required") if n != name]})
    bases = [base if isinstance(base, dict) else {}]
    for value in embed(sampler, child, path, values, depth + 1):
        for base in bases:
            yield {**base, name: value}


def _named(sampler: Sampler, node: dict[str, JSON], names: list[JSON]) -> Iterator[JSON]:
    properties = object_at(node, "properties")
    for name in names:
        if isinstance(name, str):
            child = properties[name] if name in properties else sampler._extra(node, name)
            for value in sampler.samples(child)[:2]:
                yield {name: value}
