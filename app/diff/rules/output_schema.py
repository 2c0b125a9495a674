"""Output schema rules (RULES.md "Output schema"): what the model and client receive.

The direction flips: the new output must still satisfy the old schema, so a narrower
output is SAFE and a wider one is not. Kinds of change this table does not grade are
``output.unclassified`` (RISKY), never SAFE by default.
"""

from __future__ import annotations

from app.diff.registry import BREAKING, COSMETIC, RISKY, SAFE, rule

C, D = "output", "output"

rule("output.schema.added", SAFE, C, D, "The tool now declares an output schema",
     summary="An outputSchema was added: results are now structured and validated.")
rule("output.schema.removed", RISKY, C, D, "The tool no longer declares an output schema",
     "Do not rely on the structure of the result.", summary="The outputSchema was removed.")
rule("output.property.removed", BREAKING, C, D, 'Result field "{name}" was removed',
     'Do not expect "{name}" in the result.', when="required",
     summary="A property that was required in the output is gone.")
rule("output.property.removed", RISKY, C, D, 'Result field "{name}" was removed',
     'Do not expect "{name}" in the result.', when="optional",
     summary="A property that was optional in the output is gone.")
rule("output.property.added", SAFE, C, D, 'New result field "{name}" ({type})', summary="A new output property.")
rule("output.required.removed", RISKY, C, D, 'Result field "{name}" is no longer guaranteed',
     'Handle results without "{name}".', summary="An output property is no longer guaranteed.")
rule("output.required.added", SAFE, C, D, 'Result field "{name}" is now always present',
     summary="An output property is now guaranteed.")
rule("output.type.changed", BREAKING, C, D, 'Result field "{name}" changed type from {before} to {after}',
     'Expect "{name}" as {after}.', summary="An output type was replaced by an unrelated one.")
rule("output.type.widened", BREAKING, C, D, 'Result field "{name}" may now be {after} (was {before})',
     'Expect "{name}" as {after}.', summary="An output type accepts more values: consumers may break.")
rule("output.type.narrowed", SAFE, C, D, 'Result field "{name}" is now always {after} (was {before})',
     summary="An output type accepts fewer values.")
rule("output.enum.value-added", RISKY, C, D, 'Result field "{name}" may now be {value}',
     'Handle the new value {value} of "{name}".', summary="Consumers may not handle the new value.")
rule("output.enum.value-removed", SAFE, C, D, 'Result field "{name}" is no longer {value}',
     summary="An output enum lost a value.")
rule("output.bound.relaxed", RISKY, C, D, 'Result field "{name}" has a looser {keyword}',
     'Do not rely on the old limit of "{name}" ({before}).', summary="An output bound was loosened.")
rule("output.bound.tightened", SAFE, C, D, 'Result field "{name}" has a tighter {keyword}',
     summary="An output bound was tightened.")
rule("output.enum.added", SAFE, C, D, 'Result field "{name}" is now restricted to: {allowed}',
     summary="An output became an enum: fewer values.")
rule("output.enum.removed", RISKY, C, D, 'Result field "{name}" is no longer restricted to a list of values',
     'Handle any value of "{name}", not only {before}.', summary="An output enum restriction was dropped.")
rule("output.const.added", SAFE, C, D, 'Result field "{name}" is now always {allowed}',
     summary="An output const was added.")
rule("output.const.changed", RISKY, C, D, 'Result field "{name}" is now {after} instead of {before}',
     'Handle "{name}" = {after}.', summary="An output const changed: consumers may not handle the new value.")
rule("output.const.removed", RISKY, C, D, 'Result field "{name}" is no longer fixed to {before}',
     'Handle other values of "{name}".', summary="An output const was removed.")
rule("output.bound.integer-range", COSMETIC, C, D,
     'Result field "{name}" has a {keyword} at or beyond the interoperable integer range',
     summary="A bound at or beyond ±(2^53-1) (I-JSON) on both sides: nothing changes in practice.")
rule("output.pattern.added", SAFE, C, D, 'Result field "{name}" now matches the pattern {after}',
     summary="An output pattern was added.")
rule("output.pattern.changed", RISKY, C, D, 'The pattern of result field "{name}" changed',
     'Do not rely on the old pattern of "{name}" ({before}).', summary="An output pattern changed.")
rule("output.pattern.removed", RISKY, C, D, 'Result field "{name}" no longer has to match {before}',
     'Do not rely on "{name}" matching {before}.', summary="An output pattern was removed.")
rule("output.format.added", SAFE, C, D, 'Result field "{name}" is now in {after} format',
     summary="An output format was added.")
rule("output.format.changed", RISKY, C, D, 'The format of result field "{name}" changed',
     'Expect "{name}" as {after}.', summary="An output format changed.")
