"""A schema rule family: the table that turns the shared walk's kinds of change into the
family's own rules (input and output differ only in this table: the direction flips)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.diff.emitter import Emitter, Scope
from app.diff.schema_compare import Pair, SchemaComparer
from app.diff.schema_effective import Node

Choice = str | Callable[[dict[str, Any]], tuple[str, str]]
"""A rule id, or a function of the change's facts giving (rule id, variant)."""


@dataclass(frozen=True)
class SchemaFamily:
    direction: str
    table: dict[str, Choice]

    def compare(self, emitter: Emitter, scope: Scope, before: Node, after: Node, field: str) -> None:
        """Walk two schemas and emit this family's deltas."""

        def sink(kind: str, pair: Pair, at: str, before: str | None, after: str | None, **facts: Any) -> None:
            choice = self.table.get(kind)
            if choice is None:
                rule_id, when = f"{self.direction}.unclassified", ""
                facts.setdefault("detail", kind.replace(".", " "))
            elif isinstance(choice, str):
                rule_id, when = choice, ""
            else:
                rule_id, when = choice(facts)
            facts.pop("name", None)
            emitter.emit(rule_id, scope, field=pair.field, path=at, before=before, after=after, when=when,
                         name=pair.name, kind=kind, **facts)

        SchemaComparer(sink).compare(before, after, field)
