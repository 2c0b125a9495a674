"""``not``: graded by what it does to the values the old schema accepted.

``not`` added on a property or the root refuses the old values the negated schema
accepts: BREAKING unless the old values provably never match it (disjoint types), with
an old-valid sample it refuses when one is found. A changed ``not`` whose new schema
accepts only what the old one did refuses nothing (SAFE); one that refuses a found
old-valid value is BREAKING; undecided, RISKY.
"""

from __future__ import annotations

from app.diff.describe import value_label
from app.diff.schema.effective import admitted_types, as_object, is_false
from app.diff.schema.instances import Undecidable, sampler_for, validators
from app.diff.schema.kinds import Effect, Kind, maps
from app.diff.schema.walk import Pair, SchemaComparer, check
from app.jsonio import canonical_json
from app.jsontypes import JSON

maps(Kind.NOT_ADDED, Effect.NARROWS, input="input.not.added", output="output.not.added")
maps(Kind.NOT_REMOVED, Effect.WIDENS, input="input.not.removed", output="output.not.removed")
maps(Kind.NOT_NARROWED, Effect.NARROWS, input="input.not.narrowed", output="output.not.narrowed")
maps(Kind.NOT_RELAXED, Effect.WIDENS, input="input.not.relaxed", output="output.not.relaxed")
maps(Kind.NOT_CHANGED, Effect.BOTH, input="input.not.changed", output="output.not.changed")

SAMPLES = 24


def _refused(pair: Pair, negated: JSON = None) -> list[JSON]:
    """Old-valid values the new place refuses: the old place's samples, and the values the
    new negated schema accepts (what ``not`` refuses now)."""
    try:
        sampler = sampler_for(pair.before.root)
        old, new = validators(pair.before.root), validators(pair.after.root)
        candidates = sampler.valid_samples(pair.before.schema, SAMPLES)
        if negated is not None:
            candidates += [value for value in sampler_for(pair.after.root).samples(negated)
                           if old.accepts(pair.before.schema, value)]
        return [value for value in candidates if not new.accepts(pair.after.schema, value)]
    except Undecidable:
        return []


@check("not")
def check_not(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    if is_false(pair.before.schema) or is_false(pair.after.schema):
        return  # the schema `false` admits no value: the type check grades it as an empty type set
    b, a = pair.before.schema.get("not"), pair.after.schema.get("not")
    if canonical_json(b) == canonical_json(a):
        return
    if a is None:
        cmp.emit(Kind.NOT_REMOVED, pair, pair.before.at("not"), value_label(b), None, keyword="not")
        return
    at = pair.after.at("not")
    before_label = value_label(b) if b is not None else None
    if b is None:
        old_types = admitted_types(pair.before.schema)
        negated_types = admitted_types(as_object(a))
        if old_types is not None and negated_types is not None and not old_types & negated_types:
            return  # the old values are never of a type the negated schema accepts
        cmp.emit(Kind.NOT_ADDED, pair, at, None, value_label(a), keyword="not", seeds=_refused(pair, a)[:1])
        return
    old_not, new_not = pair.before.child(b, "not"), pair.after.child(a, "not")
    if cmp.covers(new_not, old_not):
        cmp.emit(Kind.NOT_RELAXED, pair, at, before_label, value_label(a), keyword="not")
        return
    refused = _refused(pair, a)
    kind = Kind.NOT_NARROWED if refused else Kind.NOT_CHANGED
    cmp.emit(kind, pair, at, before_label, value_label(a), keyword="not", seeds=refused[:1])
