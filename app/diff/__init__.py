"""ContractDiff: the semantic diff of two MCP surfaces (RULES.md is the normative table)."""

from app.diff.engine import diff
from app.diff.model import Delta, DiffResult, IgnoredDelta, Severity, ToolChanges
from app.diff.registry import REGISTRY, Rule, lookup, rule_ids

__all__ = ["REGISTRY", "Delta", "DiffResult", "IgnoredDelta", "Rule", "Severity", "ToolChanges", "diff", "lookup",
           "rule_ids"]
