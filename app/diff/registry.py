"""The one rule registry: every rule of RULES.md, as data.

Each family module (``app/diff/rules/*.py``) declares its rules with :func:`rule` and
emits deltas through an :class:`Emitter` by rule id (and, where RULES.md grades one
change two ways, a ``when`` variant). Adding a rule = one :func:`rule` entry + the code
that emits it. Templates are ``str.format`` strings over the parameters the emitter gets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.diff.model import Severity

BREAKING, RISKY, SAFE, COSMETIC = Severity.BREAKING, Severity.RISKY, Severity.SAFE, Severity.COSMETIC


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    category: str
    direction: str
    """``input`` (what the model sends), ``output`` (what it receives: severities flip) or
    ``surface`` (tool-level facts, prompts, resources, security, parity)."""
    message: str
    hint: str = ""
    when: str = ""
    """The variant, for rules RULES.md grades differently by circumstance."""
    summary: str = ""
    """One line for humans and SARIF rule descriptions."""

    def describe(self, params: dict[str, Any]) -> str:
        return self.message.format_map(_Params(params))

    def suggest(self, params: dict[str, Any]) -> str | None:
        return self.hint.format_map(_Params(params)) if self.hint else None


class _Params(dict):
    """Missing template parameters render as ``?`` instead of raising."""

    def __missing__(self, key: str) -> str:
        return "?"


REGISTRY: dict[tuple[str, str], Rule] = {}


def rule(
    rule_id: str,
    severity: Severity,
    category: str,
    direction: str,
    message: str,
    hint: str = "",
    *,
    when: str = "",
    summary: str = "",
) -> Rule:
    """Register one rule (one row of the RULES.md tables)."""
    key = (rule_id, when)
    if key in REGISTRY:
        raise ValueError(f"rule {rule_id!r} ({when or 'default'}) is registered twice")
    entry = Rule(rule_id, severity, category, direction, message, hint, when, summary or message)
    REGISTRY[key] = entry
    return entry


def lookup(rule_id: str, when: str = "") -> Rule:
    try:
        return REGISTRY[(rule_id, when)]
    except KeyError:
        raise KeyError(f"no rule {rule_id!r} with variant {when!r} is registered") from None


def rule_ids() -> list[str]:
    """Every distinct rule id, sorted (SARIF lists them as its rules)."""
    return sorted({rule_id for rule_id, _ in REGISTRY})


def variants(rule_id: str) -> list[Rule]:
    return [entry for (rid, _), entry in sorted(REGISTRY.items()) if rid == rule_id]
