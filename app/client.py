"""The Python client of the service: re-exported from :mod:`mcp_governance.client`, the one copy."""

from mcp_governance.client import GovernanceClient, GovernanceError, LockResult

__all__ = ["GovernanceClient", "GovernanceError", "LockResult"]
