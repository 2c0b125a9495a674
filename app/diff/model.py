"""What ContractDiff produces: deltas, and the result that groups them.

A delta is one change, graded by what it does to a model that learned the old contract
(RULES.md). The JSON shape of :meth:`DiffResult.to_json` is the one DESIGN.md documents.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from enum import Enum
from functools import cached_property
from typing import Protocol

from app.budget import checkpoint
from app.jsontypes import JSON


class Severity(str, Enum):  # noqa: UP042 - StrEnum would change str() and format() of members
    BREAKING = "BREAKING"
    RISKY = "RISKY"
    SAFE = "SAFE"
    COSMETIC = "COSMETIC"

    @property
    def rank(self) -> int:
        """0 for BREAKING ... 3 for COSMETIC: sorts the worst first."""
        return SEVERITY_ORDER.index(self)

    def at_least(self, gate: Severity) -> bool:
        """True when this severity is as bad as ``gate`` or worse."""
        return self.rank <= gate.rank

    @classmethod
    def parse(cls, value: str) -> Severity:
        try:
            return cls(value.upper())
        except ValueError:
            raise ValueError(f"unknown severity {value!r} (one of: {', '.join(s.value for s in cls)})") from None


SEVERITY_ORDER = (Severity.BREAKING, Severity.RISKY, Severity.SAFE, Severity.COSMETIC)


def delta_id(rule: str, tool: str | None, action: str | None, field: str, path: str, before: str | None,
             after: str | None) -> str:
    """Stable id: the first 12 hex chars of sha256(rule|tool|action|field|path|before|after).

    Identity is the rule and where the change is (tool, action, the argument's field and
    the schema path): five arguments that become required are five deltas even though
    their ``required`` keyword and their before/after text are the same."""
    key = "|".join((rule, tool or "", action or "", field, path, before or "", after or ""))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class Witness:
    """A value that shows a delta is real, checked with jsonschema, or why there is none.

    Input: an argument object the old schema accepts and the new one refuses. Output: a
    result the new schema allows and the old reader refuses."""

    found: bool
    value: JSON = None
    reason: str = ""

    def to_json(self) -> dict[str, JSON]:
        if self.found:
            return {"found": True, "value": self.value}
        return {"found": False, "reason": self.reason}

    @classmethod
    def from_json(cls, data: dict[str, JSON]) -> Witness:
        if data.get("found"):
            return cls(True, data.get("value"))
        return cls(False, reason=str(data.get("reason") or ""))


class WitnessSource(Protocol):
    def build(self) -> Witness:
        ...


@dataclass(frozen=True)
class KnownWitness:
    """A witness already built (read back from a stored result)."""

    witness: Witness

    def build(self) -> Witness:
        return self.witness


@dataclass(frozen=True)
class Delta:
    rule: str
    severity: Severity
    category: str
    tool: str | None
    action: str | None
    field: str
    path: str
    description: str
    before: str | None = None
    after: str | None = None
    hint: str | None = None
    evidence: WitnessSource | None = dataclass_field(default=None, compare=False, repr=False)
    """What a witness is built from (schema deltas that may refuse or admit values)."""

    @property
    def id(self) -> str:
        return delta_id(self.rule, self.tool, self.action, self.field, self.path, self.before, self.after)

    @cached_property
    def witness(self) -> Witness | None:
        """Built on first use: a diff pays nothing for witnesses no report shows."""
        return None if self.evidence is None else self.evidence.build()

    def sort_key(self) -> tuple[int, str, str, str, str, str]:
        """Severity (worst first), then tool, action, path; rule and id break ties."""
        return (self.severity.rank, self.tool or "", self.action or "", self.path, self.rule, self.id)

    def to_json(self, witness: bool = True) -> dict[str, JSON]:
        checkpoint()  # rendering counts against the request's work budget (app.budget)
        shown = self.witness if witness else None
        return {
            "id": self.id,
            "rule": self.rule,
            "severity": self.severity.value,
            "category": self.category,
            "tool": self.tool,
            "action": self.action,
            "field": self.field,
            "path": self.path,
            "description": self.description,
            "before": self.before,
            "after": self.after,
            "hint": self.hint,
            "witness": shown.to_json() if shown is not None else None,
        }


@dataclass(frozen=True)
class IgnoredDelta:
    """A delta a policy ignore matched: still reported, never silently dropped."""

    delta: Delta
    reason: str
    expires: str | None = None

    def to_json(self, witness: bool = True) -> dict[str, JSON]:
        return {**self.delta.to_json(witness), "reason": self.reason, "expires": self.expires}


@dataclass(frozen=True)
class ToolChanges:
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()

    def to_json(self) -> dict[str, list[str]]:
        return {
            "added": list(self.added),
            "removed": list(self.removed),
            "changed": list(self.changed),
            "unchanged": list(self.unchanged),
        }


@dataclass(frozen=True)
class DiffResult:
    server: str | None
    before_digest: str
    after_digest: str
    tools: ToolChanges
    deltas: tuple[Delta, ...] = ()
    ignored: tuple[IgnoredDelta, ...] = ()
    before_version: str | None = None
    after_version: str | None = None

    @property
    def summary(self) -> dict[str, int]:
        counts = {severity.value: 0 for severity in SEVERITY_ORDER}
        for delta in self.deltas:
            counts[delta.severity.value] += 1
        return counts

    @property
    def max_severity(self) -> Severity | None:
        return min((delta.severity for delta in self.deltas), key=lambda s: s.rank, default=None)

    @property
    def is_backwards_compatible(self) -> bool:
        return all(delta.severity is not Severity.BREAKING for delta in self.deltas)

    @property
    def unchanged(self) -> bool:
        return self.before_digest == self.after_digest

    def fails(self, gate: Severity | None) -> bool:
        """Whether any remaining delta is at or above ``gate`` (None: never fails)."""
        return gate is not None and any(delta.severity.at_least(gate) for delta in self.deltas)

    @property
    def tool_names(self) -> set[str]:
        """Every tool the result names: added, removed, changed, unchanged, or only in a delta."""
        tools = self.tools
        names = {*tools.added, *tools.removed, *tools.changed, *tools.unchanged}
        names.update(d.tool for d in self.deltas if d.tool is not None)
        names.update(i.delta.tool for i in self.ignored if i.delta.tool is not None)
        return names

    def for_tool(self, tool: str) -> list[Delta]:
        return [delta for delta in self.deltas if delta.tool == tool]

    def to_json(self, witnesses: bool = True) -> dict[str, JSON]:
        """The documented shape; ``witnesses=False`` leaves witnesses out (null) for callers
        that do not show them and should not pay for building them."""
        max_severity = self.max_severity
        return {
            "server": self.server,
            "maxSeverity": max_severity.value if max_severity else None,
            "isBackwardsCompatible": self.is_backwards_compatible,
            "summary": self.summary,
            "tools": self.tools.to_json(),
            "deltas": [delta.to_json(witnesses) for delta in self.deltas],
            "ignored": [ignored.to_json(witnesses) for ignored in self.ignored],
        }
