"""Output schema rules (RULES.md "Output schema"): what the model and client receive.

The direction flips: the new output must still satisfy the old schema, so a narrower
output is SAFE and a wider one is not. Kinds of change this table does not grade are
``output.unclassified`` (RISKY), never SAFE by default.
"""

from __future__ import annotations

from typing import Any

from app.diff.family import SchemaFamily
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
rule("output.description.changed", COSMETIC, C, D, 'The {keyword} of result field "{name}" changed',
     summary="An annotation keyword of the output schema changed.")
rule("output.unclassified", RISKY, C, D, 'Unclassified change to result field "{name}": {detail}',
     'Check the current output schema before relying on "{name}".',
     summary="A difference no output rule explains (never SAFE by default).")


def _property_removed(facts: dict[str, Any]) -> tuple[str, str]:
    return "output.property.removed", "required" if facts.get("required") else "optional"


OUTPUT = SchemaFamily(
    "output",
    {
        "property.removed": _property_removed,
        "property.added": "output.property.added",
        "property.added-required": "output.property.added",
        "required.removed": "output.required.removed",
        "required.added": "output.required.added",
        "type.changed": "output.type.changed",
        "type.widened": "output.type.widened",
        "type.narrowed": "output.type.narrowed",
        "enum.value-added": "output.enum.value-added",
        "enum.value-removed": "output.enum.value-removed",
        "bound.relaxed": "output.bound.relaxed",
        "bound.tightened": "output.bound.tightened",
        "description.changed": "output.description.changed",
    },
)
