"""What every framework integration shares: the governance client, the budget, the start-up
report, the validation error and the unknown-tool answer. A framework module adds only how
to list the surface, where to hook the call, and how to build its result type.

Everything here runs on the server's event loop through anyio (every supported framework
runs on it); the blocking httpx calls go to a few worker threads of our own, so a slow
service never takes the threads a framework runs synchronous tools on.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

import anyio
import anyio.to_thread

from mcp_governance.client import GovernanceClient
from mcp_governance.errors import (
    ErrorBuilder,
    ToolError,
    ToolErrorEnvelope,
    parse_tool_error,
    unknown_tool_error,
)
from mcp_governance.jsontypes import JSON

log = logging.getLogger("mcp_governance.integrations")

DEFAULT_BUDGET = 0.2
"""Seconds a failed call may wait for the service before the framework's own message goes out."""
REPORT_TIMEOUT = 5.0
"""Bounds the start-up report (it runs in a background thread, so nothing waits on it)."""
MARK = "__mcp_governance__"
"""The attribute that marks a governed server (and a wrapped handler)."""

_LIMITER: anyio.CapacityLimiter | None = None


def limiter() -> anyio.CapacityLimiter:
    """Governance calls get their own few worker threads (created on first use, inside a loop)."""
    global _LIMITER
    if _LIMITER is None:
        _LIMITER = anyio.CapacityLimiter(4)
    return _LIMITER


def dump(model: Any) -> JSON:
    """A framework's pydantic model as MCP wire JSON (camelCase, no nulls); dicts pass through."""
    if isinstance(model, Mapping):
        return dict(model)
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def is_tool_error_result(value: Any) -> bool:
    """A ``tool_error(...)``/``with_warning(...)`` dict: exactly content and isError, with an envelope."""
    if not isinstance(value, Mapping) or set(value) != {"content", "isError"}:
        return False
    content = value.get("content")
    return isinstance(content, list) and any(
        isinstance(item, Mapping) and isinstance(item.get("text"), str) and parse_tool_error(item["text"]) is not None
        for item in content)


def is_envelope(value: Any) -> bool:
    """What a handler returns to send a ``<tool_error>``: an envelope, a builder, a
    :class:`ToolError`, or a ``tool_error(...)`` dict."""
    return isinstance(value, (ToolErrorEnvelope, ErrorBuilder, ToolError)) or is_tool_error_result(value)


def result_dict(value: Any) -> dict[str, Any]:
    """An envelope-like value as the MCP tool result dict ``{"content", "isError"}``."""
    if isinstance(value, ToolError):
        return value.to_result()
    if isinstance(value, (ToolErrorEnvelope, ErrorBuilder)):
        return dict(value.to_result())
    return {"content": [dict(item) for item in value["content"]], "isError": bool(value["isError"])}


def origin(exc: BaseException, wrappers: tuple[type[BaseException], ...]) -> BaseException:
    """What the handler really raised, under a framework's wrapping exceptions."""
    while isinstance(exc, wrappers) and exc.__cause__ is not None:
        exc = exc.__cause__
    return exc


