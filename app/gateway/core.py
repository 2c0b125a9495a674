"""The gateway's governance, apart from the MCP wiring: the contract check of a listed
surface, what ``tools/list`` serves, and what a ``tools/call`` gets before (or instead of)
reaching the server.

Every rule is the service's: the diff, the awareness, the ``<validation_error>`` and the
unknown-tool answer come from :class:`app.service.Governance` over an in-memory store that
holds the lock (:class:`app.gateway.locks.MemoryStore`); the mode's verdict is
:func:`app.gateway.policy.decide`. Only the hot path is the gateway's own: a valid call is
checked with a validator compiled once per schema digest and then forwarded untouched.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.to_thread

from app.canonical import digest_of
from app.gateway.locks import Fetched, LockSource, MemoryStore, SourceUnavailable
from app.gateway.policy import Mode, Verdict, decide, strip_hidden
from app.ingest.lenient import schema_as_clients_read_it
from app.jsontypes import JSON
from app.model import Surface
from app.service import Governance, NotFound, drift_status
from app.validation import validate_compiled
from mcp_governance.errors import ErrorCode, ToolErrorEnvelope, parse_tool_error, unknown_tool_error

log = logging.getLogger("mcp_governance.gateway")

LISTED = {"prompts/list": "prompts", "resources/list": "resources", "resources/templates/list": "resourceTemplates"}
"""The forwarded listings whose texts a model reads (the items' key in the result)."""
DEFAULT_BUDGET = 0.2
"""Seconds a call may wait on the governance service; past it the local answer goes out."""


@dataclass(frozen=True)
class Settings:
    server: str
    mode: Mode = Mode.OBSERVE
    allow_new: bool = False
    """enforce/pin: serve tools the lock does not know (default: hidden until locked)."""
    budget: float = DEFAULT_BUDGET
    max_changes: int = 5
    lock_refresh: float = 60.0
    """Seconds between fetches of the lock besides connect and tools/list_changed (0: never), so
    a change approved in the service reaches a running gateway without the server changing."""


@dataclass(frozen=True)
class Report:
    """One contract check: what the log says and what the live report carried."""

    origin: str
    lock_version: int | None
    status: str
    """``unlocked``, ``in sync`` or ``drifted`` (max severity)."""
    blocked: dict[str, str]
    pinned: tuple[str, ...]
    hidden_removed: dict[str, int]

    def line(self, server: str, mode: Mode) -> str:
        parts = [f"gateway {server} ({mode}): lock from {self.origin}"
                 + (f" version {self.lock_version}" if self.lock_version else ""), self.status]
        if self.blocked:
            parts.append("blocked " + ", ".join(sorted(self.blocked)))
        if self.pinned:
            parts.append("pinned to the locked text " + ", ".join(self.pinned))
        if self.hidden_removed:
            parts.append("hidden characters removed from " + ", ".join(
                f"{name} ({count})" for name, count in sorted(self.hidden_removed.items())))
        return "; ".join(parts)


@dataclass
class _State:
    verdict: Verdict
    served: list[dict[str, JSON]]
    schemas: dict[str, tuple[Any, str]]
    """Live input schema and its digest, per live tool."""
    visible: tuple[str, ...]
    report: Report
    served_prompts: list[dict[str, JSON]] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _as_clients_read_it(tool: dict[str, JSON]) -> dict[str, JSON]:
    """The tool with a schema root that says nothing of its type read as an object, as the
    lock reads it (and as the SDK's server requires to send it)."""
    out = dict(tool)
    for key in ("inputSchema", "outputSchema"):
        if key in out:
            out[key] = schema_as_clients_read_it(out[key])
    return out


def _text_result(text: str) -> dict[str, JSON]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


def _status(result: Any, lock: Any, live_digest: str) -> str:
    """The log line's status: the dashboard's word (:func:`app.service.drift_status`), with
    what the gateway adds (the changes it judged)."""
    status = drift_status(lock.record.integrity_digest if lock is not None else None, live_digest)
    if status == "unlocked":
        return "unlocked (no lock: every tool is new)"
    if result is None or not result.deltas:
        return status
    worst = result.max_severity
    return f"{status} ({len(result.deltas)} change(s), worst {worst.value if worst else 'none'})"


class GatewayCore:
    """The governance state of one gateway: lock, live surface, verdict, served tools."""

    def __init__(self, settings: Settings, source: LockSource) -> None:
        self.settings = settings
        self.source = source
        self.store = MemoryStore()
        self.gov = Governance(self.store)
        self._state: _State | None = None
        self._fetched: Fetched | None = None
        self._mutex = threading.Lock()

    # -- the contract check --------------------------------------------------------

    def load_lock(self, fresh: bool = True) -> Fetched:
        """The lock: from the source (``fresh``), else its cached copy, else the last one held."""
        server = self.settings.server
        if fresh:
            try:
                fetched = self.source.fetch(server)
            except SourceUnavailable as exc:
                fallback = self.source.cached(server) or self._fetched
                if fallback is None:
                    log.warning("%s; no cached lock of %s either: every tool is treated as new", exc, server)
                    fallback = Fetched(None, "nowhere (the source is unavailable and nothing is cached)")
                else:
                    log.warning("%s; serving the last known lock (%s)", exc, fallback.origin)
                fetched = fallback
        else:
            cached = self.source.cached(server)
            if cached is None:
                return self.load_lock(True)
            fetched = cached
        self._fetched = fetched
        self.store.set_lock(server, fetched.lock)
        return fetched

    def lock_identity(self) -> tuple[int, str] | None:
        """The held lock's version and digest (None: no lock): a refresh that got the same one
        needs no new contract check."""
        lock = self._fetched.lock if self._fetched is not None else None
        return (lock.record.version, lock.record.integrity_digest) if lock is not None else None

    def check(self, wire: dict[str, JSON], surface: Surface) -> tuple[bool, Report]:
        """Diff the live surface (``wire``: the listing as MCP sent it; ``surface``: read)
        against the lock held, decide, and rebuild what ``tools/list`` serves. Returns
        whether the served tools changed, and the report."""
        settings = self.settings
        if self._fetched is None:
            self.load_lock()
        assert self._fetched is not None
        record = self.gov.report_live(settings.server, surface)
        view = self.gov.live_view(settings.server)
        result = view.result if view is not None else None
        raw_tools = [tool for tool in wire.get("tools", []) if isinstance(tool, dict) and "name" in tool]
        verdict = decide(settings.mode, settings.server, [tool["name"] for tool in raw_tools], result,
                         allow_new=settings.allow_new)
        lock = self._fetched.lock
        served: list[dict[str, JSON]] = []
        removed: dict[str, int] = {}
        pinned: list[str] = []
        for tool in raw_tools:
            name = tool["name"]
            judged = verdict.tools[name]
            if not judged.visible:
                continue
            definition: dict[str, JSON] = _as_clients_read_it(tool)
            if judged.pinned and lock is not None and name in lock.surface.tools:
                definition = {**lock.surface.tools[name].to_mcp(), "name": name}
                pinned.append(name)
            if settings.mode is not Mode.OBSERVE:
                definition, count = strip_hidden(definition)
                if count:
                    removed[name] = count
            served.append(definition)
        schemas = {}
        for tool in raw_tools:
            schema = schema_as_clients_read_it(tool.get("inputSchema"))
            schemas[tool["name"]] = (schema, digest_of(schema))
        report = Report(self._fetched.origin, record.lock_version, _status(result, lock, record.live_digest),
                        verdict.blocked(), tuple(pinned), removed)
        state = _State(verdict, served, schemas, tuple(verdict.visible()), report)
        with self._mutex:
            changed = self._state is None or self._state.served != served
            self._state = state
        log.info("%s", report.line(settings.server, settings.mode))
        return changed, report

    @property
    def state(self) -> _State:
        if self._state is None:
            raise RuntimeError("the gateway has not checked the server's surface yet")
        return self._state

    def served_tools(self) -> list[dict[str, JSON]]:
        return self.state.served

    def clean_listing(self, method: str, result: dict[str, Any]) -> dict[str, Any]:
        """A forwarded prompts or resources listing: in enforce and pin, with the hidden
        characters removed from what the model reads (titles and descriptions), said in the log."""
        key = LISTED.get(method)
        if key is None or self.settings.mode is Mode.OBSERVE or not isinstance(result.get(key), list):
            return result
        items = result[key]
        clean, removed = strip_hidden(items)
        if not removed:
            return result
        log.warning("gateway %s: removed %d hidden character(s) from the %s listing", self.settings.server, removed,
                    key)
        return {**result, key: clean}

    # -- tools/call ----------------------------------------------------------------

    def refusal(self, name: str) -> dict[str, JSON] | None:
        """The answer when the call must not reach the server because of its name: an
        unknown tool (UNKNOWN_ACTION, with what happened to it) or a blocked one (FORBIDDEN)."""
        state = self.state
        judged = state.verdict.tools.get(name)
        if judged is None:
            return self.unknown(name)
        if not judged.visible:
            envelope = ToolErrorEnvelope(
                code=ErrorCode.FORBIDDEN, message=judged.reason or "Tool blocked by the governance gateway.",
                suggestion="Do not call this tool until its change is approved; use another tool or tell the user.",
                available_actions=state.visible, details=(("tool", name), ("mode", self.settings.mode.value)))
            return envelope.to_result()
        return None

    def unknown(self, name: str) -> dict[str, JSON]:
        server = self.settings.server
        try:
            known = self.gov.unknown_tool(server, name, self.settings.max_changes)
            awareness = known.xml or None
        except NotFound:
            awareness = None
        return unknown_tool_error(name, self.state.visible, awareness=awareness).to_result()

    def problems(self, name: str, arguments: Any) -> bool:
        """Whether the arguments fail the tool's live input schema (the compiled validator)."""
        schema, digest = self.state.schemas[name]
        if schema is None:
            return False
        return bool(validate_compiled(schema, arguments, digest))

    def local_validation_error(self, name: str, arguments: Any) -> str | None:
        """The service function's ``<validation_error>`` with ``<contract_awareness>``."""
        try:
            valid, xml = self.gov.validation_error(self.settings.server, name, None, arguments=arguments,
                                                   max_changes=self.settings.max_changes)
        except NotFound:
            return None
        return None if valid else xml

    async def validation_error(self, name: str, arguments: Any) -> dict[str, JSON] | None:
        """The answer to a call whose arguments fail the live schema (None: they pass).
        The service's answer when it gives one within the budget, else the local one."""
        if not self.problems(name, arguments):
            return None
        xml: str | None = None
        if self.source.remote:
            budget = self.settings.budget
            with anyio.move_on_after(budget):
                xml = await anyio.to_thread.run_sync(self.source.validation_error, self.settings.server, name,
                                                     arguments, self.settings.max_changes, budget,
                                                     abandon_on_cancel=True)
            if xml is None:
                log.info("no validation error from the governance service within %.0f ms for %s; answering "
                         "from the lock held", budget * 1000, name)
        xml = xml or self.local_validation_error(name, arguments)
        return _text_result(xml) if xml else None

    def with_awareness(self, name: str, result: Mapping[str, Any]) -> dict[str, Any]:
        """A server's own error that is not a ``<tool_error>``: the tool's
        ``<contract_awareness>`` appended (what changed since the lock may be why it failed)."""
        content = result.get("content")
        if not result.get("isError") or not isinstance(content, list):
            return dict(result)
        texts = [item.get("text") for item in content if isinstance(item, dict)]
        if any(isinstance(text, str) and parse_tool_error(text) is not None for text in texts):
            return dict(result)
        try:
            section = self.gov.awareness(self.settings.server, name, None, self.settings.max_changes)
        except NotFound:
            return dict(result)
        if not section:
            return dict(result)
        return {**result, "content": [*content, {"type": "text", "text": section}]}


__all__ = ["DEFAULT_BUDGET", "GatewayCore", "Report", "Settings"]
