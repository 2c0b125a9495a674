"""Spec-breaking surfaces read the way MCP clients read them, each repair said in one line.

Published servers break the spec in ways clients forgive. The one forgiven here: a tool
schema whose root says nothing of its type (no ``type``, ``$ref`` or composition keyword;
filesystem 2025.3.28 to 2025.8.21 publish ``{"$schema": "...draft-07..."}`` alone) is read
as ``"type": "object"``, which is what the spec requires, what clients assume, and what the
model is shown. Without it the diff would
call the server's later fix (adding the ``type``) BREAKING. Every reader of MCP results goes
through here, so a file and a live capture of the same server give the same surface and the
same warnings.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.model import Surface, Tool

READ_AS = "object"
# Keywords through which a schema can say what type it is: a root with any of them is left as is
# (a root `$ref` to an object definition, a union of object branches for a grouped tool).
TYPE_SOURCES = frozenset({"type", "$ref", "$dynamicRef", "allOf", "anyOf", "oneOf", "not", "if", "const", "enum"})


def schema_as_clients_read_it(schema: Any) -> Any:
    """A tool's input or output schema as clients read it: a root that says nothing of its
    type gets ``"type": "object"``; anything else is returned as is."""
    if isinstance(schema, dict) and not TYPE_SOURCES & schema.keys():
        return {**schema, "type": READ_AS}
    return schema


def _repaired(tool: Tool) -> tuple[Tool, list[str]]:
    warnings: list[str] = []
    for label, schema in (("inputSchema", tool.input_schema), ("outputSchema", tool.output_schema)):
        read = schema_as_clients_read_it(schema)
        if read is not schema:
            tool = replace(tool, input_schema=read) if label == "inputSchema" else replace(tool, output_schema=read)
            warnings.append(f'tool {tool.name}: {label} has no "type" (read as "{READ_AS}", as MCP clients do)')
    return tool, warnings


def read_as_clients_do(surface: Surface) -> Surface:
    """``surface`` with its spec-breaking schemas repaired, and one warning per repair."""
    warnings: list[str] = []
    tools: dict[str, Tool] = {}
    for name, tool in surface.tools.items():
        tools[name], said = _repaired(tool)
        warnings.extend(said)
    if not warnings:
        return surface
    return replace(surface, tools=tools, warnings=(*surface.warnings, *warnings))


__all__ = ["read_as_clients_do", "schema_as_clients_read_it"]
