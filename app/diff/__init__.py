"""ContractDiff: the semantic diff of two MCP surfaces (RULES.md is the normative table).

Names are imported on first use (PEP 562): ``app.diff.model`` (Severity, DiffResult) or a
report module can be imported without loading the engine and every rule family.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.diff.engine import diff
    from app.diff.model import Delta, DiffResult, IgnoredDelta, Severity, ToolChanges
    from app.diff.registry import REGISTRY, Rule, lookup, rule_ids

_EXPORTS: dict[str, str] = {
    "diff": "app.diff.engine",
    "Delta": "app.diff.model",
    "DiffResult": "app.diff.model",
    "IgnoredDelta": "app.diff.model",
    "Severity": "app.diff.model",
    "ToolChanges": "app.diff.model",
    "REGISTRY": "app.diff.registry",
    "Rule": "app.diff.registry",
    "lookup": "app.diff.registry",
    "rule_ids": "app.diff.registry",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'app.diff' has no attribute {name!r}")
    if module == "app.diff.registry":
        importlib.import_module("app.diff.rules")  # the registry is whole once every family registered
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = ["REGISTRY", "Delta", "DiffResult", "IgnoredDelta", "Rule", "Severity", "ToolChanges", "diff", "lookup",
           "rule_ids"]
