"""The ``fastmcp`` package (``fastmcp.FastMCP``).

fastmcp has a public middleware chain whose ``on_call_tool(context, call_next)`` sees each
call with the exceptions still typed: ``NotFoundError`` for an unknown tool, fastmcp's
``ValidationError`` caused by pydantic's for arguments that fail validation, and
fastmcp's ``ToolError`` caused by whatever the handler raised. So :func:`govern` adds
one middleware (the outermost: first in the list), and answers there: the unknown-tool
answer, the service's ``<validation_error>`` (else fastmcp's own message), and the
handler's ``<tool_error>`` intact or an ``INTERNAL_ERROR``. A ``fastmcp.exceptions.ToolError``
that the author raised on purpose is fastmcp's own way to talk to the model and passes
unchanged.

A returned envelope would be serialised as data, and a returned builder as its ``repr``,
so each tool's function is wrapped the first time it is called (fastmcp reads ``Tool.fn``
on each run). Start-up is the server's lifespan (``FastMCP._lifespan``), which every
transport and fastmcp's in-memory ``Client`` enter.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastmcp.exceptions import FastMCPError, NotFoundError
from fastmcp.exceptions import ToolError as FastMCPToolError
from fastmcp.exceptions import ValidationError as FastMCPValidationError
from fastmcp.server.middleware import Middleware
from pydantic import ValidationError as PydanticValidationError

from mcp_governance.client import GovernanceClient
from mcp_governance.errors import ToolErrorEnvelope, error_from_exception
from mcp_governance.integrations._core import MARK, Governed, dump, is_envelope, result_dict
from mcp_governance.jsontypes import JSON

log = logging.getLogger("mcp_governance.fastmcp")



def _first(modules: tuple[str, ...], name: str) -> Any:
    """``name`` from the first of ``modules`` that exists (where it lives moved between releases)."""
    for module in modules:
        try:
            return getattr(importlib.import_module(module), name)
        except ImportError:
            continue
    raise ImportError(f"cannot import {name} from {' or '.join(modules)}")


# fastmcp 3+ / fastmcp 2; fastmcp 4 takes MCP types from the mcp-types package, earlier ones from the SDK.
ToolResult: Any = _first(("fastmcp.tools.base", "fastmcp.tools.tool"), "ToolResult")
TextContent: Any = _first(("mcp_types", "mcp.types"), "TextContent")

# fastmcp 2's ToolResult has no is_error: an error is then raised as fastmcp's ToolError,
# whose text the client gets as is (isError true).
_RESULTS_CARRY_ERRORS = "is_error" in inspect.signature(ToolResult).parameters


def _tool_result(result: dict[str, Any]) -> ToolResult:
    """A tool result dict as fastmcp's ``ToolResult``; an error one raises fastmcp's
    ``ToolError`` where ``ToolResult`` has no ``is_error`` (older fastmcp)."""
    content = [TextContent(type="text", text=item["text"]) if item.get("type") == "text" else item
               for item in result["content"]]
    if _RESULTS_CARRY_ERRORS:
        return ToolResult(content=content, is_error=bool(result["isError"]))
    if result["isError"]:
        raise FastMCPToolError("\n".join(item["text"] for item in result["content"] if item.get("type") == "text"))
    return ToolResult(content=content)


def envelope_result(envelope: ToolErrorEnvelope) -> ToolResult:
    return _tool_result(envelope.to_result())


def _returning_results(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The tool function with its returned envelopes as ``ToolResult`` (same kind and signature)."""
    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def governed_async(*args: Any, **kwargs: Any) -> Any:
            value = await fn(*args, **kwargs)
            return _tool_result(result_dict(value)) if is_envelope(value) else value

        wrapper: Callable[..., Any] = governed_async
    else:
        @functools.wraps(fn)
        def governed_sync(*args: Any, **kwargs: Any) -> Any:
            value = fn(*args, **kwargs)
            return _tool_result(result_dict(value)) if is_envelope(value) else value

        wrapper = governed_sync
    setattr(wrapper, MARK, True)
    return wrapper


