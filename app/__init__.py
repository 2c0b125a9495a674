"""mcp-governance: governs the tool contracts of MCP servers.

The engine is pure (no I/O): read a surface, digest it, lock it, diff it. The CLI
(:mod:`app.cli`) and the HTTP API are thin faces over these functions.
"""

from app.ingest.load import load_surface
from app.lockfile import lock_document, write_surface
from app.model import Action, Prompt, PromptArgument, Resource, Surface, Tool
from app.problems import InputError

__version__ = "0.1.0"

__all__ = [
    "Action",
    "InputError",
    "Prompt",
    "PromptArgument",
    "Resource",
    "Surface",
    "Tool",
    "load_surface",
    "lock_document",
    "write_surface",
]
