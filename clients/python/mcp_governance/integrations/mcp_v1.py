"""The official MCP Python SDK 1.x (``mcp<2``): ``FastMCP`` and the low-level ``Server``.

Both run on the 1.x low-level server (``FastMCP._mcp_server``), whose ``tools/call``
handler (``request_handlers[CallToolRequest]``) is where every call arrives and every
failure ends as an error result: the SDK's own input validation ("Input validation
error: ..."), FastMCP's pydantic validation and unknown tools ("Unknown tool: ..."), and
whatever a handler raised (its text). So that handler is wrapped: when its result is an
error, the tool's name is looked up in the server's own listing (not there: the
``UNKNOWN_ACTION`` answer) and the arguments are checked against the tool's listed input
schema with jsonschema, a dependency of the SDK (they fail: the service's
``<validation_error>``, within the budget). Successful calls cost nothing extra.

Where a handler's own function can be reached, what it returns or raises is converted
too: FastMCP's registered ``Tool.fn`` (through the instance's ``ToolManager``, which
FastMCP looks up on each call), and the low-level server's registered ``call_tool``
function (the handler's closure holds it; the SDK has no accessor). Without it, returned
envelopes and raised exceptions are left to the SDK, and a warning says so.

Start-up is the low-level server's ``lifespan``, which ``Server.run`` enters for every
transport (stdio, SSE, streamable HTTP, the in-memory test session).
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import mcp.types as types
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import McpError

from mcp_governance.client import GovernanceClient
from mcp_governance.errors import error_from_exception
from mcp_governance.integrations._core import MARK, Governed, dump, input_problem, is_envelope, result_dict
from mcp_governance.jsontypes import JSON

log = logging.getLogger("mcp_governance.mcp_sdk")

LISTS = (
    (types.ListToolsRequest, "tools/list", "tools"),
    (types.ListPromptsRequest, "prompts/list", "prompts"),
    (types.ListResourcesRequest, "resources/list", "resources"),
    (types.ListResourceTemplatesRequest, "resources/templates/list", "resourceTemplates"),
)


def as_call_tool_result(value: Any) -> Any:
    """What a handler returned, as the SDK should send it: envelopes, builders and
    ``tool_error`` dicts become a ``CallToolResult``; anything else is left to the SDK."""
    return types.CallToolResult.model_validate(result_dict(value)) if is_envelope(value) else value


def _server_result(result: types.CallToolResult) -> types.ServerResult:
    return types.ServerResult(result)


def _text_result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=True)


def _returning_results(fn: Callable[..., Any], is_async: bool) -> Callable[..., Any]:
    """A FastMCP tool function with its returned envelopes converted (same kind and signature)."""
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


class GovernedV1(Governed):
    """A server on the 1.x low-level ``Server`` (FastMCP's, or the author's own)."""

    framework = "mcp 1.x low-level Server"

    def __init__(self, server: Any, client: GovernanceClient, server_name: str, budget: float,
                 max_changes: int) -> None:
        super().__init__(server, client, server_name, budget, max_changes)
        self.lowlevel: Server = server if isinstance(server, Server) else server._mcp_server

    async def _list(self, request_type: Any, method: str, key: str) -> list[JSON]:
        handler = self.lowlevel.request_handlers.get(request_type)
        if handler is None:
            return []
        items: list[JSON] = []
        cursor: str | None = None
        for _ in range(1000):
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            result = await handler(request_type(method=method, params=params))
            page = dump(getattr(result, "root", result))
            items.extend(page.get(key, []))
            cursor = page.get("nextCursor")
            if not cursor:
                break
        return items

    async def surface(self) -> dict[str, JSON]:
        info: dict[str, JSON] = {"name": self.lowlevel.name}
        if self.lowlevel.version:
            info["version"] = self.lowlevel.version
        surface: dict[str, JSON] = {"serverInfo": info}
        for request_type, method, key in LISTS:
            surface[key] = await self._list(request_type, method, key)
        return surface

    async def tool_names(self) -> list[str]:
        return [tool["name"] for tool in await self._list(types.ListToolsRequest, "tools/list", "tools")]

    async def _failed(self, name: str, arguments: Any, result: types.CallToolResult) -> types.CallToolResult:
        """An error result: the unknown-tool answer, the service's validation error, or itself."""
        tools = {tool["name"]: tool for tool in await self._list(types.ListToolsRequest, "tools/list", "tools")}
        if name not in tools:
            return (await self.unknown_tool(name)).to_call_tool_result()
        if input_problem(tools[name].get("inputSchema"), arguments):
            xml = await self.validation_error(name, arguments)
            if xml is not None:
                return _text_result(xml)
        return result

    def _wrap_request_handler(self) -> None:
        inner = self.lowlevel.request_handlers.get(types.CallToolRequest)
        if inner is None:
            raise TypeError("this MCP server has no tools/call handler to govern (register @server.call_tool())")

        async def handler(req: types.CallToolRequest) -> types.ServerResult:
            answer = await inner(req)
            result = getattr(answer, "root", answer)
            if not (isinstance(result, types.CallToolResult) and result.isError):
                return answer
            name, arguments = req.params.name, req.params.arguments or {}
            return _server_result(await self._failed(name, arguments, result))

        setattr(handler, MARK, inner)
        self.lowlevel.request_handlers[types.CallToolRequest] = handler

    def _wrap_function(self) -> None:
        """The author's ``@server.call_tool()`` function: returns and raises converted."""
        inner = self.lowlevel.request_handlers.get(types.CallToolRequest)
        try:
            closure = inspect.getclosurevars(inner).nonlocals if inner is not None else {}
        except (TypeError, ValueError):
            closure = {}
        func = closure.get("func")
        if not callable(func):
            log.warning("cannot reach the call_tool function of %s: returned and raised <tool_error>s are left "
                        "to the SDK (validation errors and unknown tools are still answered)", self.server_name)
            return

        @functools.wraps(func)
        async def call_tool(name: str, arguments: dict[str, Any]) -> Any:
            try:
                return as_call_tool_result(await func(name, arguments))
            except McpError:
                raise  # the protocol's own answer (e.g. URL elicitation), not a tool failure
            except Exception as exc:  # noqa: BLE001 - a handler's failure becomes an envelope, never its text
                return error_from_exception(exc).to_call_tool_result()

        self.lowlevel.call_tool(validate_input=bool(closure.get("validate_input", True)))(call_tool)

    def install(self) -> None:
        self._wrap_function()
        self._wrap_request_handler()

    def install_startup(self) -> None:
        _hook_lifespan(self.lowlevel, self)


