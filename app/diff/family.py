"""A schema rule family: the input or output side of the shared schema walk.

Each kind of change the walk reports is mapped, beside the check that emits it
(``app/diff/schema/checks/``), to one rule per direction; this module looks the rule up
for its direction, emits the delta, and attaches what a witness is built from to the
deltas that may refuse (input) or newly admit (output) a value.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from app.diff.emitter import Emitter, Scope
from app.diff.model import KnownWitness, Severity, Witness, WitnessSource
from app.diff.registry import lookup
from app.diff.schema import Kind, Node, Pair, SchemaComparer, resolve_rule
from app.diff.schema.kinds import Effect, effect
from app.diff.schema.walk import Checkpoint, refuses
from app.diff.schema.witness import Evidence

_WITNESSED = (Severity.BREAKING, Severity.RISKY)
_NO_REFUSAL = {
    Kind.PROPERTY_REMOVED: "the object is open: a call that still sends the argument is accepted (the argument "
                           "is ignored), so no call is refused",
    Kind.DEFAULT_CHANGED: "the same calls are accepted: only what an omitted argument means changed",
}
"""Why an input delta that refuses no call has no witness (it is graded for what it does otherwise)."""
CONFIRMED = frozenset({Kind.UNION_ADDED, Kind.NOT_ADDED, Kind.ALL_OF_BRANCH_ADDED, Kind.CONDITIONAL_ADDED,
                       Kind.UNION_BRANCH_REMOVED})
"""Kinds judged on a combinator as a whole by approximation: a BREAKING verdict is confirmed
by a witness (as is every BREAKING input delta found inside a union or allOf branch)."""
UNWITNESSED = "unwitnessed"
"""The variant of a BREAKING input rule whose witness search found no refused call: RISKY."""


@dataclass(frozen=True)
class SchemaFamily:
    direction: str
    """``input`` or ``output``."""

    def compare(self, emitter: Emitter, scope: Scope, before: Node, after: Node, field: str,
                checkpoint: Checkpoint | None = None) -> None:
        """Walk two schemas and emit this family's deltas."""

        def sink(kind: Kind, pair: Pair, at: str, before: str | None, after: str | None, **facts: Any) -> None:
            rule_id, when = resolve_rule(kind, self.direction, facts)
            seeds = tuple(facts.pop("seeds", None) or ())
            facts.pop("name", None)
            facts.setdefault("detail", kind.value.replace(".", " "))
            evidence: WitnessSource | None = None
            severity = lookup(rule_id, when).severity
            if severity in _WITNESSED and effect(kind) is not Effect.COSMETIC:
                if self.direction == "input" and not refuses(kind, facts) and kind in _NO_REFUSAL:
                    evidence = KnownWitness(Witness(False, reason=_NO_REFUSAL[kind]))
                else:
                    evidence = Evidence(self.direction, pair.before.root, pair.after.root, pair.instance,
                                        _as_written(pair.before), _as_written(pair.after), seeds)
                    if (self.direction == "input" and severity is Severity.BREAKING
                            and (kind in CONFIRMED or pair.combined)):
                        witness = evidence.build()
                        evidence = KnownWitness(witness)
                        if not witness.found:
                            when = f"{when}, {UNWITNESSED}" if when else UNWITNESSED
            delta = emitter.make(rule_id, scope, field=pair.field, path=at, before=before, after=after, when=when,
                                 name=pair.name, kind=kind.value, **facts)
            emitter.add(replace(delta, evidence=evidence) if evidence is not None else delta)

        comparer = SchemaComparer(sink) if checkpoint is None else SchemaComparer(sink, checkpoint)
        comparer.compare(before, after, field)


def _as_written(node: Node) -> dict[str, Any]:
    """The values a node admits, as a schema (a lifted node's branches are its own
    constraints split up: their union, ``anyOf``)."""
    if not node.lifted:
        return node.schema
    return {("anyOf" if k in ("anyOf", "oneOf") else k): v for k, v in node.schema.items()}


INPUT = SchemaFamily("input")
OUTPUT = SchemaFamily("output")
