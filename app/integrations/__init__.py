"""Integrations with MCP server frameworks. Each module imports its framework itself, so
``app`` imports without any of them (they are optional extras: ``mcp-governance[mcp]``)."""
