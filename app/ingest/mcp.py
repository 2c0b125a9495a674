"""Readers for what MCP servers answer: ``tools/list`` results of any spec revision (one
result, a bare list of tools, or several pages), with prompts, resources and resource
templates beside them, and FastMCP ``fastmcp inspect --format mcp`` manifests."""

from __future__ import annotations

from app.ingest.fields import (
    need_list,
    need_name,
    need_object,
    optional_bool,
    optional_list,
    optional_object,
    optional_str,
    rest,
    type_name,
)
from app.jsonio import check_value, scan
from app.jsontypes import JSON
from app.model import Prompt, PromptArgument, Resource, Surface, Tool
from app.problems import InputError
from app.schemas import local_ref_problems, remote_ref_problems

TOOL_FIELDS = (
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "icons",
    "_meta",
    "execution",
)
PROMPT_FIELDS = ("name", "title", "description", "arguments")
ARGUMENT_FIELDS = ("name", "description", "required")
RESOURCE_FIELDS = ("uri", "uriTemplate", "name", "title", "description", "mimeType")


def check_schema(value: JSON, where: str, refs: set[str] | None = None) -> dict[str, JSON]:
    """An MCP tool schema: a JSON object describing an object, whose ``$ref``s are all
    local and lead to a schema (``refs``: a superset of its ``$ref`` strings, when known).
    The one place surfaces are read (lock, live, diff, check, capture, lockfiles): a remote
    reference is refused here, never fetched anywhere."""
    if value is None:
        raise InputError("missing (every tool needs an input schema)", where)
    if not isinstance(value, dict):
        raise InputError(f"expected a JSON Schema object, got {type_name(value)}", where)
    declared = value.get("type")
    types = declared if isinstance(declared, list) else [declared]
    if declared is not None and "object" not in types:
        raise InputError(f"the schema must describe an object (type {declared!r})", where)
    problems = remote_ref_problems(value, refs) or local_ref_problems(value, refs)
    if problems:
        raise InputError(problems[0], where)
    return value


def parse_tool(raw: JSON, where: str) -> Tool:
    """One tool, checked whole: JSON-safe values (readers skip the document-wide check for
    tools, so this is where a tool's NaN or lone surrogate is found and named)."""
    obj = need_object(raw, where)
    found = scan(obj)
    if not found.ok:
        check_value(obj, where)
    refs = found.refs
    name = need_name(obj.get("name"), f"{where}.name")
    where = where if where.endswith(name) else f"{where} ({name})"
    output_schema = obj.get("outputSchema")
    return Tool(
        name=name,
        input_schema=check_schema(obj.get("inputSchema"), f"{where}.inputSchema", refs),
        title=optional_str(obj, "title", where),
        description=optional_str(obj, "description", where),
        annotations=optional_object(obj, "annotations", where),
        icons=optional_list(obj, "icons", where),
        meta=optional_object(obj, "_meta", where),
        execution=optional_object(obj, "execution", where),
        output_schema=None if output_schema is None else check_schema(output_schema, f"{where}.outputSchema", refs),
        extra=rest(obj, TOOL_FIELDS),
        sets_sorted=found.sets_sorted,
    )


def parse_prompt(raw: JSON, where: str) -> Prompt:
    obj = need_object(raw, where)
    name = need_name(obj.get("name"), f"{where}.name")
    where = where if where.endswith(name) else f"{where} ({name})"
    arguments: list[PromptArgument] = []
    seen: set[str] = set()
    for index, item in enumerate(optional_list(obj, "arguments", where) or []):
        at = f"{where}.arguments[{index}]"
        arg = need_object(item, at)
        arg_name = need_name(arg.get("name"), f"{at}.name")
        if arg_name in seen:
            raise InputError(f"duplicate argument name {arg_name!r}", at)
        seen.add(arg_name)
        arguments.append(
            PromptArgument(
                name=arg_name,
                description=optional_str(arg, "description", at),
                required=optional_bool(arg, "required", at),
                extra=rest(arg, ARGUMENT_FIELDS),
            )
        )
    return Prompt(
        name=name,
        title=optional_str(obj, "title", where),
        description=optional_str(obj, "description", where),
        arguments=tuple(arguments),
        extra=rest(obj, PROMPT_FIELDS),
    )


def parse_resource(raw: JSON, where: str, template: bool) -> Resource:
    obj = need_object(raw, where)
    key = "uriTemplate" if template else "uri"
    uri = need_name(obj.get(key), f"{where}.{key}")
    return Resource(
        uri=uri,
        name=optional_str(obj, "name", where),
        title=optional_str(obj, "title", where),
        description=optional_str(obj, "description", where),
        mime_type=optional_str(obj, "mimeType", where),
        template=template,
        extra=rest(obj, RESOURCE_FIELDS),
    )


