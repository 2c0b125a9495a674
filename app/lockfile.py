"""The TOML lockfile (``lockfiles/<server>.lock.toml``) and its canonical JSON export.

One document model serves both: :func:`lock_document` turns a Surface into a JSON-native
dict (the JSON export); :func:`dumps_toml` writes that dict as TOML, every schema and
other JSON value kept as canonical pretty JSON text (TOML has no null), so a write/read
round trip is lossless and each JSON key sits on its own line. Reading either form
validates every field, recomputes every digest and names what is wrong.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from app.ingest.fields import need_object, type_name
from app.ingest.mcp import parse_prompt, parse_resource, parse_tool
from app.jsonio import check_value, parse_json, pretty_json
from app.jsontypes import JSON
from app.model import Resource, Surface, Tool

# The one name check lives with the client, which checks names too (app.names re-exports it).
from app.names import SERVER_NAME as SERVER_NAME
from app.names import full_match, server_name_problem
from app.problems import InputError

LOCKFILE_VERSION = 1
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")

HEADER_FIELDS = (
    "lockfile_version",
    "server",
    "server_version",
    "protocol_version",
    "source_format",
    "generated_at",
    "integrity_digest",
    "server_info",
)
TOOL_FIELDS = (
    "digest",
    "title",
    "description",
    "annotations",
    "icons",
    "meta",
    "execution",
    "input_schema",
    "output_schema",
    "actions",
    "extra",
    "fusion",
)
PROMPT_FIELDS = ("digest", "title", "description", "arguments", "extra")
RESOURCE_FIELDS = ("digest", "name", "title", "description", "mime_type", "extra")
JSON_VALUED = {"server_info", "annotations", "icons", "meta", "execution", "input_schema", "output_schema",
               "extra", "fusion", "arguments"}
"""Fields stored in TOML as JSON text (they may hold null, which TOML cannot)."""
SECTIONS = {"tools": TOOL_FIELDS, "prompts": PROMPT_FIELDS, "resources": RESOURCE_FIELDS,
            "resource_templates": RESOURCE_FIELDS}


def check_server_name(name: JSON, where: str) -> str:
    """Server names become file names (:mod:`mcp_governance.names`, the one rule), never a path."""
    problem = server_name_problem(name)
    if problem is not None:
        raise InputError(problem, where)
    return name


def utc_now() -> str:
    return utc_stamp(datetime.now(UTC).timestamp())


def utc_stamp(seconds: float) -> str:
    """Seconds since the epoch as the stamp :func:`utc_now` writes (whole seconds, down:
    stamps of one shape compare as text in time order)."""
    return datetime.fromtimestamp(int(seconds), UTC).isoformat().replace("+00:00", "Z")


def _entry(pairs: tuple[tuple[str, JSON], ...]) -> dict[str, JSON]:
    """The fields that are there: None is absence; an empty object is kept (``annotations:
    {}`` is part of the tool, and of its digest), except ``extra``, where ``{}`` means none."""
    return {key: value for key, value in pairs if value is not None and (value != {} or key != "extra")}


def _tool_entry(tool: Tool) -> dict[str, JSON]:
    return _entry((
        ("digest", tool.digest),
        ("title", tool.title),
        ("description", tool.description),
        ("annotations", tool.annotations),
        ("icons", tool.icons),
        ("meta", tool.meta),
        ("execution", tool.execution),
        ("input_schema", tool.input_schema),
        ("output_schema", tool.output_schema),
        ("actions", list(tool.actions) or None),
        ("extra", tool.extra),
        ("fusion", tool.fusion),
    ))


def _resource_entry(resource: Resource) -> dict[str, JSON]:
    return _entry((
        ("digest", resource.digest),
        ("name", resource.name),
        ("title", resource.title),
        ("description", resource.description),
        ("mime_type", resource.mime_type),
        ("extra", resource.extra),
    ))


def lock_document(surface: Surface, generated_at: str | None = None) -> dict[str, JSON]:
    """The lockfile as a JSON-native dict: the JSON export, and what the TOML encodes."""
    if surface.server is None:
        raise InputError("no server name (pass --server NAME, or give serverInfo.name in the input)")
    check_server_name(surface.server, "server")
    header = _entry((
        ("lockfile_version", LOCKFILE_VERSION),
        ("server", surface.server),
        ("server_version", surface.server_version),
        ("protocol_version", surface.protocol_version),
        ("source_format", surface.source_format),
        ("generated_at", generated_at or surface.generated_at or utc_now()),
        ("integrity_digest", surface.integrity_digest),
        ("server_info", surface.server_info),
    ))
    header["tools"] = {name: _tool_entry(tool) for name, tool in sorted(surface.tools.items())}
    prompts = {
        name: _entry((
            ("digest", prompt.digest),
            ("title", prompt.title),
            ("description", prompt.description),
            ("arguments", [argument.to_mcp() for argument in prompt.arguments] or None),
            ("extra", prompt.extra),
        ))
        for name, prompt in sorted(surface.prompts.items())
    }
    if prompts:
        header["prompts"] = prompts
    if surface.resources:
        header["resources"] = {uri: _resource_entry(r) for uri, r in sorted(surface.resources.items())}
    if surface.resource_templates:
        header["resource_templates"] = {
            uri: _resource_entry(r) for uri, r in sorted(surface.resource_templates.items())
        }
    return header


def _header_comment(document: dict[str, JSON]) -> list[str]:
    server = document["server"]
    return [
        f"mcp-governance lockfile: the known-good tool surface of MCP server {server!r}.",
        "Generated by mcp-governance; digests are verified when it is read, so edit it by",
        f"re-locking (mcp-governance lock SURFACE --server {server}), not by hand.",
        "Schemas are canonical JSON (sorted keys) kept in TOML literal strings.",
    ]


def dumps_toml(document: dict[str, JSON]) -> str:
    """Deterministic TOML bytes for a lock document (same document, same text).

    tomlkit renders every key and value (quoting, escaping, literal strings, arrays); the
    layout around them is fixed and simple (a header, then one ``[section.name]`` table per
    tool, prompt or resource with one ``key = value`` per line), so it is written line by
    line here instead of through tomlkit's document model, which costs several times more
    for a 500-tool surface and gives the same bytes. tomlkit is imported here, when a
    lockfile is written: reading one (tomllib) or a diff never needs it."""
    import tomlkit

    from app.tomltext import json_item, key_item, string_item

    def _value_item(key: str, value: JSON) -> Any:
        """A lockfile field as a tomlkit item: JSON text, a string, a list of strings, a number."""
        if key in JSON_VALUED:
            return json_item(value)
        if isinstance(value, str):
            return string_item(value)
        if isinstance(value, list):
            array = tomlkit.array()
            array.extend(string_item(item) for item in value)
            return array
        return tomlkit.item(value)

    lines = [f"# {line}" for line in _header_comment(document)]
    lines.append("")
    lines.extend(f"{key} = {_value_item(key, document[key]).as_string()}" for key in HEADER_FIELDS
                 if key in document)
    for section in SECTIONS:
        entries = document.get(section)
        if entries is None or (section != "tools" and not entries):
            continue
        if not entries:
            lines += ["", f"[{section}]"]
        for name, entry in entries.items():
            key = key_item(name)
            lines += ["", f"[{section}.{key if isinstance(key, str) else key.as_string()}]"]
            lines.extend(f"{field} = {_value_item(field, value).as_string()}" for field, value in entry.items())
    return "\n".join(lines) + "\n"


def dumps_json(document: dict[str, JSON]) -> str:
    """The canonical JSON export: sorted keys, 2-space indent, trailing newline."""
    return pretty_json(document) + "\n"


def write_surface(surface: Surface, generated_at: str | None = None) -> str:
    """The TOML lockfile text of a surface."""
    return dumps_toml(lock_document(surface, generated_at))


# --- reading -------------------------------------------------------------------------


def loads_toml(text: str, where: str | None = None) -> Surface:
    """Read a TOML lockfile: parse, decode the JSON-valued fields, validate, verify digests."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"invalid TOML: {exc}", where) from None
    except RecursionError:
        raise InputError("invalid TOML: nested too deeply", where) from None
    except ValueError:  # an integer too long to convert (sys.get_int_max_str_digits)
        raise InputError("invalid TOML: a number has too many digits", where) from None
    try:
        return _read_document(_decode_json_fields(raw), encoded=True)
    except InputError as exc:
        if not where:
            raise
        raise exc.located(where) from exc


