"""Collects deltas for one diff: looks up the rule, renders its templates, and keeps one
delta per identity (rule + location, :func:`app.diff.model.delta_id`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.diff.model import Delta
from app.diff.registry import Rule, lookup


@dataclass(frozen=True)
class Scope:
    """Where deltas land: the tool and, for a grouped tool's branch, the action."""

    tool: str | None
    action: str | None = None


@dataclass
class Emitter:
    deltas: list[Delta] = field(default_factory=list)
    _seen: set[str] = field(default_factory=set)

    def emit(
        self,
        rule_id: str,
        scope: Scope,
        *,
        field: str,
        path: str,
        before: str | None = None,
        after: str | None = None,
        when: str = "",
        **params: Any,
    ) -> Delta:
        """Render the rule's templates into one delta and keep it (once per identity)."""
        return self.add(self.make(rule_id, scope, field=field, path=path, before=before, after=after, when=when,
                                  **params))

    def make(
        self,
        rule_id: str,
        scope: Scope,
        *,
        field: str,
        path: str,
        before: str | None = None,
        after: str | None = None,
        when: str = "",
        **params: Any,
    ) -> Delta:
        """The delta :meth:`emit` would keep, not kept yet."""
        entry: Rule = lookup(rule_id, when)
        values = {"field": field, "before": before, "after": after, "tool": scope.tool,
                  "action": scope.action, **params}
        delta = Delta(
            rule=entry.id,
            severity=entry.severity,
            category=entry.category,
            tool=scope.tool,
            action=scope.action,
            field=field,
            path=path,
            description=entry.describe(values),
            before=before,
            after=after,
            hint=entry.suggest(values),
        )
        return delta

    def add(self, delta: Delta) -> Delta:
        if delta.id not in self._seen:
            self._seen.add(delta.id)
            self.deltas.append(delta)
        return delta

    def extend(self, deltas: list[Delta]) -> None:
        for delta in deltas:
            if delta.id not in self._seen:
                self._seen.add(delta.id)
                self.deltas.append(delta)
