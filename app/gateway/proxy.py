"""The MCP wiring of the gateway, on the official MCP SDK (docs/DECISIONS.md says why):
an SDK ``Client`` to the server it fronts (stdio or streamable HTTP), and a low-level SDK
``Server`` for the MCP client in front of it.

Requests the gateway does not govern are forwarded as raw JSON (method and params as the
client sent them, ``_meta`` and its progress token included; the result as the server sent
it): prompts, resources, templates, subscriptions, completions, logging level, ping.
Server-initiated requests (sampling, elicitation, roots) go to the client whose call is in
flight (else the last one seen); server notifications (progress, log messages, resource
updates, list changes) go to the client sessions. Cancelling a request cancels the
forwarded one (the SDK sends the courtesy ``notifications/cancelled`` upstream).

Only ``tools/list`` and ``tools/call`` are governed (:class:`app.gateway.core.GatewayCore`).
The lock is fetched again on ``notifications/tools/list_changed`` from the server and every
``lock_refresh`` seconds; either runs a new contract check (the timer only when the lock
moved), and the client is told when what it may see changed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any, get_args

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.server import Server
from mcp.server.caching import CacheableMethod, CacheHint
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from app.gateway.core import GatewayCore
from app.jsontypes import JSON

log = logging.getLogger("mcp_governance.gateway")

RESERVED_META = "io.modelcontextprotocol/"
"""Request ``_meta`` keys the SDK sets per connection (2026-07-28 envelopes): never forwarded."""

LISTS = (("tools/list", "tools", "tools"), ("prompts/list", "prompts", "prompts"),
         ("resources/list", "resources", "resources"),
         ("resources/templates/list", "resourceTemplates", "resources"))
MAX_PAGES = 1000


def _forwarded_params(params: Any) -> dict[str, Any] | None:
    if params is None:
        return None
    out = dict(params)
    meta = out.get("_meta")
    if isinstance(meta, dict):
        kept = {key: value for key, value in meta.items() if not str(key).startswith(RESERVED_META)}
        if kept:
            out["_meta"] = kept
        else:
            out.pop("_meta")
    return out


def _for_client(ctx: ServerRequestContext[Any, Any], result: dict[str, Any]) -> dict[str, Any]:
    """A result from the server (which speaks the handshake era), as the client's era needs
    it: 2026-07-28 results carry ``resultType``."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS and "resultType" not in result:
        return {**result, "resultType": "complete"}
    return result


