"""A DiffResult back from its JSON (as the store keeps live results), without diffing again."""

from __future__ import annotations

from app.diff.model import Delta, DiffResult, IgnoredDelta, KnownWitness, Severity, ToolChanges, Witness
from app.jsontypes import JSON


def delta_from_json(data: dict[str, JSON]) -> Delta:
    witness = data.get("witness")
    return Delta(
        rule=data["rule"],
        severity=Severity(data["severity"]),
        category=data["category"],
        tool=data.get("tool"),
        action=data.get("action"),
        field=data["field"],
        path=data["path"],
        description=data["description"],
        before=data.get("before"),
        after=data.get("after"),
        hint=data.get("hint"),
        evidence=KnownWitness(Witness.from_json(witness)) if isinstance(witness, dict) else None,
    )


def result_from_json(data: dict[str, JSON], before_digest: str = "", after_digest: str = "") -> DiffResult:
    """The inverse of :meth:`DiffResult.to_json` (digests are not part of that shape)."""
    tools = data.get("tools") or {}
    return DiffResult(
        server=data.get("server"),
        before_digest=before_digest,
        after_digest=after_digest,
        tools=ToolChanges(*(tuple(tools.get(key, ())) for key in ("added", "removed", "changed", "unchanged"))),
        deltas=tuple(delta_from_json(item) for item in data.get("deltas", ())),
        ignored=tuple(
            IgnoredDelta(delta_from_json(item), item.get("reason", ""), item.get("expires"))
            for item in data.get("ignored", ())
        ),
    )
