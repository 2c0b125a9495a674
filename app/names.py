"""The one name check (:mod:`mcp_governance.names`, shared with the light client),
re-exported for the service: names match whole (servers, tools, actions, tokens, digests)."""

from mcp_governance.names import (
    SERVER_NAME,
    SERVER_NAME_PATTERN,
    SERVER_NAME_RULE,
    full_match,
    is_server_name,
    server_name_problem,
)

__all__ = ["SERVER_NAME", "SERVER_NAME_PATTERN", "SERVER_NAME_RULE", "full_match", "is_server_name",
           "server_name_problem"]
