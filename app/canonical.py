"""Canonical forms and sha256 digests (DESIGN.md "The lockfile").

A digest is ``sha256:<hex>`` over canonical JSON (sorted keys, no whitespace, UTF-8) of a
normalised form in which ``required`` and ``type`` lists are sets. A server's digest is
taken over its sorted ``name:digest`` lines, one per line (newline-terminated); prompts,
resources and resource templates add lines prefixed ``prompt:``, ``resource:`` and
``resource-template:``. No lines (an empty surface) gives the digest of the empty string.
Timestamps, server version and source format are never part of a digest.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from app.jsonio import canonical_json
from app.jsontypes import JSON
from app.schemas import normalize

if TYPE_CHECKING:
    from app.model import Prompt, Resource, Surface, Tool


def sha256_digest(data: str | bytes) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def digest_of(value: JSON) -> str:
    """The digest of any JSON value's canonical form."""
    return sha256_digest(canonical_json(value))


def tool_form(tool: Tool) -> JSON:
    """The normalised form a tool's digest is taken over."""
    wire = tool.to_mcp()
    if not tool.sets_sorted:
        for key in ("inputSchema", "outputSchema"):
            if key in wire:
                wire[key] = normalize(wire[key])
    if tool.fusion is not None:
        return {"tool": wire, "fusion": tool.fusion}
    return wire


def tool_digest(tool: Tool) -> str:
    return digest_of(tool_form(tool))


def prompt_digest(prompt: Prompt) -> str:
    wire = prompt.to_mcp()
    if "arguments" in wire:
        wire["arguments"] = sorted(wire["arguments"], key=lambda argument: argument["name"])
    return digest_of(wire)


def resource_digest(resource: Resource) -> str:
    return digest_of(resource.to_mcp())


def surface_lines(surface: Surface) -> list[str]:
    """The sorted lines a server digest is taken over."""
    lines = [f"{name}:{tool.digest}" for name, tool in surface.tools.items()]
    lines += [f"prompt:{name}:{prompt.digest}" for name, prompt in surface.prompts.items()]
    lines += [f"resource:{uri}:{resource.digest}" for uri, resource in surface.resources.items()]
    lines += [
        f"resource-template:{uri}:{resource.digest}" for uri, resource in surface.resource_templates.items()
    ]
    return sorted(lines)


def surface_digest(surface: Surface) -> str:
    return sha256_digest("".join(line + "\n" for line in surface_lines(surface)))