class Governed:
    """A governed server: its governance client, name and budget, and the start-up report.

    Framework modules subclass it with :meth:`surface` (the live surface in wire shape)
    and :meth:`tool_names`; :func:`mcp_governance.integrations.govern` builds the right one.
    """

    framework = "?"
    lifespan_state: Any = None
    """What the server's lifespan yielded (the low-level 2.x listing context needs it)."""

    def __init__(self, server: Any, client: GovernanceClient, server_name: str, budget: float,
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

    # -- what a framework module provides ---------------------------------------------

    async def surface(self) -> dict[str, JSON]:  # pragma: no cover - every framework module overrides it
        """What the server exposes, in the MCP wire shape a ``--from-command`` capture gives."""
        raise NotImplementedError

    async def tool_names(self) -> list[str]:
        """The names of the tools the server has now (for an unknown tool's answer)."""
        surface = await self.surface()
        return [tool["name"] for tool in surface.get("tools", []) if isinstance(tool, Mapping)]

    def install(self) -> None:  # pragma: no cover - every framework module overrides it
        """Hook the framework: tool calls always, and start-up when the live report is on."""
        raise NotImplementedError

    def install_startup(self) -> None:  # pragma: no cover - every framework module overrides it
        raise NotImplementedError

    # -- the live surface ------------------------------------------------------------

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
        return await anyio.to_thread.run_sync(self._put_live, surface, limiter=limiter())

    async def report_in_background(self) -> None:
        """At start: list the surface here, send it from a thread, return at once."""
        try:
            surface = await self.surface()
        except Exception:  # a listing bug must not stop the server: it starts ungoverned-at-start
            log.exception("listing the surface of %s for the governance service failed", self.server_name)
            return
        self._settled.clear()

        def send() -> None:
            try:
                self._put_live(surface)
            finally:
                self._settled.set()

        threading.Thread(target=send, name=f"mcp-governance-live-{self.server_name}", daemon=True).start()

    # -- failed calls ----------------------------------------------------------------

    def _ask(self, name: str, arguments: Any, timeout: float) -> str | None:
        try:
            answer = self.client.validation_error(self.server_name, name, arguments=arguments,
                                                  max_changes=self.max_changes, timeout=timeout)
        except Exception:  # e.g. arguments that are not JSON: the framework's message it is
            log.info("no validation error from the governance service for %s", name, exc_info=True)
            return None
        if not answer or answer.get("valid") or not isinstance(answer.get("xml"), str) or not answer["xml"]:
            return None
        return answer["xml"]

    async def _wait_for_start_report(self, started: float) -> float:
        """The start-up report may still be on its way: the live schema is what to check
        against. Returns what is left of the budget."""
        if not self._settled.is_set():
            await anyio.to_thread.run_sync(self._settled.wait, self.budget, abandon_on_cancel=True,
                                           limiter=limiter())
        return max(self.budget - (anyio.current_time() - started), 0.001)

    async def validation_error(self, name: str, arguments: Any) -> str | None:
        """The service's ``<validation_error>`` for these arguments (the service finds the
        action of a grouped tool from its discriminator), or None when it has none (it finds
        them valid, it is down, or it missed the budget)."""
        started = anyio.current_time()
        with anyio.move_on_after(self.budget):
            remaining = await self._wait_for_start_report(started)
            return await anyio.to_thread.run_sync(self._ask, name, arguments, remaining,
                                                  abandon_on_cancel=True, limiter=limiter())
        log.info("the governance service missed the %.0f ms budget for %s; sending the framework's message",
                 self.budget * 1000, name)
        return None

    async def unknown_tool(self, name: str) -> ToolErrorEnvelope:
        """``UNKNOWN_ACTION`` for a tool the server lacks: the tools it has and, within the
        budget, the service's awareness for the name (removed, or renamed to what)."""
        started = anyio.current_time()
        section = ""
        with anyio.move_on_after(self.budget):
            await self._wait_for_start_report(started)
            section = await anyio.to_thread.run_sync(self._awareness, name, abandon_on_cancel=True,
                                                     limiter=limiter())
        return unknown_tool_error(name, await self.tool_names(), awareness=section or None)

    def _awareness(self, name: str) -> str:
        try:
            section = self.client.awareness(self.server_name, name, max_changes=self.max_changes)
            # A section that does not parse is the service's bug; the answer goes out without it.
            return section if section and parse_tool_error(section) is not None else ""
        except Exception:  # never raises by contract; the answer goes out without awareness
            log.info("no contract awareness for %s/%s", self.server_name, name, exc_info=True)
            return ""

    def close(self) -> None:
        self.client.close()


__all__ = ["DEFAULT_BUDGET", "MARK", "REPORT_TIMEOUT", "Governed", "dump", "is_envelope", "origin", "result_dict"]


def input_problem(schema: Any, arguments: Any) -> bool:
    """True when ``arguments`` fail ``schema`` (jsonschema, a dependency of every MCP SDK).
    A ``$ref`` outside the schema is never fetched (a registry whose retrieve refuses):
    such a reference is unknown, and the arguments are not judged by it."""
    if not isinstance(schema, Mapping):
        return False
    import jsonschema

    try:
        validator = jsonschema.validators.validator_for(schema)
        return next(iter(validator(schema, registry=_no_retrieval()).iter_errors(arguments)), None) is not None
    except jsonschema.exceptions.SchemaError:
        return False
    except Exception:  # noqa: BLE001 - an unknown (never fetched) reference: not the arguments' fault
        return False


def _no_retrieval() -> Any:
    from referencing import Registry
    from referencing.exceptions import NoSuchResource

    def refuse(uri: str) -> Any:
        raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # attrs field; the stubs omit it

    return Registry(retrieve=refuse)  # type: ignore[call-arg]