def _decode_json_fields(raw: dict[str, JSON]) -> dict[str, JSON]:
    def decode(value: JSON, at: str) -> JSON:
        if not isinstance(value, str):
            raise InputError(f"expected JSON text in a string, got {type_name(value)}", at)
        return parse_json(value, at)

    document = dict(raw)
    if "server_info" in document:
        document["server_info"] = decode(document["server_info"], "server_info")
    for section in SECTIONS:
        entries = document.get(section)
        if not isinstance(entries, dict):
            continue
        decoded: dict[str, JSON] = {}
        for name, entry in entries.items():
            if isinstance(entry, dict):
                entry = {
                    key: decode(value, f"{section}.{name}.{key}") if key in JSON_VALUED else value
                    for key, value in entry.items()
                }
            decoded[name] = entry
        document[section] = decoded
    return document


def read_document(document: JSON, where: str | None = None) -> Surface:
    """Read the JSON export of a lockfile into a verified Surface."""
    try:
        return _read_document(document, encoded=False)
    except InputError as exc:
        if not where:
            raise
        raise exc.located(where) from exc


def looks_like_lock_document(obj: JSON) -> bool:
    return isinstance(obj, dict) and "lockfile_version" in obj


def _read_document(document: JSON, encoded: bool) -> Surface:
    doc = need_object(document, "(root)")
    if not encoded:
        check_value(doc)
    version = doc.get("lockfile_version")
    if version is None:
        raise InputError("missing (not an mcp-governance lockfile?)", "lockfile_version")
    if version != LOCKFILE_VERSION or isinstance(version, bool):
        raise InputError(
            f"unsupported lockfile_version {version!r} (this mcp-governance reads version {LOCKFILE_VERSION})",
            "lockfile_version",
        )
    unknown = sorted(set(doc) - set(HEADER_FIELDS) - set(SECTIONS))
    if unknown:
        raise InputError(f"unknown field {unknown[0]!r}", "(root)")
    server = check_server_name(doc.get("server"), "server")
    for key in ("server_version", "protocol_version", "source_format", "generated_at"):
        if doc.get(key) is not None and not isinstance(doc[key], str):
            raise InputError(f"expected a string, got {type_name(doc[key])}", key)
    server_info = doc.get("server_info")
    if server_info is not None and not isinstance(server_info, dict):
        raise InputError(f"expected an object, got {type_name(server_info)}", "server_info")

    tools = {name: _read_tool(name, entry) for name, entry in _section(doc, "tools").items()}
    prompts = {}
    for name, entry in _section(doc, "prompts").items():
        at = f"prompts.{name}"
        wire = {"name": name, **_known(entry, PROMPT_FIELDS, at, skip=("digest", "extra"))}
        wire.update(_extra(entry, at))
        prompts[name] = _verified(parse_prompt(wire, at), entry, at)
    resources = {uri: _read_resource(uri, entry, "resources", False)
                 for uri, entry in _section(doc, "resources").items()}
    templates = {uri: _read_resource(uri, entry, "resource_templates", True)
                 for uri, entry in _section(doc, "resource_templates").items()}
    surface = Surface(
        server=server,
        server_version=doc.get("server_version"),
        source_format=doc.get("source_format") or "lockfile",
        protocol_version=doc.get("protocol_version"),
        tools=dict(sorted(tools.items())),
        prompts=dict(sorted(prompts.items())),
        resources=dict(sorted(resources.items())),
        resource_templates=dict(sorted(templates.items())),
        server_info=server_info,
        generated_at=doc.get("generated_at"),
    )
    recorded = doc.get("integrity_digest")
    if not isinstance(recorded, str) or not full_match(DIGEST, recorded):
        raise InputError("missing or not a sha256:<hex> digest", "integrity_digest")
    if recorded != surface.integrity_digest:
        raise InputError(
            f"does not match the content (recorded {recorded}, computed {surface.integrity_digest}); "
            "the lockfile was edited or damaged",
            "integrity_digest",
        )
    return surface


