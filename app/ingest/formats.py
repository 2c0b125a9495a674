"""The input formats (``--input-format``), kept apart from the readers so a command's
``--help`` can list them without loading any reader."""

FORMATS = ("mcp", "mcp-pages", "fastmcp", "vurb", "mcp-fusion", "lockfile", "lockfile-json")

__all__ = ["FORMATS"]
