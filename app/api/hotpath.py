"""The awareness hot path, answered before the router.

``GET /servers/{server}/awareness`` is on every MCP server's error path, at the rate models
make mistakes. Through FastAPI's routing, dependency injection and parameter validation it
costs several times what the lookup itself does, so this pure ASGI handler answers the
common case directly: a valid request, an allowed caller, and a live report that knows the
tool. It uses the same token check and the same :meth:`Governance.cached_awareness`; the
moment anything is unusual (a bad parameter, a refused token, no live report, an unknown
tool) it steps aside and the regular route answers, with its problem+json errors.
"""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Receive, Scope, Send

from app.api import metrics
from app.api.problems import ApiError
from app.api.security import caller_for, permit
from app.names import is_server_name

ROUTE = "/servers/{server}/awareness"
PATH = re.compile(r"^/servers/([^/]+)/awareness$")
SCOPES = ("report", "read")
XML_HEADERS = [(b"content-type", b"application/xml")]
ANSWERED_BY = "x-awareness-path"
"""Response header naming the path that answered an awareness request: ``hot`` (here) or
``route`` (the FastAPI route); tests and operators can tell them apart."""
HOT = [(ANSWERED_BY.encode(), b"hot")]


class AwarenessHotPath:
    def __init__(self, app: ASGIApp, fastapi_app: Any) -> None:
        self.app = app
        self.fastapi_app = fastapi_app
        self._route = SimpleNamespace(path=ROUTE)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET":
            match = PATH.match(scope["path"])
            # scope["path"] is already percent-decoded once, exactly what the router matches:
            # decoding again would make ``tim%2565`` the server ``time`` here and ``tim%65`` there.
            if match is not None and await self._answer(scope, send, match.group(1)):
                return
        await self.app(scope, receive, send)

    async def _answer(self, scope: Scope, send: Send, server: str) -> bool:
        """True when answered here; False sends the request on to the route."""
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        tool = query.get("tool", [""])
        action = query.get("action", [None])
        limit = query.get("max", ["5"])
        if len(tool) != 1 or not tool[0] or len(action) != 1 or len(limit) != 1 or not is_server_name(server):
            return False
        instances = query.get("instance") or [value.decode("latin-1") for name, value in scope["headers"]
                                              if name == b"x-instance-id"]
        if len(instances) > 1 or (instances and instances[0] and not is_server_name(instances[0])):
            return False  # the route says what is wrong with it
        instance = instances[0] if instances and instances[0] else None
        if not limit[0].isdigit() or not 1 <= int(limit[0]) <= 20:
            return False
        state = self.fastapi_app.state
        authorization = next((value.decode("latin-1") for name, value in scope["headers"] if name == b"authorization"),
                             "")
        try:
            permit(caller_for(state.settings.tokens, authorization), SCOPES, server)
        except ApiError:
            return False
        text = state.governance.cached_awareness(server, tool[0], action[0] or None, int(limit[0]),
                                                 instance=instance)
        if text is None:
            return False
        scope["route"] = self._route  # the metrics label it with the route's template
        if text:
            metrics.AWARENESS.labels("hit").inc()
            body = text.encode("utf-8")
            headers = [*XML_HEADERS, *HOT, (b"content-length", str(len(body)).encode())]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": body})
        else:
            metrics.AWARENESS.labels("empty").inc()
            await send({"type": "http.response.start", "status": 204, "headers": HOT})
            await send({"type": "http.response.body", "body": b""})
        return True
