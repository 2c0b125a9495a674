"""The one JSON type, re-exported from :mod:`mcp_governance.jsontypes` (the client uses it too)."""

from mcp_governance.jsontypes import JSON

__all__ = ["JSON"]
