"""mcp-governance: governs the tool contracts of MCP servers.

The engine is pure (no I/O): read a surface, digest it, lock it, diff it, render what a
model reads. The CLI (:mod:`app.cli`) and the HTTP API (:mod:`app.api`) are thin faces
over these functions.

    from app import load_surface, diff, render_awareness
    result = diff(load_surface("lockfiles/billing.lock.toml"), load_surface("tools.json"))
    print(render_awareness(result, "billing", "get_invoice"))

Importing ``app`` loads nothing else: each name is imported on first use (PEP 562), so
``mcp-governance --help`` and a small diff pay only for what they use, and nothing here
pulls the engine, deepdiff or jsonschema in by itself.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from app.awareness import render_awareness, render_validation_error
    from app.diff import Delta, DiffResult, Severity, diff
    from app.ingest.load import load_surface
    from app.lockfile import lock_document, write_surface
    from app.model import Action, Prompt, PromptArgument, Resource, Surface, Tool
    from app.policy import Policy, load_policy
    from app.problems import InputError
    from app.validation import Problem, validate_arguments
    from mcp_governance.errors import (
        CanonicalCode,
        ContractAwareness,
        ContractChange,
        ErrorBuilder,
        ErrorCode,
        GovernanceToolError,
        ToolError,
        ToolErrorEnvelope,
        ToolErrorInfo,
        error,
        error_from_exception,
        parse_tool_error,
        raise_for_tool_error,
        to_call_tool_result,
        tool_error,
        with_warning,
    )
    from mcp_governance.errors import Severity as ErrorSeverity

# name -> (module, attribute)
_EXPORTS: dict[str, tuple[str, str]] = {
    "Action": ("app.model", "Action"),
    "CanonicalCode": ("mcp_governance.errors", "CanonicalCode"),
    "ContractAwareness": ("mcp_governance.errors", "ContractAwareness"),
    "ContractChange": ("mcp_governance.errors", "ContractChange"),
    "Delta": ("app.diff", "Delta"),
    "DiffResult": ("app.diff", "DiffResult"),
    "ErrorBuilder": ("mcp_governance.errors", "ErrorBuilder"),
    "ErrorCode": ("mcp_governance.errors", "ErrorCode"),
    "ErrorSeverity": ("mcp_governance.errors", "Severity"),
    "GovernanceToolError": ("mcp_governance.errors", "GovernanceToolError"),
    "InputError": ("app.problems", "InputError"),
    "Policy": ("app.policy", "Policy"),
    "Problem": ("app.validation", "Problem"),
    "Prompt": ("app.model", "Prompt"),
    "PromptArgument": ("app.model", "PromptArgument"),
    "Resource": ("app.model", "Resource"),
    "Severity": ("app.diff", "Severity"),
    "Surface": ("app.model", "Surface"),
    "Tool": ("app.model", "Tool"),
    "ToolError": ("mcp_governance.errors", "ToolError"),
    "ToolErrorEnvelope": ("mcp_governance.errors", "ToolErrorEnvelope"),
    "ToolErrorInfo": ("mcp_governance.errors", "ToolErrorInfo"),
    "diff": ("app.diff", "diff"),
    "error": ("mcp_governance.errors", "error"),
    "error_from_exception": ("mcp_governance.errors", "error_from_exception"),
    "load_policy": ("app.policy", "load_policy"),
    "load_surface": ("app.ingest.load", "load_surface"),
    "lock_document": ("app.lockfile", "lock_document"),
    "parse_tool_error": ("mcp_governance.errors", "parse_tool_error"),
    "raise_for_tool_error": ("mcp_governance.errors", "raise_for_tool_error"),
    "render_awareness": ("app.awareness", "render_awareness"),
    "render_validation_error": ("app.awareness", "render_validation_error"),
    "to_call_tool_result": ("mcp_governance.errors", "to_call_tool_result"),
    "tool_error": ("mcp_governance.errors", "tool_error"),
    "validate_arguments": ("app.validation", "validate_arguments"),
    "with_warning": ("mcp_governance.errors", "with_warning"),
    "write_surface": ("app.lockfile", "write_surface"),
}


class _App(types.ModuleType):
    """``app.diff`` stays the diff function, as when this module imported everything: the
    import system would otherwise bind the ``app.diff`` subpackage to that name the first
    time any ``app.diff.*`` module is imported (``sys.modules`` still holds the package)."""

    @property
    def diff(self) -> Any:
        from app.diff.engine import diff

        return diff

    @diff.setter
    def diff(self, value: Any) -> None:
        """The import system recording the subpackage: the function keeps the name."""


sys.modules[__name__].__class__ = _App


def __getattr__(name: str) -> Any:
    try:
        module, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'app' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


__all__ = [
    "Action",
    "CanonicalCode",
    "ContractAwareness",
    "ContractChange",
    "Delta",
    "DiffResult",
    "ErrorBuilder",
    "ErrorCode",
    "ErrorSeverity",
    "GovernanceToolError",
    "InputError",
    "Policy",
    "Problem",
    "Prompt",
    "PromptArgument",
    "Resource",
    "Severity",
    "Surface",
    "Tool",
    "ToolError",
    "ToolErrorEnvelope",
    "ToolErrorInfo",
    "diff",
    "error",
    "error_from_exception",
    "load_policy",
    "load_surface",
    "lock_document",
    "parse_tool_error",
    "raise_for_tool_error",
    "render_awareness",
    "render_validation_error",
    "to_call_tool_result",
    "tool_error",
    "validate_arguments",
    "with_warning",
    "write_surface",
]
