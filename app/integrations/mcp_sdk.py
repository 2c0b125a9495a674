"""Govern a server built on the official MCP Python SDK (``MCPServer``) with one call.

    from mcp.server.mcpserver import MCPServer
    from app.integrations.mcp_sdk import govern

    server = MCPServer("billing")
    ...                                   # @server.tool() as usual
    govern(server, url="http://127.0.0.1:8000")
    server.run()

What the model gains, and what the server never loses:

- **Live surface at start.** When the SDK starts the server (its lifespan: stdio, streamable
  HTTP and in-process clients all enter it), the surface is listed and ``PUT`` to
  ``/servers/{name}/live`` from a background thread: start-up never waits for the service.
- **Validation errors with awareness.** When a call's arguments fail the SDK's validation,
  the service validates them against the live schema and answers the ``<validation_error>``
  with ``<contract_awareness>`` embedded (scoped to the tool and, for a grouped tool, to the
  action named by the discriminator). If that takes longer than ``budget`` (200 ms) or fails,
  the SDK's own validation message goes out unchanged.
- **The error contract.** A handler may return a ``<tool_error>`` (:func:`app.errors.error`,
  :func:`app.errors.tool_error`, an envelope) or raise :class:`app.errors.ToolError`: it reaches
  the model intact. Any other exception becomes a critical ``INTERNAL_ERROR`` with an incident
  id; its text and traceback go to the server log only.

Where it hooks in, and why there. The SDK validates arguments inside ``Tool.run``, before
the handler runs, and ``MCPServer._handle_call_tool`` turns every exception into a plain text
result, so neither a decorator on the handler nor ``Server.middleware`` (which only sees that
text) can tell a validation failure from any other error. ``MCPServer.call_tool`` sits
between the two, and its contract is documented: a validation failure is the SDK's
``ToolError`` caused by a pydantic ``ValidationError``, a crash is ``UnexpectedToolError``
caused by what the handler raised. So :func:`govern` wraps that method on the instance —
one place for every tool, present and future. Returned envelopes are converted by wrapping
the registered tool's function the first time it is called, because ``Tool.run`` would
otherwise serialise the envelope as data. Start-up uses the low-level server's lifespan, the
one moment every transport goes through. The SDK is an optional extra
(``pip install mcp-governance[mcp]``) and is imported only here.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError as SdkToolError
from mcp.server.mcpserver.exceptions import UnexpectedResourceError, UnexpectedToolError
from mcp.types import CallToolResult, TextContent
from pydantic import ValidationError

from app.client import GovernanceClient
from app.errors import (
    ErrorBuilder,
    ToolError,
    ToolErrorEnvelope,
    error_from_exception,
    parse_tool_error,
    to_call_tool_result,
)
from app.jsontypes import JSON
from app.lockfile import check_server_name
from app.schemas import split_actions

CallTool = Callable[..., Awaitable[Any]]
log = logging.getLogger("mcp_governance.mcp_sdk")

DEFAULT_BUDGET = 0.2
"""Seconds a failed call may wait for the service before the SDK's own message goes out."""
REPORT_TIMEOUT = 5.0
"""Bounds the start-up report (it runs in a background thread, so nothing waits on it)."""
_MARK = "__mcp_governance__"
# Governance calls get their own few worker threads: a slow service must not take the
# threads the SDK runs synchronous tools on.
_LIMITER = anyio.CapacityLimiter(4)


def _dump(model: Any) -> JSON:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


# --------------------------------------------------------------------------- results


def _is_tool_error_result(value: Any) -> bool:
    """A ``tool_error(...)``/``with_warning(...)`` dict: exactly content and isError, with an envelope."""
    if not isinstance(value, Mapping) or set(value) != {"content", "isError"}:
        return False
    content = value.get("content")
    return isinstance(content, list) and any(
        isinstance(item, Mapping) and isinstance(item.get("text"), str) and parse_tool_error(item["text"]) is not None
        for item in content)


def as_call_tool_result(value: Any) -> Any:
    """What a handler returned, as the SDK should send it: envelopes, builders and
    ``tool_error`` dicts become a ``CallToolResult``; anything else is left to the SDK."""
    if isinstance(value, (ToolErrorEnvelope, ErrorBuilder, ToolError)) or _is_tool_error_result(value):
        return to_call_tool_result(value)
    return value


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
    setattr(wrapper, _MARK, True)
    return wrapper