class GovernedFastMCP(GovernedV1):
    """``mcp.server.fastmcp.FastMCP``: its tools' functions are wrapped through the ToolManager."""

    framework = "mcp 1.x FastMCP"

    def _wrap_tool_manager(self) -> None:
        from mcp.server.fastmcp.exceptions import ToolError as SdkToolError
        from pydantic import ValidationError

        manager = self.server._tool_manager
        call_next = manager.call_tool

        async def call_tool(name: str, arguments: dict[str, Any], context: Any = None,
                            convert_result: bool = False) -> Any:
            tool = manager.get_tool(name)
            if tool is not None and not getattr(tool.fn, MARK, False):
                tool.fn = _returning_results(tool.fn, bool(tool.is_async))
            try:
                return await call_next(name, arguments, context=context, convert_result=convert_result)
            except SdkToolError as exc:
                cause = exc.__cause__
                if tool is None or cause is None:
                    raise  # unknown tool: answered by the request handler
                if isinstance(cause, ValidationError) and _invalid_arguments(tool, arguments):
                    raise  # the request handler asks the service, or sends this text
                return error_from_exception(cause).to_call_tool_result()

        manager.call_tool = call_tool

    def install(self) -> None:
        self._wrap_tool_manager()
        self._wrap_request_handler()


def _invalid_arguments(tool: Any, arguments: dict[str, Any]) -> bool:
    """Did FastMCP's pydantic validation of the arguments fail (rather than the handler's
    own pydantic code)? Checked again the way ``Tool.run`` checks, on the failure path only."""
    from pydantic import ValidationError

    metadata = tool.fn_metadata
    try:
        metadata.arg_model.model_validate(metadata.pre_parse_json(arguments))
    except ValidationError:
        return True
    return False


def _hook_lifespan(lowlevel: Server, governed: Governed) -> None:
    inner: Callable[[Any], AbstractAsyncContextManager[Any]] = lowlevel.lifespan

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[Any]:
        async with inner(app) as state:
            await governed.report_in_background()
            yield state

    lowlevel.lifespan = lifespan


def governed_for(server: Any, client: GovernanceClient, name: str, budget: float, max_changes: int) -> Governed:
    if isinstance(server, Server):
        return GovernedV1(server, client, name, budget, max_changes)
    return GovernedFastMCP(server, client, name, budget, max_changes)


__all__ = ["GovernedFastMCP", "GovernedV1", "as_call_tool_result", "governed_for"]