rule("output.format.removed", RISKY, C, D, 'Result field "{name}" no longer has the {before} format',
     'Do not rely on "{name}" being {before}.', summary="An output format was removed.")
rule("output.additional-properties.closed", SAFE, C, D,
     'Object "{name}" carries fewer undocumented properties', summary="An output object was closed or its "
     "extra-property schema narrowed.")
rule("output.additional-properties.opened", RISKY, C, D,
     'Object "{name}" may carry more undocumented properties', 'Ignore unknown properties of "{name}".',
     summary="An output object was opened or its extra-property schema widened: a strict reader may refuse it.")
rule("output.property-names.narrowed", SAFE, C, D, 'Object "{name}" carries fewer property names',
     summary="An output propertyNames constraint was added or narrowed.")
rule("output.property-names.relaxed", RISKY, C, D, 'Object "{name}" may carry other property names',
     'Ignore unknown properties of "{name}".', summary="An output propertyNames constraint was relaxed.")
rule("output.union.branch-removed", SAFE, C, D, 'Result field "{name}" no longer comes in the shape {before}',
     summary="An output union lost a branch.")
rule("output.union.branch-added", BREAKING, C, D, 'Result field "{name}" may now come in the shape {after}',
     'Handle "{name}" in the new shape {after}.',
     summary="An output union gained a branch no old branch covered: the old reader refuses it (as a widened "
             "type).")
rule("output.union.added", SAFE, C, D, 'Result field "{name}" now matches one of: {after}',
     summary="A first union over an output schema.")
rule("output.union.removed", RISKY, C, D, 'Result field "{name}" no longer has to match one of: {before}',
     'Do not rely on "{name}" matching {before}.', summary="An output union was dropped.")
rule("output.union.one-of-overlap", SAFE, C, D, 'Result field "{name}" never matches two oneOf branches now',
     summary="oneOf exclusivity now refuses output values that match several branches.")
rule("output.union.one-of-relaxed", RISKY, C, D, 'Result field "{name}" may now match several shapes at once',
     'Do not rely on "{name}" matching exactly one shape.', summary="An output oneOf became anyOf.")
rule("output.contains.added", SAFE, C, D, 'Result array "{name}" now always contains {after}',
     summary="An output contains was added.")
rule("output.contains.removed", RISKY, C, D, 'Result array "{name}" may no longer contain {before}',
     'Do not rely on "{name}" containing {before}.', summary="An output contains was removed.")
rule("output.all-of.branch-added", SAFE, C, D, 'Result field "{name}" now also satisfies {after}',
     summary="An output allOf branch was added.")
rule("output.all-of.branch-removed", RISKY, C, D, 'Result field "{name}" no longer has to satisfy {before}',
     'Do not rely on "{name}" satisfying {before}.', summary="An output allOf branch was removed.")
rule("output.conditional.added", SAFE, C, D, 'A new {keyword} condition applies to result field "{name}"',
     summary="An output conditional was added or extended.")
rule("output.conditional.removed", RISKY, C, D, 'A {keyword} condition on result field "{name}" was removed',
     'Do not rely on the condition {before}.', summary="An output conditional was removed or reduced.")
rule("output.conditional.changed", RISKY, C, D, 'The {keyword} condition on result field "{name}" changed',
     'Check the condition on "{name}": {after}.', summary="An output conditional changed.")
rule("output.not.added", SAFE, C, D, 'Result field "{name}" is now never {after}',
     summary="An output not constraint was added.")
rule("output.not.removed", RISKY, C, D, 'Result field "{name}" may now be {before}',
     'Handle "{name}" being {before}.', summary="An output not constraint was removed.")
rule("output.not.narrowed", SAFE, C, D, 'The "not" constraint of result field "{name}" refuses more',
     summary="An output not constraint now refuses more values.")
rule("output.not.relaxed", RISKY, C, D, 'The "not" constraint of result field "{name}" refuses less',
     'Check what "{name}" may be now.', summary="An output not constraint now refuses fewer values.")
rule("output.not.changed", RISKY, C, D, 'The "not" constraint of result field "{name}" changed',
     'Check what "{name}" may be now.', summary="An output not constraint changed.")
rule("output.default.changed", COSMETIC, C, D, 'The default of result field "{name}" changed',
     summary="An output default: nothing applies it (the server writes the value).")
rule("output.deprecated.changed", COSMETIC, C, D, 'Result field "{name}" deprecation changed',
     summary="An output property was marked or unmarked deprecated.")
rule("output.description.changed", COSMETIC, C, D, 'The {keyword} of result field "{name}" changed',
     summary="An annotation keyword of the output schema changed.")
rule("output.unclassified", RISKY, C, D, 'Unclassified change to result field "{name}": {detail}',
     'Check the current output schema before relying on "{name}".',
     summary="A difference no output rule explains (never SAFE by default).")
