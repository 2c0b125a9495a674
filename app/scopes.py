"""The token scopes, kept apart from the config reader so ``mcp-governance token --help``
can list them without loading it."""

SCOPES = ("read", "report", "lock", "approve", "admin")

__all__ = ["SCOPES"]
