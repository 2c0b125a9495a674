"""Input schema rules (RULES.md "Input schema"): what the model sends.

A change that refuses an argument set the old contract accepted is BREAKING; one that
accepts more is SAFE. These are the rows (severity and wording); the walk is shared
(``app/diff/schema``) and each kind of change it reports is mapped to one of these rules
beside the check that finds it.
"""

from __future__ import annotations

from app.diff.registry import BREAKING, COSMETIC, REGISTRY, RISKY, SAFE, rule

C, D = "input", "input"

rule("input.property.removed", BREAKING, C, D, 'Argument "{name}" was removed',
     'Do not send "{name}": the tool now rejects it.', when="closed object",
     summary="A property was removed from a closed object: calls that send it are rejected.")
rule("input.property.removed", RISKY, C, D, 'Argument "{name}" was removed',
     'Do not send "{name}": the tool now ignores it.', when="open object",
     summary="A property was removed from an open object: it is now silently ignored.")
rule("input.property.added", SAFE, C, D, 'New optional argument "{name}" ({type})',
     'You may pass "{name}" {how}.', summary="A new optional property.")
rule("input.property.added-required", BREAKING, C, D, 'New required argument "{name}" ({type})',
     'Pass "{name}" {how}.', summary="A new property that is required (a default does not help).")
rule("input.required.added", BREAKING, C, D, 'Argument "{name}" is now required', 'Pass "{name}" {how}.',
     summary="An existing property became required.")
rule("input.required.removed", SAFE, C, D, 'Argument "{name}" is now optional',
     summary="A property became optional.")
rule("input.type.changed", BREAKING, C, D, 'Argument "{name}" changed type from {before} to {after}',
     'Send "{name}" as {after}.', summary="A type was replaced by an unrelated one.")
rule("input.type.narrowed", BREAKING, C, D, 'Argument "{name}" accepts fewer types',
     'Send "{name}" as {after}.', summary="Fewer values accepted: number->integer, a type or null removed.")
rule("input.type.widened", SAFE, C, D, 'Argument "{name}" accepts more types',
     summary="More values accepted: integer->number, a type or null added.")
rule("input.enum.value-removed", BREAKING, C, D, 'Argument "{name}" no longer accepts {value}',
     'Use one of: {allowed}.', summary="An enum lost a value.")
rule("input.enum.added", BREAKING, C, D, 'Argument "{name}" is now restricted to: {allowed}',
     'Use one of: {allowed}.', summary="A property became an enum.")
rule("input.enum.value-added", SAFE, C, D, 'Argument "{name}" now also accepts {value}',
     summary="An enum gained a value.")
rule("input.enum.removed", SAFE, C, D, 'Argument "{name}" is no longer restricted to a list of values',
     summary="An enum restriction was dropped.")
rule("input.const.added", BREAKING, C, D, 'Argument "{name}" must now be exactly {allowed}',
     'Send "{name}" as {allowed}.', summary="A const was added.")
rule("input.const.changed", BREAKING, C, D, 'Argument "{name}" must now be {after} instead of {before}',
     'Send "{name}" as {after}.', summary="A const changed.")
rule("input.const.removed", SAFE, C, D, 'Argument "{name}" is no longer fixed to {before}',
     summary="A const was removed.")
rule("input.bound.tightened", BREAKING, C, D, 'Argument "{name}" has a tighter {keyword}',
     'Keep "{name}" within the new limit ({limit}).',
     summary="A max bound added or decreased, a min bound added or increased, multipleOf added or changed "
             "to a non-divisor, uniqueItems added.")
rule("input.bound.relaxed", SAFE, C, D, 'Argument "{name}" has a looser {keyword}',
     summary="A bound removed or loosened, multipleOf changed to a divisor.")
rule("input.bound.integer-range", COSMETIC, C, D,
     'Argument "{name}" has a {keyword} at or beyond the interoperable integer range',
     summary="A bound at or beyond ±(2^53-1) (I-JSON) on both sides, such as zod's maximum 9007199254740991 on "
             "every integer: no client sends an exact number past it, so nothing changes in practice.")
rule("input.pattern.added", BREAKING, C, D, 'Argument "{name}" must now match the pattern {after}',
     'Send a value of "{name}" that matches {after}.', summary="A pattern was added.")
rule("input.pattern.changed", RISKY, C, D, 'The pattern of argument "{name}" changed',
     'Send a value of "{name}" that matches {after}.',
     summary="A pattern changed (regex containment is undecidable in general).")
rule("input.pattern.removed", SAFE, C, D, 'Argument "{name}" no longer has to match {before}',
     summary="A pattern was removed.")
rule("input.format.added", RISKY, C, D, 'Argument "{name}" must now be in {after} format',
     'Send "{name}" as a valid {after}.', summary="A format was added (many validators do not enforce it).")
rule("input.format.changed", RISKY, C, D, 'The format of argument "{name}" changed',
     'Send "{name}" as a valid {after}.', summary="A format changed.")
rule("input.format.removed", SAFE, C, D, 'Argument "{name}" no longer has the {before} format',
     summary="A format was removed.")
rule("input.additional-properties.closed", RISKY, C, D,
     'Object "{name}" accepts fewer undocumented properties',
     'Send only the documented properties of "{name}".',
     summary="Open->closed, or the additionalProperties schema narrowed: only undocumented arguments are "
             "newly refused.")
rule("input.additional-properties.opened", SAFE, C, D,
     'Object "{name}" accepts more undocumented properties',
     summary="Closed->open, or the additionalProperties schema widened.")
