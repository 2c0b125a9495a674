"""The official MCP Python SDK 2.x (``mcp>=2``): ``MCPServer`` and the low-level ``Server``.

**MCPServer.** The SDK validates arguments inside ``Tool.run``, before the handler runs, and
``MCPServer._handle_call_tool`` turns every exception into a plain text result, so neither a
decorator on the handler nor ``Server.middleware`` (which only sees that text) can tell a
validation failure from any other error. ``MCPServer.call_tool`` sits between the two, and
its contract is documented: a validation failure is the SDK's ``ToolError`` caused by a
pydantic ``ValidationError``, a crash is ``UnexpectedToolError`` caused by what the handler
raised, an unknown tool is a ``ToolError`` before any tool runs. So the instance's
``call_tool`` is wrapped — one place for every tool, present and future. Returned envelopes
are converted by wrapping the registered tool's function the first time it is called,
because ``Tool.run`` would otherwise serialise the envelope as data.

**Low-level Server.** Its ``tools/call`` handler is the server author's own function
(``Server.get_request_handler`` / ``add_request_handler`` are public), so it is wrapped
directly. The SDK does not validate arguments there; when the handler fails (raises or
returns an error) the integration checks the arguments against the tool's listed input
schema (jsonschema, a dependency of the SDK) and the tool's name against the listing.

Start-up, for both, is the low-level server's lifespan: every transport (stdio, streamable
HTTP, the SDK's in-process ``Client``) enters it.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError as SdkToolError
from mcp.server.mcpserver.exceptions import UnexpectedResourceError, UnexpectedToolError
from mcp.types import CallToolResult, PaginatedRequestParams, TextContent
from pydantic import ValidationError

from mcp_governance.client import GovernanceClient
from mcp_governance.errors import error_from_exception
from mcp_governance.integrations._core import MARK, Governed, dump, input_problem, is_envelope, origin, result_dict
from mcp_governance.jsontypes import JSON

log = logging.getLogger("mcp_governance.mcp_sdk")
CallTool = Callable[..., Awaitable[Any]]


def as_call_tool_result(value: Any) -> Any:
    """What a handler returned, as the SDK should send it: envelopes, builders and
    ``tool_error`` dicts become a ``CallToolResult``; anything else is left to the SDK."""
    return CallToolResult.model_validate(result_dict(value)) if is_envelope(value) else value


def _text_result(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def _returning_results(fn: Callable[..., Any], is_async: bool) -> Callable[..., Any]:
    """The handler, with its returned envelopes converted (same sync/async kind, same signature)."""
    if is_async:
        @functools.wraps(fn)
        async def governed_async(*args: Any, **kwargs: Any) -> Any:
            return as_call_tool_result(await fn(*args, **kwargs))

        wrapper: Callable[..., Any] = governed_async
    else:
        @functools.wraps(fn)
        def governed_sync(*args: Any, **kwargs: Any) -> Any:
            return as_call_tool_result(fn(*args, **kwargs))

        wrapper = governed_sync
    setattr(wrapper, MARK, True)
    return wrapper


def _hook_lifespan(lowlevel: Any, governed: Governed) -> None:
    inner: Callable[[Any], AbstractAsyncContextManager[Any]] | None = getattr(lowlevel, "lifespan", None)
    if inner is None:
        log.warning("this MCP SDK has no server lifespan to hook: call `await governed.report_live()` at start")
        return

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[Any]:
        async with inner(app) as state:
            governed.lifespan_state = state
            await governed.report_in_background()
            yield state

    lowlevel.lifespan = lifespan


# --------------------------------------------------------------------------- MCPServer


def _registered_tool(server: MCPServer, name: str) -> Any:
    """The SDK's registered ``Tool`` (its function and input schema), or None. The SDK has
    no public accessor; without one, returned envelopes are simply left to the SDK."""
    get_tool = getattr(getattr(server, "_tool_manager", None), "get_tool", None)
    return get_tool(name) if callable(get_tool) else None


class GovernedMCPServer(Governed):
    framework = "mcp 2.x MCPServer"

    async def surface(self) -> dict[str, JSON]:
        server = self.server
        info: dict[str, JSON] = {"name": server.name}
        if server.version:
            info["version"] = server.version
        return {
            "serverInfo": info,
            "tools": [dump(tool) for tool in await server.list_tools()],
            "prompts": [dump(prompt) for prompt in await server.list_prompts()],
            "resources": [dump(resource) for resource in await server.list_resources()],
            "resourceTemplates": [dump(template) for template in await server.list_resource_templates()],
        }

    async def tool_names(self) -> list[str]:
        return [tool.name for tool in await self.server.list_tools()]

    def _adopt(self, name: str) -> None:
        tool = _registered_tool(self.server, name)
        fn = getattr(tool, "fn", None)
        if fn is None or getattr(fn, MARK, False):
            return
        tool.fn = _returning_results(fn, bool(getattr(tool, "is_async", False)))

    def _known(self, name: str) -> bool:
        manager = getattr(self.server, "_tool_manager", None)
        return not callable(getattr(manager, "get_tool", None)) or _registered_tool(self.server, name) is not None

    async def call_tool(self, call_next: CallTool, name: str, arguments: dict[str, Any],
                        context: Any = None) -> Any:
        """``MCPServer.call_tool`` with the governance behaviour around it."""
        if not self._known(name):
            return (await self.unknown_tool(name)).to_call_tool_result()
        self._adopt(name)
        try:
            return await call_next(name, arguments, context)
        except UnexpectedToolError as exc:
            # A crash, or our ToolError raised by the handler: the envelope, never the text.
            return error_from_exception(origin(exc, (UnexpectedToolError, UnexpectedResourceError))) \
                .to_call_tool_result()
        except SdkToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            xml = await self.validation_error(name, arguments)
            if xml is None:
                raise  # the SDK answers with its own validation message, unchanged
            return _text_result(xml)

    def install(self) -> None:
        server = self.server
        call_next = server.call_tool

        async def call_tool(name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            return await self.call_tool(call_next, name, arguments, context)

        server.call_tool = call_tool  # the instance's own, ahead of the class's

    def install_startup(self) -> None:
        # The SDK's own Client and in-memory transport reach the low-level server the same way.
        _hook_lifespan(self.server._lowlevel_server, self)


# --------------------------------------------------------------------------- low-level Server


class GovernedLowLevel(Governed):
    framework = "mcp 2.x low-level Server"

    def _context(self, method: str) -> Any:
        """A request context for listing outside a request (start-up): no session."""
        from mcp.server.context import ServerRequestContext
        from mcp.types import LATEST_PROTOCOL_VERSION

        return ServerRequestContext(session=None, lifespan_context=self.lifespan_state,  # type: ignore[arg-type]
                                    protocol_version=LATEST_PROTOCOL_VERSION, method=method)

    async def _list(self, method: str, key: str, ctx: Any = None) -> list[JSON]:
        entry = self.server.get_request_handler(method)
        if entry is None:
            return []
        items: list[JSON] = []
        cursor: str | None = None
        for _ in range(1000):
            result = await entry.handler(ctx or self._context(method), PaginatedRequestParams(cursor=cursor))
            page = dump(result)
            items.extend(page.get(key, []))
            cursor = page.get("nextCursor")
            if not cursor:
                break
        return items

    async def surface(self, ctx: Any = None) -> dict[str, JSON]:
        server = self.server
        info: dict[str, JSON] = {"name": server.name}
        if server.version:
            info["version"] = server.version
        return {
            "serverInfo": info,
            "tools": await self._list("tools/list", "tools", ctx),
            "prompts": await self._list("prompts/list", "prompts", ctx),
            "resources": await self._list("resources/list", "resources", ctx),
            "resourceTemplates": await self._list("resources/templates/list", "resourceTemplates", ctx),
        }

    async def _failed(self, ctx: Any, params: Any, raised: BaseException | None, result: Any) -> Any:
        """A call that raised or returned an error: unknown tool, bad arguments, or the handler's."""
        name, arguments = params.name, params.arguments or {}
        tools = {tool["name"]: tool for tool in await self._list("tools/list", "tools", ctx)}
        if name not in tools:
            return unknown_result(await self.unknown_tool(name))
        if input_problem(tools[name].get("inputSchema"), arguments):
            xml = await self.validation_error(name, arguments)
            if xml is not None:
                return _text_result(xml)
        if raised is None:
            return result
        if isinstance(raised, Exception) and not _is_protocol_error(raised):
            return error_from_exception(raised).to_call_tool_result()
        raise raised

    def install(self) -> None:
        entry = self.server.get_request_handler("tools/call")
        if entry is None:
            raise TypeError("this low-level Server has no tools/call handler to govern (pass on_call_tool=...)")
        handler = entry.handler

        async def call_tool(ctx: Any, params: Any) -> Any:
            try:
                result = await handler(ctx, params)
            except Exception as exc:  # noqa: BLE001 - every failure is answered (or re-raised) in _failed
                return await self._failed(ctx, params, exc, None)
            if is_envelope(result):
                return as_call_tool_result(result)
            if getattr(result, "is_error", False):
                return await self._failed(ctx, params, None, result)
            return result

        self.server.add_request_handler("tools/call", entry.params_type, call_tool)

    def install_startup(self) -> None:
        _hook_lifespan(self.server, self)


def _is_protocol_error(exc: BaseException) -> bool:
    """An ``MCPError`` is the protocol's own answer (a JSON-RPC error), not a tool failure."""
    from mcp import MCPError

    return isinstance(exc, MCPError)


def unknown_result(envelope: Any) -> CallToolResult:
    return envelope.to_call_tool_result()


def governed_for(server: Any, client: GovernanceClient, name: str, budget: float, max_changes: int) -> Governed:
    if isinstance(server, MCPServer):
        return GovernedMCPServer(server, client, name, budget, max_changes)
    return GovernedLowLevel(server, client, name, budget, max_changes)


__all__ = ["GovernedLowLevel", "GovernedMCPServer", "as_call_tool_result", "governed_for"]
