"""Moved to the light client: :mod:`mcp_governance.integrations` (``mcp_sdk`` re-exports it)."""
