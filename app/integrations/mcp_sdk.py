"""Moved: ``govern`` lives in the light client, :mod:`mcp_governance.integrations`, and
covers every Python MCP framework. Kept so ``from app.integrations.mcp_sdk import govern``
(the 0.1.0 spelling) still works where the service distribution is installed."""

from mcp_governance.integrations import DEFAULT_BUDGET, Governed, govern
from mcp_governance.integrations.mcp_v2 import as_call_tool_result

__all__ = ["DEFAULT_BUDGET", "Governed", "as_call_tool_result", "govern"]
