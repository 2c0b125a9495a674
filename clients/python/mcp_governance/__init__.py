"""mcp-governance-client: what an MCP server or a release pipeline needs from mcp-governance.

- The ``<tool_error>`` wire contract (:mod:`mcp_governance.errors`): standard library only,
  a few milliseconds to import.
- :class:`GovernanceClient` (:mod:`mcp_governance.client`, needs httpx) and
  :func:`govern` (:mod:`mcp_governance.integrations`, needs the MCP framework it is given):
  imported on first use, so ``from mcp_governance import tool_error`` loads neither.

    from mcp_governance import govern
    govern(server, url="http://127.0.0.1:8000")
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_governance.client import GovernanceClient, GovernanceError
    from mcp_governance.errors import (
        CanonicalCode,
        ContractAwareness,
        ContractChange,
        ErrorBuilder,
        ErrorCode,
        GovernanceToolError,
        Severity,
        ToolError,
        ToolErrorEnvelope,
        ToolErrorInfo,
        error,
        error_from_exception,
        parse_tool_error,
        raise_for_tool_error,
        to_call_tool_result,
        tool_error,
        unknown_tool_error,
        with_warning,
    )
    from mcp_governance.integrations import Governed, govern

__version__ = "0.1.0"

_ERRORS = (
    "CanonicalCode", "ContractAwareness", "ContractChange", "ErrorBuilder", "ErrorCode", "GovernanceToolError",
    "Severity", "ToolError", "ToolErrorEnvelope", "ToolErrorInfo", "error", "error_from_exception",
    "parse_tool_error", "raise_for_tool_error", "to_call_tool_result", "tool_error", "unknown_tool_error",
    "with_warning",
)
_LAZY = {
    **dict.fromkeys(_ERRORS, "mcp_governance.errors"),
    "GovernanceClient": "mcp_governance.client",
    "GovernanceError": "mcp_governance.client",
    "Governed": "mcp_governance.integrations",
    "govern": "mcp_governance.integrations",
}


def __getattr__(name: str) -> Any:
    """Every name is imported on first use: a submodule (``mcp_governance.names``, by the
    service's command line) never pays for the others, and the client and integrations,
    which need httpx or a framework, load only when asked for."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mcp_governance' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "CanonicalCode",
    "ContractAwareness",
    "ContractChange",
    "ErrorBuilder",
    "ErrorCode",
    "GovernanceClient",
    "GovernanceError",
    "GovernanceToolError",
    "Governed",
    "Severity",
    "ToolError",
    "ToolErrorEnvelope",
    "ToolErrorInfo",
    "error",
    "error_from_exception",
    "govern",
    "parse_tool_error",
    "raise_for_tool_error",
    "to_call_tool_result",
    "tool_error",
    "unknown_tool_error",
    "with_warning",
]