rule("input.union.branch-removed", BREAKING, C, D, 'Argument "{name}" no longer accepts the shape {before}',
     'Send "{name}" in one of its remaining shapes.',
     summary="A oneOf/anyOf branch is gone and no remaining branch covers it.")
rule("input.union.branch-added", SAFE, C, D, 'Argument "{name}" now also accepts the shape {after}',
     summary="A oneOf/anyOf branch was added.")
rule("input.union.added", BREAKING, C, D, 'Argument "{name}" must now match one of: {after}',
     'Make "{name}" match one of the shapes: {after}.',
     summary="A first anyOf/oneOf over a schema that had none, which no single branch covers: calls the old "
             "schema accepted can be refused.")
rule("input.union.removed", SAFE, C, D, 'Argument "{name}" no longer has to match one of: {before}',
     summary="The anyOf/oneOf of a schema was dropped.")
rule("input.union.one-of-overlap", BREAKING, C, D,
     'Argument "{name}" is now refused when it matches more than one oneOf branch',
     'Send "{name}" so that exactly one shape matches: {after}.',
     summary="oneOf exclusivity: a value the old schema accepted now matches several oneOf branches, and "
             "oneOf refuses it (a type turned into oneOf of overlapping branches, anyOf -> oneOf, a branch "
             "that overlaps another).")
rule("input.union.one-of-relaxed", SAFE, C, D, 'Argument "{name}" may now match several shapes at once',
     summary="oneOf -> anyOf over branches that can overlap: values matching several branches are accepted.")
rule("input.contains.added", BREAKING, C, D, 'Array "{name}" must now contain an item matching {after}',
     'Include in "{name}" an item that is {after}.',
     summary="contains added: arrays without a matching item (the empty array too) are refused.")
rule("input.contains.removed", SAFE, C, D, 'Array "{name}" no longer has to contain {before}',
     summary="contains removed.")
rule("input.all-of.branch-added", BREAKING, C, D, 'Argument "{name}" must now also satisfy {after}',
     'Make "{name}" satisfy {after}.', summary="An allOf branch was added.")
rule("input.all-of.branch-removed", SAFE, C, D, 'Argument "{name}" no longer has to satisfy {before}',
     summary="An allOf branch was removed.")
rule("input.conditional.added", BREAKING, C, D, 'A new {keyword} condition applies to "{name}": {after}',
     'Check the condition on "{name}": {after}.',
     summary="if/then/else, dependentRequired, dependentSchemas or dependencies added or extended.")
rule("input.conditional.removed", SAFE, C, D, 'A {keyword} condition on "{name}" was removed: {before}',
     summary="A conditional was removed or reduced.")
rule("input.conditional.changed", RISKY, C, D, 'The {keyword} condition on "{name}" changed',
     'Check the condition on "{name}": {after}.', summary="A conditional changed.")
rule("input.not.added", BREAKING, C, D, 'Argument "{name}" must now not be {after}',
     'Make sure "{name}" is not {after}.',
     summary="A not constraint on a property or the root that old values can match (unless the old values "
             "provably never match it: disjoint types).")
rule("input.not.removed", SAFE, C, D, 'Argument "{name}" no longer has to avoid {before}',
     summary="A not constraint was removed.")
rule("input.not.narrowed", BREAKING, C, D, 'The "not" constraint of "{name}" now refuses values it accepted',
     'Check what "{name}" must not be: {after}.',
     summary="A not constraint changed so that an old-valid value (found and checked) is refused.")
rule("input.not.relaxed", SAFE, C, D, 'The "not" constraint of "{name}" refuses less',
     summary="A not constraint changed to one whose negated schema accepts only what the old one did.")
rule("input.not.changed", RISKY, C, D, 'The "not" constraint of "{name}" changed',
     'Check what "{name}" must not be: {after}.',
     summary="A not constraint changed and no old-valid value it now refuses was found.")
rule("input.property-names.narrowed", BREAKING, C, D, 'The name "{refused}" is no longer accepted in "{name}"',
     'Do not send "{refused}": propertyNames now refuses it.',
     summary="propertyNames added or changed so that a declared argument's name is refused.")
rule("input.property-names.relaxed", SAFE, C, D, 'Object "{name}" accepts more property names',
     summary="propertyNames removed or widened.")
rule("input.default.changed", RISKY, C, D, 'The default of argument "{name}" changed',
     'Pass "{name}" explicitly if you relied on the old default ({before}).',
     summary="A default was added, removed or changed: omitted arguments now behave differently.")
rule("input.deprecated.added", COSMETIC, C, D, 'Argument "{name}" is deprecated',
     'Avoid "{name}" in new calls.', summary="A property was marked deprecated.")
rule("input.description.changed", COSMETIC, C, D, 'The {keyword} of "{name}" changed',
     summary="An annotation keyword changed: title, description, examples, $comment, $schema, $id, readOnly, "
             "writeOnly.")
rule("input.unclassified", RISKY, C, D, 'Unclassified change to "{name}": {detail}',
     'Check the current schema of "{name}" before calling.',
     summary="A difference no rule explains (never SAFE by default).")


def _unwitnessed_variants() -> None:
    """Every BREAKING input row has an ``unwitnessed`` variant, RISKY: a break judged on a
    union, ``allOf``, ``not`` or conditional by approximation, for which the witness search
    found no call the old schema accepts and the new one refuses (RULES.md)."""
    for (rule_id, when), entry in list(REGISTRY.items()):
        if entry.direction == "input" and entry.severity is BREAKING:
            rule(rule_id, RISKY, entry.category, entry.direction, entry.message, entry.hint,
                 when=f"{when}, unwitnessed" if when else "unwitnessed",
                 summary=entry.summary + " Judged on a combinator and no refused call was found: RISKY.")


_unwitnessed_variants()