def _dump(model: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = model.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped


class _GatewayServer(Server[Any]):
    """The SDK's low-level server, advertising the list changes the gateway sends (every
    transport asks the server for its initialization options)."""

    notification_options = NotificationOptions(tools_changed=True)

    def create_initialization_options(self, notification_options: NotificationOptions | None = None,
                                      experimental_capabilities: dict[str, dict[str, Any]] | None = None,
                                      extensions: dict[str, dict[str, Any]] | None = None) -> Any:
        return super().create_initialization_options(notification_options or self.notification_options,
                                                     experimental_capabilities, extensions)


class Gateway:
    """One upstream server behind one SDK server. ``upstream``: stdio parameters or a URL."""

    def __init__(self, core: GatewayCore, upstream: StdioServerParameters | str) -> None:
        self.core = core
        self.upstream = upstream
        self.client: Client | None = None
        self.server: Server[Any] | None = None
        self._sessions: dict[int, Any] = {}
        """A live client session per connection (the SDK's per-request session objects
        share their connection)."""
        self._inflight: dict[Any, ServerRequestContext[Any, Any]] = {}
        self._checking = anyio.Lock()
        """One contract check at a time: a verdict from an older listing never lands last."""
        self._task_group: anyio.abc.TaskGroup | None = None

    # -- upstream ------------------------------------------------------------------

    async def request(self, method: str, params: Any) -> dict[str, Any]:
        """Forward a request as raw JSON and return the server's result as raw JSON.

        The SDK's public ``send_request`` checks the result against the protocol's models,
        which refuse what published servers send and clients forgive (filesystem 2025.7.1's
        schemas without ``type``); the gateway forwards, so it sends through the session's
        dispatcher with the session's per-era stamp (headers, ``_meta``). The checks happen
        once, on the way to the client (the SDK's server sieves every result)."""
        assert self.client is not None
        session = self.client.session
        data: dict[str, Any] = {"method": method, "params": _forwarded_params(params)}
        opts: CallOptions = {}
        session._stamp(data, opts)
        result: dict[str, Any] = await session._dispatcher.send_raw_request(method, data.get("params"), opts)
        return result

    async def listing(self) -> dict[str, JSON]:
        """The server's whole surface as MCP sends it: serverInfo, every page of every list."""
        assert self.client is not None
        caps = self.client.server_capabilities
        info = self.client.server_info
        wire: dict[str, JSON] = {"serverInfo": _dump(info)} if info is not None else {}
        for method, key, capability in LISTS:
            if getattr(caps, capability, None) is None:
                continue
            items: list[JSON] = []
            cursor: str | None = None
            for _ in range(MAX_PAGES):
                page = await self.request(method, {"cursor": cursor} if cursor else None)
                items.extend(page.get(key) or [])
                cursor = page.get("nextCursor")
                if not cursor:
                    break
            wire[key] = items
        wire.setdefault("tools", [])
        return wire

    async def check(self) -> bool:
        """List the surface and run the contract check. True when what the client may see changed."""
        from app.ingest.load import surface_from_json

        wire = await self.listing()
        surface = surface_from_json(wire, "mcp", "live surface")  # the service's reader of live reports
        changed, _ = await anyio.to_thread.run_sync(self.core.check, wire, surface)
        threading.Thread(target=self.core.source.report, args=(self.core.settings.server, wire, surface),
                         name="mcp-governance-gateway-report", daemon=True).start()
        return changed

    # -- downstream sessions -------------------------------------------------------

    def _remember(self, ctx: ServerRequestContext[Any, Any]) -> None:
        session = ctx.session
        self._sessions[id(getattr(session, "_connection", session))] = session

    def _target(self) -> tuple[Any, Any]:
        """The client session (and request id) a server-initiated request goes to."""
        if self._inflight:
            ctx = next(reversed(self._inflight.values()))
            return ctx.session, ctx.request_id
        if self._sessions:
            return next(reversed(self._sessions.values())), None
        return None, None

    async def _broadcast(self, notification: Any, related: Any = None) -> None:
        for key, session in list(self._sessions.items()):
            try:
                await session.send_notification(notification, related_request_id=related)
            except Exception:  # a client that went away: forget it, serve the others
                log.debug("dropping a client session that cannot be notified", exc_info=True)
                self._sessions.pop(key, None)

    # -- server-initiated requests and notifications --------------------------------

    async def _ask_client(self, request: Any, result_type: Any) -> Any:
        session, related = self._target()
        if session is None:
            return types.ErrorData(code=types.INVALID_REQUEST, message="no client is connected to the gateway")
        metadata = ServerMessageMetadata(related_request_id=related) if related is not None else None
        try:
            return await session.send_request(request, result_type, metadata=metadata)
        except MCPError as exc:
            return exc.error

    async def _sampling(self, context: Any, params: types.CreateMessageRequestParams) -> Any:
        return await self._ask_client(types.CreateMessageRequest(params=params), types.CreateMessageResult)

    async def _elicitation(self, context: Any, params: types.ElicitRequestParams) -> Any:
        return await self._ask_client(types.ElicitRequest(params=params), types.ElicitResult)

    async def _roots(self, context: Any) -> Any:
        return await self._ask_client(types.ListRootsRequest(), types.ListRootsResult)

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            log.warning("the server's connection reported: %s", message)
            return
        if isinstance(message, types.ToolListChangedNotification):
            if self._task_group is not None:
                self._task_group.start_soon(self._tools_changed)
            return
        related = None
        if isinstance(message, types.ProgressNotification):
            token = message.params.progress_token
            for ctx in reversed(self._inflight.values()):
                meta = ctx.meta or {}
                if meta.get("progressToken") == token:
                    await ctx.session.send_notification(message, related_request_id=ctx.request_id)
                    return
        await self._broadcast(message, related)

    async def _tools_changed(self) -> None:
        """The server says its tools changed (maybe a rug pull): check again (the lock may have
        moved too: a change approved since)."""
        await self._recheck("tools/list_changed")

    async def _refresh_lock_forever(self, every: float) -> None:
        """Fetch the lock every ``every`` seconds; check again when it moved (a change approved,
        a new version locked)."""
        while True:
            await anyio.sleep(every)
            await self._recheck("a lock refresh", only_if_the_lock_moved=True)

    async def _recheck(self, after: str, *, only_if_the_lock_moved: bool = False) -> None:
        """Fetch the lock again (off the loop), run the contract check, and tell the client when
        what it may see changed. A failure keeps the last verdict; the log says why."""
        try:
            async with self._checking:
                held = self.core.lock_identity()
                await anyio.to_thread.run_sync(self.core.load_lock)
                if only_if_the_lock_moved and self.core.lock_identity() == held:
                    return
                changed = await self.check()
        except Exception:
            log.exception("the contract check after %s failed; keeping the last verdict", after)
            return
        if changed:
            await self._broadcast(types.ToolListChangedNotification())

    # -- downstream handlers -------------------------------------------------------

    def _forwarder(self) -> Callable[[ServerRequestContext[Any, Any], Any], Awaitable[dict[str, Any]]]:
        async def forward(ctx: ServerRequestContext[Any, Any], params: Any) -> dict[str, Any]:
            self._remember(ctx)
            key = object()
            self._inflight[key] = ctx
            try:
                return _for_client(ctx, self.core.clean_listing(ctx.method, await self.request(ctx.method, ctx.params)))
            finally:
                self._inflight.pop(key, None)

        return forward

    async def _list_tools(self, ctx: ServerRequestContext[Any, Any], params: Any) -> dict[str, Any]:
        self._remember(ctx)
        return _for_client(ctx, {"tools": self.core.served_tools()})

    async def _call_tool(self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> Any:
        self._remember(ctx)
        name, arguments = params.name, params.arguments or {}
        refused = self.core.refusal(name)
        if refused is not None:
            return _for_client(ctx, refused)
        invalid = await self.core.validation_error(name, arguments)
        if invalid is not None:
            return _for_client(ctx, invalid)
        key = object()
        self._inflight[key] = ctx
        try:
            result = await self.request("tools/call", ctx.params)
        finally:
            self._inflight.pop(key, None)
        return _for_client(ctx, self.core.with_awareness(name, result))

    async def _initialized(self, ctx: ServerRequestContext[Any, Any], params: Any) -> None:
        self._remember(ctx)

    async def _roots_changed(self, ctx: ServerRequestContext[Any, Any], params: Any) -> None:
        """The client's roots changed: the server may ask for them again."""
        self._remember(ctx)
        assert self.client is not None
        await self.client.session.send_roots_list_changed()

    def build_server(self) -> Server[Any]:
        """The SDK server the client talks to, with the upstream's identity and capabilities."""
        assert self.client is not None
        info = self.client.server_info
        caps = self.client.server_capabilities
        server = _GatewayServer(info.name if info else self.core.settings.server,
                                     version=(info.version if info else "") or "",
                                     title=info.title if info else None,
                                     instructions=self.client.instructions,
                                     # 2026-07-28 clients: what the server lists may change at any time
                                     cache_hints={method: CacheHint() for method in get_args(CacheableMethod)})
        forward = self._forwarder()
        methods: list[tuple[str, type[Any]]] = []
        if caps.prompts is not None:
            methods += [("prompts/list", types.PaginatedRequestParams), ("prompts/get", types.GetPromptRequestParams)]
        if caps.resources is not None:
            methods += [("resources/list", types.PaginatedRequestParams),
                        ("resources/templates/list", types.PaginatedRequestParams),
                        ("resources/read", types.ReadResourceRequestParams)]
            if caps.resources.subscribe:
                methods += [("resources/subscribe", types.SubscribeRequestParams),
                            ("resources/unsubscribe", types.UnsubscribeRequestParams)]
        if caps.logging is not None:
            methods.append(("logging/setLevel", types.SetLevelRequestParams))
        if caps.completions is not None:
            methods.append(("completion/complete", types.CompleteRequestParams))
        for method, params_type in methods:
            server.add_request_handler(method, params_type, forward)
        server.add_request_handler("tools/list", types.PaginatedRequestParams, self._list_tools)
        server.add_request_handler("tools/call", types.CallToolRequestParams, self._call_tool)
        server.add_notification_handler("notifications/initialized", types.NotificationParams, self._initialized)
        server.add_notification_handler("notifications/roots/list_changed", types.NotificationParams,
                                        self._roots_changed)
        server.notification_options = NotificationOptions(
            prompts_changed=bool(caps.prompts and caps.prompts.list_changed),
            resources_changed=bool(caps.resources and caps.resources.list_changed),
            tools_changed=True)
        self.server = server
        return server

    # -- running -------------------------------------------------------------------

    async def connect(self, stack: AsyncExitStack) -> None:
        """Connect to the server, run the first contract check, build the client-facing server."""
        client = Client(self.upstream, mode="legacy", cache=None, sampling_callback=self._sampling,
                        elicitation_callback=self._elicitation, list_roots_callback=self._roots,
                        message_handler=self._on_message)
        self.client = await stack.enter_async_context(client)
        self._task_group = await stack.enter_async_context(anyio.create_task_group())
        stack.callback(self._task_group.cancel_scope.cancel)
        await self.check()
        self.build_server()
        if self.core.settings.lock_refresh > 0:
            self._task_group.start_soon(self._refresh_lock_forever, self.core.settings.lock_refresh)

    async def serve_stdio(self) -> None:
        from mcp.server.stdio import stdio_server

        from app.gateway.stdio import loop_stdio

        async with AsyncExitStack() as stack:
            await self.connect(stack)
            assert self.server is not None
            pipes = await stack.enter_async_context(loop_stdio())
            streams = stdio_server(*pipes) if pipes is not None else stdio_server()
            async with streams as (read, write):
                await self.server.run(read, write, self.server.create_initialization_options())

    async def serve_http(self, host: str, port: int) -> None:
        """Streamable HTTP at ``http://host:port/mcp`` (port 0: a free one; the log says which)."""
        import socket

        import uvicorn

        async with AsyncExitStack() as stack:
            await self.connect(stack)
            assert self.server is not None
            app = self.server.streamable_http_app(host=host)
            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            sock = socket.socket(family, socket.SOCK_STREAM)
            stack.callback(sock.close)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
            sock.listen(128)
            shown = f"[{host}]" if family == socket.AF_INET6 else host
            log.warning("listening on http://%s:%d/mcp", shown, sock.getsockname()[1])
            config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
            await uvicorn.Server(config).serve(sockets=[sock])


__all__ = ["Gateway"]