def _section(doc: dict[str, JSON], section: str) -> dict[str, JSON]:
    value = doc.get(section, {})
    return need_object(value, section)


def _known(entry: JSON, fields: tuple[str, ...], at: str, skip: tuple[str, ...]) -> dict[str, JSON]:
    """The entry's fields, refusing unknown ones; renamed to their MCP wire names."""
    entry = need_object(entry, at)
    unknown = sorted(set(entry) - set(fields))
    if unknown:
        raise InputError(f"unknown field {unknown[0]!r}", at)
    wire_names = {"meta": "_meta", "input_schema": "inputSchema", "output_schema": "outputSchema",
                  "mime_type": "mimeType"}
    return {wire_names.get(key, key): value for key, value in entry.items() if key not in skip}


def _extra(entry: dict[str, JSON], at: str) -> dict[str, JSON]:
    return need_object(entry.get("extra", {}), f"{at}.extra")


def _verified(item: JSON, entry: dict[str, JSON], at: str) -> JSON:
    recorded = entry.get("digest")
    if not isinstance(recorded, str) or not full_match(DIGEST, recorded):
        raise InputError("missing or not a sha256:<hex> digest", f"{at}.digest")
    if recorded != item.digest:
        raise InputError(
            f"does not match the content (recorded {recorded}, computed {item.digest}); "
            "the lockfile was edited or damaged",
            f"{at}.digest",
        )
    return item


def _read_tool(name: str, entry: JSON) -> Tool:
    at = f"tools.{name}"
    wire = {"name": name, **_known(entry, TOOL_FIELDS, at, skip=("digest", "actions", "extra", "fusion"))}
    wire.update(_extra(entry, at))
    fusion = entry.get("fusion")
    if fusion is not None:
        fusion = need_object(fusion, f"{at}.fusion")
    if fusion is not None and "inputSchema" not in wire:
        wire["inputSchema"] = {}
        tool = replace(parse_tool(wire, at), input_schema=None, fusion=fusion)
    else:
        tool = parse_tool(wire, at)
        if fusion is not None:
            tool = replace(tool, fusion=fusion)
    actions = entry.get("actions")
    if actions is not None and actions != list(tool.actions):
        raise InputError(
            f"lists actions {actions!r} but the input schema defines {list(tool.actions)!r}", f"{at}.actions"
        )
    return _verified(tool, entry, at)


def _read_resource(uri: str, entry: JSON, section: str, template: bool) -> Resource:
    at = f"{section}.{uri}"
    wire = {("uriTemplate" if template else "uri"): uri,
            **_known(entry, RESOURCE_FIELDS, at, skip=("digest", "extra"))}
    wire.update(_extra(entry, at))
    return _verified(parse_resource(wire, at, template), entry, at)