def _origin(exc: BaseException) -> BaseException:
    """What the handler really raised, under the SDK's ``Unexpected...Error`` wrappers."""
    while isinstance(exc, (UnexpectedToolError, UnexpectedResourceError)) and exc.__cause__ is not None:
        exc = exc.__cause__
    return exc


def _registered_tool(server: MCPServer, name: str) -> Any:
    """The SDK's registered ``Tool`` (its function and input schema), or None. The SDK has
    no public accessor; without one, returned envelopes are simply left to the SDK."""
    get_tool = getattr(getattr(server, "_tool_manager", None), "get_tool", None)
    return get_tool(name) if callable(get_tool) else None


# --------------------------------------------------------------------------- governed


class Governed:
    """A governed server: its governance client, name and budget, and the start-up report."""

    def __init__(self, server: MCPServer, client: GovernanceClient, server_name: str, budget: float,
                 max_changes: int) -> None:
        self.server = server
        self.client = client
        self.server_name = server_name
        self.budget = budget
        self.max_changes = max_changes
        self.last_report: dict[str, JSON] | None = None
        """The service's answer to the last live report (None: not reported, or it failed)."""
        self._settled = threading.Event()
        self._settled.set()

    # -- the live surface ------------------------------------------------------------

    async def surface(self) -> dict[str, JSON]:
        """What the server exposes, in the MCP wire shape a ``--from-command`` capture gives."""
        server = self.server
        info: dict[str, JSON] = {"name": server.name}
        if server.version:
            info["version"] = server.version
        return {
            "serverInfo": info,
            "tools": [_dump(tool) for tool in await server.list_tools()],
            "prompts": [_dump(prompt) for prompt in await server.list_prompts()],
            "resources": [_dump(resource) for resource in await server.list_resources()],
            "resourceTemplates": [_dump(template) for template in await server.list_resource_templates()],
        }

    def _put_live(self, surface: dict[str, JSON]) -> dict[str, JSON] | None:
        try:
            answer = self.client.report_live(self.server_name, surface)
        except Exception:  # never raises by contract; a bug there must not stop the server either
            log.exception("reporting the live surface of %s failed", self.server_name)
            answer = None
        self.last_report = answer
        if answer is not None:
            log.info("live surface of %s reported: %s (lock version %s, max severity %s)", self.server_name,
                     answer.get("status"), answer.get("lock_version"), answer.get("maxSeverity"))
        return answer

    async def report_live(self) -> dict[str, JSON] | None:
        """Report the live surface now and wait for the answer (None when the service is
        down or refuses it; bounded by the client's timeout)."""
        surface = await self.surface()
        return await anyio.to_thread.run_sync(self._put_live, surface, limiter=_LIMITER)

    async def _report_in_background(self) -> None:
        """At start: list the surface here, send it from a thread, return at once."""
        try:
            surface = await self.surface()
        except Exception:
            log.exception("listing the surface of %s for the governance service failed", self.server_name)
            return
        self._settled.clear()

        def send() -> None:
            try:
                self._put_live(surface)
            finally:
                self._settled.set()

        threading.Thread(target=send, name=f"mcp-governance-live-{self.server_name}", daemon=True).start()

    # -- tool calls ------------------------------------------------------------------

    def _adopt(self, name: str) -> None:
        tool = _registered_tool(self.server, name)
        fn = getattr(tool, "fn", None)
        if fn is None or getattr(fn, _MARK, False):
            return
        tool.fn = _returning_results(fn, bool(getattr(tool, "is_async", False)))

    def _action(self, name: str, arguments: Any) -> str | None:
        """For a grouped tool, the action the arguments name with its discriminator."""
        schema = getattr(_registered_tool(self.server, name), "parameters", None)
        branches = split_actions(schema) if isinstance(schema, dict) else []
        if not branches or not isinstance(arguments, Mapping):
            return None
        value = arguments.get(branches[0].discriminator)
        return value if isinstance(value, str) and any(branch.name == value for branch in branches) else None

    def _ask(self, name: str, action: str | None, arguments: Any, timeout: float) -> str | None:
        try:
            answer = self.client.validation_error(self.server_name, name, action=action, arguments=arguments,
                                                  max_changes=self.max_changes, timeout=timeout)
        except Exception:  # e.g. arguments that are not JSON: the SDK's message it is
            log.info("no validation error from the governance service for %s", name, exc_info=True)
            return None
        if not answer or answer.get("valid") or not isinstance(answer.get("xml"), str) or not answer["xml"]:
            return None
        return answer["xml"]

    async def validation_error(self, name: str, arguments: Any) -> str | None:
        """The service's ``<validation_error>`` for these arguments, or None when it has
        none (it finds them valid, it is down, or it missed the budget)."""
        started = anyio.current_time()
        with anyio.move_on_after(self.budget):
            if not self._settled.is_set():
                # The start-up report is still on its way: the live schema is what to check against.
                await anyio.to_thread.run_sync(self._settled.wait, self.budget, abandon_on_cancel=True,
                                               limiter=_LIMITER)
            remaining = max(self.budget - (anyio.current_time() - started), 0.001)
            action = self._action(name, arguments)
            return await anyio.to_thread.run_sync(self._ask, name, action, arguments, remaining,
                                                  abandon_on_cancel=True, limiter=_LIMITER)
        log.info("the governance service missed the %.0f ms budget for %s; sending the SDK's message",
                 self.budget * 1000, name)
        return None

    async def call_tool(self, call_next: CallTool, name: str, arguments: dict[str, Any],
                        context: Any = None) -> Any:
        """``MCPServer.call_tool`` with the governance behaviour around it."""
        self._adopt(name)
        try:
            return await call_next(name, arguments, context)
        except UnexpectedToolError as exc:
            # A crash, or our ToolError raised by the handler: the envelope, never the text.
            return to_call_tool_result(error_from_exception(_origin(exc)))
        except SdkToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            xml = await self.validation_error(name, arguments)
            if xml is None:
                raise  # the SDK answers with its own validation message, unchanged
            return CallToolResult(content=[TextContent(type="text", text=xml)], is_error=True)

    def close(self) -> None:
        self.client.close()


