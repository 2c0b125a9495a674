"""The ``<tool_error>`` wire contract, for code that imports it from the service package.

The one copy lives in the light client distribution (:mod:`mcp_governance.errors`), which
MCP servers install without the service; this module re-exports it unchanged.
"""

from mcp_governance.errors import *  # noqa: F403 - a re-export of the whole contract
from mcp_governance.errors import __all__ as __all__
