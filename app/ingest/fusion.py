"""Reader for Vurb / MCP Fusion capability lockfiles (``vurb.lock``, ``mcp-fusion.lock``).

They keep digests of schemas rather than schemas, so a tool read from one has no
inputSchema; its whole lockfile entry (surface, behavior, tokenEconomics, entitlements,
integrityDigest) is kept in ``Tool.fusion`` for the ``fusion.*`` parity rules.
"""

from __future__ import annotations

from app.ingest.fields import need_object, optional_str, rest, type_name
from app.jsontypes import JSON
from app.model import Prompt, PromptArgument, Surface, Tool
from app.problems import InputError

SUPPORTED_VERSION = 1


def looks_like_fusion(obj: JSON) -> bool:
    return isinstance(obj, dict) and "lockfileVersion" in obj and "capabilities" in obj


def read_fusion_lockfile(obj: JSON, where: str) -> Surface:
    lock = need_object(obj, where or "(root)")
    prefix = f"{where}." if where else ""
    version = lock.get("lockfileVersion")
    if version is None:
        raise InputError("missing (not a Vurb / MCP Fusion lockfile?)", f"{prefix}lockfileVersion")
    if version != SUPPORTED_VERSION or isinstance(version, bool):
        raise InputError(
            f"unsupported lockfileVersion {version!r} (Vurb / MCP Fusion lockfile version "
            f"{SUPPORTED_VERSION} is supported)",
            f"{prefix}lockfileVersion",
        )
    capabilities = need_object(lock.get("capabilities"), f"{prefix}capabilities")
    tools_raw = capabilities.get("tools")
    if tools_raw is None:
        raise InputError("missing", f"{prefix}capabilities.tools")
    tools: dict[str, Tool] = {}
    for name, entry in need_object(tools_raw, f"{prefix}capabilities.tools").items():
        at = f"{prefix}capabilities.tools.{name}"
        entry = need_object(entry, at)
        surface = need_object(entry.get("surface"), f"{at}.surface")
        actions = surface.get("actions")
        if actions is not None and not (
            isinstance(actions, list) and all(isinstance(a, str) for a in actions)
        ):
            raise InputError(f"expected an array of action names, got {type_name(actions)}", f"{at}.surface.actions")
        tools[name] = Tool(
            name=name,
            input_schema=None,
            description=optional_str(surface, "description", f"{at}.surface"),
            fusion=entry,
        )
    prompts: dict[str, Prompt] = {}
    prompts_raw = capabilities.get("prompts", lock.get("prompts"))
    for name, entry in need_object(prompts_raw or {}, f"{prefix}capabilities.prompts").items():
        at = f"{prefix}capabilities.prompts.{name}"
        entry = need_object(entry, at)
        arguments = []
        for index, arg in enumerate(entry.get("arguments") or []):
            arg_at = f"{at}.arguments[{index}]"
            arg = need_object(arg, arg_at)
            if not isinstance(arg.get("name"), str):
                raise InputError("missing", f"{arg_at}.name")
            required = arg.get("required")
            arguments.append(
                PromptArgument(
                    name=arg["name"],
                    description=optional_str(arg, "description", arg_at),
                    required=required if isinstance(required, bool) else None,
                    extra=rest(arg, ("name", "description", "required")),
                )
            )
        prompts[name] = Prompt(
            name=name,
            title=optional_str(entry, "title", at),
            description=optional_str(entry, "description", at),
            arguments=tuple(arguments),
            extra=rest(entry, ("title", "description", "arguments")),
        )
    server = lock.get("serverName") if isinstance(lock.get("serverName"), str) else None
    return Surface(
        server=server,
        source_format="vurb" if "vurbVersion" in lock else "mcp-fusion",
        tools=dict(sorted(tools.items())),
        prompts=dict(sorted(prompts.items())),
        generated_at=lock.get("generatedAt") if isinstance(lock.get("generatedAt"), str) else None,
    )
