"""The surface of an MCP server: what a model can see and call.

Plain frozen dataclasses; no I/O. Fields the readers do not know are kept in ``extra``
(never dropped), and digests are computed once, on first use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from app.jsontypes import JSON
from app.schemas import ActionBranch, split_actions


@dataclass(frozen=True)
class Action:
    """One action of a grouped tool (RULES.md "Actions").

    From a discriminated union: ``schema`` is that branch's input schema. From a Vurb /
    MCP Fusion lockfile, only the name is known and ``schema`` is None.
    """

    name: str
    discriminator: str | None = None
    keyword: str | None = None
    index: int | None = None
    schema: JSON = None

    @classmethod
    def from_branch(cls, branch: ActionBranch) -> Action:
        return cls(branch.name, branch.discriminator, branch.keyword, branch.index, branch.schema)


@dataclass(frozen=True)
class Tool:
    """One tool as ``tools/list`` describes it (any spec revision)."""

    name: str
    input_schema: JSON
    """The inputSchema object. None only for tools read from a Vurb / MCP Fusion lockfile,
    which keeps a digest of the schema instead of the schema."""
    title: str | None = None
    description: str | None = None
    annotations: dict[str, JSON] | None = None
    icons: list[JSON] | None = None
    meta: dict[str, JSON] | None = None
    """The tool's ``_meta`` object."""
    execution: dict[str, JSON] | None = None
    output_schema: dict[str, JSON] | None = None
    extra: dict[str, JSON] = field(default_factory=dict)
    """Fields this version of the reader does not know, kept verbatim."""
    fusion: dict[str, JSON] | None = None
    """The tool's Vurb / MCP Fusion lockfile entry (surface, behavior, tokenEconomics,
    entitlements and its own integrityDigest), kept for the parity rules."""
    sets_sorted: bool = field(default=False, compare=False, repr=False)
    """Set by the reader when no ``required``/``type`` list in the tool is out of order:
    its schemas are already in normal form, so the digest skips normalising them."""

    @cached_property
    def actions(self) -> dict[str, Action]:
        """Actions of a grouped tool, by name; empty for a plain tool."""
        branches = split_actions(self.input_schema)
        if branches:
            return {branch.name: Action.from_branch(branch) for branch in branches}
        declared = ((self.fusion or {}).get("surface") or {}).get("actions")
        if self.input_schema is None and isinstance(declared, list):
            return {str(name): Action(str(name)) for name in declared}
        return {}

    def to_mcp(self) -> dict[str, JSON]:
        """The tool as it travels in a ``tools/list`` result."""
        wire: dict[str, JSON] = {"name": self.name}
        optional = (
            ("title", self.title),
            ("description", self.description),
            ("inputSchema", self.input_schema),
            ("outputSchema", self.output_schema),
            ("annotations", self.annotations),
            ("icons", self.icons),
            ("_meta", self.meta),
            ("execution", self.execution),
        )
        wire.update((key, value) for key, value in optional if value is not None)
        wire.update(self.extra)
        return wire

    @cached_property
    def digest(self) -> str:
        from app.canonical import tool_digest

        return tool_digest(self)


@dataclass(frozen=True)
class PromptArgument:
    name: str
    description: str | None = None
    required: bool | None = None
    extra: dict[str, JSON] = field(default_factory=dict)

    def to_mcp(self) -> dict[str, JSON]:
        wire: dict[str, JSON] = {"name": self.name}
        if self.description is not None:
            wire["description"] = self.description
        if self.required is not None:
            wire["required"] = self.required
        wire.update(self.extra)
        return wire


@dataclass(frozen=True)
class Prompt:
    name: str
    title: str | None = None
    description: str | None = None
    arguments: tuple[PromptArgument, ...] = ()
    extra: dict[str, JSON] = field(default_factory=dict)

    def to_mcp(self) -> dict[str, JSON]:
        wire: dict[str, JSON] = {"name": self.name}
        if self.title is not None:
            wire["title"] = self.title
        if self.description is not None:
            wire["description"] = self.description
        if self.arguments:
            wire["arguments"] = [argument.to_mcp() for argument in self.arguments]
        wire.update(self.extra)
        return wire

    @cached_property
    def digest(self) -> str:
        from app.canonical import prompt_digest

        return prompt_digest(self)


@dataclass(frozen=True)
class Resource:
    """A resource (keyed by ``uri``) or, with ``template=True``, a resource template
    (keyed by ``uriTemplate``)."""

    uri: str
    name: str | None = None
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    template: bool = False
    extra: dict[str, JSON] = field(default_factory=dict)

    def to_mcp(self) -> dict[str, JSON]:
        wire: dict[str, JSON] = {"uriTemplate" if self.template else "uri": self.uri}
        optional = (
            ("name", self.name),
            ("title", self.title),
            ("description", self.description),
            ("mimeType", self.mime_type),
        )
        wire.update((key, value) for key, value in optional if value is not None)
        wire.update(self.extra)
        return wire

    @cached_property
    def digest(self) -> str:
        from app.canonical import resource_digest

        return resource_digest(self)


@dataclass(frozen=True)
class Surface:
    """Everything one MCP server exposes, at one moment."""

    server: str | None = None
    server_version: str | None = None
    source_format: str = "mcp"
    protocol_version: str | None = None
    tools: dict[str, Tool] = field(default_factory=dict)
    prompts: dict[str, Prompt] = field(default_factory=dict)
    resources: dict[str, Resource] = field(default_factory=dict)
    resource_templates: dict[str, Resource] = field(default_factory=dict)
    server_info: dict[str, JSON] | None = None
    generated_at: str | None = None
    """When a lockfile was written; never part of a digest."""
    warnings: tuple[str, ...] = field(default=(), compare=False)
    """What the reader had to assume to read the input (a spec-breaking schema, read as
    clients read it), one line each, for the faces to show; never part of a digest."""

    @cached_property
    def integrity_digest(self) -> str:
        from app.canonical import surface_digest

        _ = self.sorted_tool_names  # computed with the digest: the unchanged check is then O(1)
        return surface_digest(self)

    @cached_property
    def sorted_tool_names(self) -> tuple[str, ...]:
        """The tool names, sorted; computed once, beside the digest (which sorts its lines
        anyway), so a diff of two surfaces with equal known digests does no work that grows
        with the surface."""
        return tuple(sorted(self.tools))

    def to_mcp(self) -> dict[str, JSON]:
        """The surface as one ``tools/list``-style result (prompts and resources beside)."""
        result: dict[str, JSON] = {"tools": [tool.to_mcp() for tool in self.tools.values()]}
        if self.prompts:
            result["prompts"] = [prompt.to_mcp() for prompt in self.prompts.values()]
        if self.resources:
            result["resources"] = [resource.to_mcp() for resource in self.resources.values()]
        if self.resource_templates:
            result["resourceTemplates"] = [resource.to_mcp() for resource in self.resource_templates.values()]
        if self.server_info is not None:
            result["serverInfo"] = self.server_info
        if self.protocol_version is not None:
            result["protocolVersion"] = self.protocol_version
        return result
