"""mcp-governance: governs the tool contracts of MCP servers.

The engine is pure (no I/O): read a surface, digest it, lock it, diff it, render what a
model reads. The CLI (:mod:`app.cli`) and the HTTP API (:mod:`app.api`) are thin faces
over these functions.

    from app import load_surface, diff, render_awareness
    result = diff(load_surface("lockfiles/billing.lock.toml"), load_surface("tools.json"))
    print(render_awareness(result, "billing", "get_invoice"))
"""

__version__ = "0.1.0"

from app.awareness import render_awareness, render_validation_error
from app.diff import Delta, DiffResult, Severity, diff
from app.errors import (
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
from app.errors import Severity as ErrorSeverity
from app.ingest.load import load_surface
from app.lockfile import lock_document, write_surface
from app.model import Action, Prompt, PromptArgument, Resource, Surface, Tool
from app.policy import Policy, load_policy
from app.problems import InputError
from app.validation import Problem, validate_arguments

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