class SurfaceBuilder:
    """Collects tools, prompts and resources from one or several results, refusing
    duplicates with both places named."""

    def __init__(self) -> None:
        self.tools: dict[str, Tool] = {}
        self.prompts: dict[str, Prompt] = {}
        self.resources: dict[str, Resource] = {}
        self.templates: dict[str, Resource] = {}
        self._first_seen: dict[tuple[str, str], str] = {}

    def _claim(self, kind: str, key: str, where: str) -> None:
        first = self._first_seen.setdefault((kind, key), where)
        if first != where:
            raise InputError(f"duplicate {kind} {key!r} (first at {first})", where)

    def add_result(self, result: dict[str, JSON], where: str) -> None:
        prefix = f"{where}." if where else ""
        if "tools" in result:
            for index, raw in enumerate(need_list(result["tools"], f"{prefix}tools")):
                at = f"{prefix}tools[{index}]"
                tool = parse_tool(raw, at)
                self._claim("tool name", tool.name, at)
                self.tools[tool.name] = tool
        for index, raw in enumerate(need_list(result.get("prompts") or [], f"{prefix}prompts")):
            at = f"{prefix}prompts[{index}]"
            prompt = parse_prompt(raw, at)
            self._claim("prompt name", prompt.name, at)
            self.prompts[prompt.name] = prompt
        for key, template in (("resources", False), ("resourceTemplates", True)):
            target = self.templates if template else self.resources
            for index, raw in enumerate(need_list(result.get(key) or [], f"{prefix}{key}")):
                at = f"{prefix}{key}[{index}]"
                resource = parse_resource(raw, at, template)
                self._claim("resource template" if template else "resource", resource.uri, at)
                target[resource.uri] = resource

    def build(self, **header: JSON) -> Surface:
        return Surface(
            tools=dict(sorted(self.tools.items())),
            prompts=dict(sorted(self.prompts.items())),
            resources=dict(sorted(self.resources.items())),
            resource_templates=dict(sorted(self.templates.items())),
            **header,
        )


def unwrap_jsonrpc(obj: JSON) -> JSON:
    """A JSON-RPC response (``{"jsonrpc": "2.0", "result": {...}}``) stands for its result."""
    if isinstance(obj, dict) and "jsonrpc" in obj and isinstance(obj.get("result"), dict):
        return obj["result"]
    return obj


def header_of(obj: dict[str, JSON], where: str) -> dict[str, JSON]:
    """Server name, version and protocol revision, wherever this input keeps them."""
    server_info = optional_object(obj, "serverInfo", where)
    info = server_info or {}
    name = obj.get("server") if isinstance(obj.get("server"), str) else None
    name = name or (obj.get("serverName") if isinstance(obj.get("serverName"), str) else None)
    name = name or (info.get("name") if isinstance(info.get("name"), str) else None)
    version = obj.get("version") if isinstance(obj.get("version"), str) else None
    version = version or (info.get("version") if isinstance(info.get("version"), str) else None)
    protocol = obj.get("protocolVersion") if isinstance(obj.get("protocolVersion"), str) else None
    return {"server": name, "server_version": version, "protocol_version": protocol, "server_info": server_info}


def read_result(obj: JSON, where: str, source_format: str = "mcp") -> Surface:
    """One ``tools/list`` result, a bare list of tools, or a capture that carries prompts,
    resources, resource templates and serverInfo beside the tools."""
    builder = SurfaceBuilder()
    obj = unwrap_jsonrpc(obj)
    if isinstance(obj, list):
        builder.add_result({"tools": obj}, where)
        return builder.build(source_format=source_format)
    result = need_object(obj, where or "(root)")
    if "tools" not in result:
        raise InputError('no "tools" array (expected an MCP tools/list result)', where or None)
    builder.add_result(result, where)
    return builder.build(source_format=source_format, **header_of(result, where or "(root)"))


def read_pages(pages: JSON, where: str) -> Surface:
    """Several pages of a paginated ``tools/list`` (a JSON array of results)."""
    builder = SurfaceBuilder()
    header: dict[str, JSON] = {}
    for index, page in enumerate(need_list(pages, where or "(root)")):
        at = f"{where}[{index}]" if where else f"pages[{index}]"
        result = need_object(unwrap_jsonrpc(page), at)
        if "tools" not in result:
            raise InputError('no "tools" array (expected a tools/list result page)', at)
        builder.add_result(result, at)
        for key, value in header_of(result, at).items():
            if value is not None:
                header.setdefault(key, value)
    return builder.build(source_format="mcp-pages", **header)


def read_fastmcp(obj: JSON, where: str) -> Surface:
    """A ``fastmcp inspect --format mcp`` manifest: MCP wire names, an ``environment``
    block, and every list of the server side by side."""
    manifest = need_object(obj, where or "(root)")
    if isinstance(manifest.get("server"), dict) and "tools" in manifest:
        raise InputError(
            "this is a `fastmcp inspect --format fastmcp` manifest (snake_case fields); "
            "re-run with `--format mcp`",
            where or None,
        )
    return read_result(manifest, where, source_format="fastmcp")