class GovernedFastMCPPackage(Governed):
    framework = "fastmcp"

    async def _listed(self, kind: str) -> list[Any]:
        """The server's components of one kind: ``list_<kind>()`` (fastmcp 3+, without
        middleware), else ``get_<kind>()`` (fastmcp 2, a dict by key)."""
        server = self.server
        listing = getattr(server, f"list_{kind}", None)
        if listing is not None:
            if "run_middleware" in inspect.signature(listing).parameters:
                return list(await listing(run_middleware=False))
            return list(await listing())
        return list((await getattr(server, f"get_{kind}")()).values())

    async def _tools(self) -> list[Any]:
        return await self._listed("tools")

    async def surface(self) -> dict[str, JSON]:
        server = self.server
        info: dict[str, JSON] = {"name": server.name}
        version = getattr(server, "version", None)
        if version:
            info["version"] = str(version)
        prompts = await self._listed("prompts")
        resources = await self._listed("resources")
        templates = await self._listed("resource_templates")
        return {
            "serverInfo": info,
            "tools": [dump(tool.to_mcp_tool()) for tool in await self._tools()],
            "prompts": [dump(prompt.to_mcp_prompt()) for prompt in prompts],
            "resources": [dump(resource.to_mcp_resource()) for resource in resources],
            "resourceTemplates": [dump(template.to_mcp_template()) for template in templates],
        }

    async def tool_names(self) -> list[str]:
        return [tool.to_mcp_tool().name for tool in await self._tools()]

    async def _adopt(self, name: str) -> bool:
        """Wrap the tool's function once; False when the server has no such tool."""
        try:
            tool = await self.server.get_tool(name)
        except NotFoundError:
            return False
        if tool is None:
            return False
        fn = getattr(tool, "fn", None)
        if callable(fn) and not getattr(fn, MARK, False):
            try:
                tool.fn = _returning_results(fn)
            except (AttributeError, TypeError, ValueError):  # a frozen tool model: envelopes left to fastmcp
                log.warning("cannot wrap the function of tool %r: returned <tool_error>s are left to fastmcp", name)
        return True

    async def on_call_tool(self, context: Any, call_next: Any) -> Any:
        name = context.message.name
        arguments = context.message.arguments or {}
        if not await self._adopt(name):
            return envelope_result(await self.unknown_tool(name))
        try:
            return await call_next(context)
        except NotFoundError:
            return envelope_result(await self.unknown_tool(name))
        except (FastMCPValidationError, PydanticValidationError):  # fastmcp 2 lets pydantic's through bare
            xml = await self.validation_error(name, arguments)
            if xml is None:
                raise  # fastmcp's own validation message, unchanged
            return _tool_result({"content": [{"type": "text", "text": xml}], "isError": True})
        except FastMCPToolError as exc:
            cause = exc.__cause__
            if cause is None or isinstance(cause, FastMCPError):
                raise  # the author's own fastmcp ToolError: its message is meant for the model
            return envelope_result(error_from_exception(cause))

    def install(self) -> None:
        governed = self

        class GovernanceMiddleware(Middleware):
            """Answers unknown tools, bad arguments and handler failures (mcp-governance)."""

            async def on_call_tool(self, context: Any, call_next: Any) -> Any:
                return await governed.on_call_tool(context, call_next)

        self.server.middleware.insert(0, GovernanceMiddleware())

    def install_startup(self) -> None:
        server = self.server
        inner = getattr(server, "_lifespan", None)
        if inner is None:  # pragma: no cover - depends on the installed fastmcp
            log.warning("this fastmcp has no lifespan to hook: call `await governed.report_live()` at start")
            return

        @asynccontextmanager
        async def lifespan(app: Any) -> AsyncIterator[Any]:
            async with inner(app) as state:
                await self.report_in_background()
                yield state

        server._lifespan = lifespan


def governed_for(server: Any, client: GovernanceClient, name: str, budget: float, max_changes: int) -> Governed:
    return GovernedFastMCPPackage(server, client, name, budget, max_changes)


__all__ = ["GovernedFastMCPPackage", "envelope_result", "governed_for"]
