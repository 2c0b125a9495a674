"""Input schema rules (RULES.md "Input schema"): what the model sends.

A change that refuses an argument set the old contract accepted is BREAKING; one that
accepts more is SAFE. The walk is shared (``schema_compare``); this table grades it.
"""

from __future__ import annotations

from typing import Any

from app.diff.family import SchemaFamily
from app.diff.registry import BREAKING, COSMETIC, RISKY, SAFE, rule

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
rule("input.not.changed", RISKY, C, D, 'The "not" constraint of "{name}" changed',
     'Check what "{name}" must not be: {after}.', summary="A not constraint changed.")
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


def _property_removed(facts: dict[str, Any]) -> tuple[str, str]:
    return "input.property.removed", "closed object" if facts.get("closed") else "open object"


INPUT = SchemaFamily(
    "input",
    {
        "property.removed": _property_removed,
        "property.added": "input.property.added",
        "property.added-required": "input.property.added-required",
        "required.added": "input.required.added",
        "required.removed": "input.required.removed",
        "type.changed": "input.type.changed",
        "type.narrowed": "input.type.narrowed",
        "type.widened": "input.type.widened",
        "enum.value-removed": "input.enum.value-removed",
        "enum.added": "input.enum.added",
        "enum.value-added": "input.enum.value-added",
        "enum.removed": "input.enum.removed",
        "const.added": "input.const.added",
        "const.changed": "input.const.changed",
        "const.removed": "input.const.removed",
        "bound.tightened": "input.bound.tightened",
        "bound.relaxed": "input.bound.relaxed",
        "pattern.added": "input.pattern.added",
        "pattern.changed": "input.pattern.changed",
        "pattern.removed": "input.pattern.removed",
        "format.added": "input.format.added",
        "format.changed": "input.format.changed",
        "format.removed": "input.format.removed",
        "additional-properties.closed": "input.additional-properties.closed",
        "additional-properties.opened": "input.additional-properties.opened",
        "union.branch-removed": "input.union.branch-removed",
        "union.branch-added": "input.union.branch-added",
        "all-of.branch-added": "input.all-of.branch-added",
        "all-of.branch-removed": "input.all-of.branch-removed",
        "conditional.added": "input.conditional.added",
        "conditional.removed": "input.conditional.removed",
        "conditional.changed": "input.conditional.changed",
        "not.changed": "input.not.changed",
        "default.changed": "input.default.changed",
        "deprecated.added": "input.deprecated.added",
        "description.changed": "input.description.changed",
        # Not mapped on purpose: "deprecated.removed" (RULES.md has no row for un-deprecating,
        # and deprecated is not among the annotation keywords it calls cosmetic) and
        # "union.keyword-changed" (oneOf <-> anyOf of overlapping branches) stay
        # input.unclassified, RISKY: never SAFE by default (principle 3).
    },
)
