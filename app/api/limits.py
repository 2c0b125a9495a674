"""Request body limit (413), enforced while the body streams in, before it is parsed."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.problems import ApiError
from app.budget import budget


class BodyTooLarge(ApiError):
    def __init__(self, limit: int) -> None:
        super().__init__(413, "payload_too_large", f"request body larger than {limit} bytes")


class BodyLimit:
    """Pure ASGI middleware: refuses a declared Content-Length over the limit at once, and
    stops reading a streamed body as soon as it passes the limit."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > self.limit:
                    await _refuse(scope, send, self.limit)
                    return
        seen = 0
        limit = self.limit

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge(limit)
            return message

        await self.app(scope, limited, send)


async def _refuse(scope: Scope, send: Send, limit: int) -> None:
    from app.api.problems import problem

    response = problem(413, "payload_too_large", f"request body larger than {limit} bytes")
    await response(scope, _drain, send)


async def _drain() -> Message:
    return {"type": "http.disconnect"}


class WorkBudget:
    """Pure ASGI middleware: every request runs under its total work budget
    (:mod:`app.budget`; ``work_budget_seconds``), which follows it into the threadpool."""

    def __init__(self, app: ASGIApp, seconds: float | None) -> None:
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with budget(self.seconds):
            await self.app(scope, receive, send)