# --------------------------------------------------------------------------- hooks


def _hook_call_tool(server: MCPServer, governed: Governed) -> None:
    call_next = server.call_tool

    async def call_tool(name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        return await governed.call_tool(call_next, name, arguments, context)

    server.call_tool = call_tool  # type: ignore[method-assign]  # the instance's own, ahead of the class's


def _hook_startup(server: MCPServer, governed: Governed) -> None:
    # The SDK's own Client and in-memory transport reach the low-level server the same way.
    lowlevel = getattr(server, "_lowlevel_server", None)
    inner: Callable[[Any], AbstractAsyncContextManager[Any]] | None = getattr(lowlevel, "lifespan", None)
    if lowlevel is None or inner is None:
        log.warning("this MCP SDK has no server lifespan to hook: call `await governed.report_live()` at start")
        return

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[Any]:
        await governed._report_in_background()
        async with inner(app) as state:
            yield state

    lowlevel.lifespan = lifespan


def govern(
    server: MCPServer,
    *,
    url: str,
    server_name: str | None = None,
    token: str | None = None,
    budget: float = DEFAULT_BUDGET,
    report_live: bool = True,
    report_timeout: float = REPORT_TIMEOUT,
    max_changes: int = 5,
) -> Governed:
    """Put ``server`` under the governance service at ``url``; call it once, after or before
    registering tools (every tool is covered, whenever it was added).

    ``server_name`` defaults to the server's name and must be a valid lockfile name.
    ``budget`` bounds what a failed call may wait for the service; ``report_live=False``
    skips the start-up report (then call ``await governed.report_live()``, or
    ``anyio.run(governed.report_live)`` from synchronous code, yourself).
    """
    if getattr(server, _MARK, None) is not None:
        raise RuntimeError(f"the server {server.name!r} is already governed")
    if not budget > 0:
        raise ValueError(f"budget must be a positive number of seconds, not {budget!r}")
    name = check_server_name(server_name or server.name, "server_name")
    client = GovernanceClient(url, token, timeout=report_timeout, hot_timeout=budget)
    governed = Governed(server, client, name, budget, max_changes)
    _hook_call_tool(server, governed)
    if report_live:
        _hook_startup(server, governed)
    setattr(server, _MARK, governed)
    return governed


__all__ = ["DEFAULT_BUDGET", "Governed", "as_call_tool_result", "govern"]
