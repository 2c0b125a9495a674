"""The governance service: the engine and the store put together, with no HTTP in it.

The API routes and the CLI call these methods. Everything that diffs happens at lock
time or when a server reports its live surface; the awareness path only reads what was
computed then (it is on every MCP server's error path).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from app import etags
from app.awareness import removal, render_awareness, render_removed, render_validation_error
from app.diff import DiffResult, Severity, diff
from app.diff.serialize import result_from_json
from app.jsontypes import JSON
from app.lockfile import lock_document, read_document, utc_stamp, write_surface
from app.model import Surface, Tool
from app.names import is_server_name
from app.policy import Policy
from app.problems import InputError
from app.store import (
    CorruptLockfile,
    LiveRecord,
    LockStore,
    RefusedAttempt,
    StoredLock,
    StoreError,
    StoreUnavailable,
    UnknownVersion,
    VersionConflict,
    VersionRecord,
)
from app.validation import as_problem, validate_compiled

log = logging.getLogger("mcp_governance.service")


LIVE = "live"
"""The name of a server's last live surface wherever a version number is expected."""


class ServiceError(Exception):
    """A refusal with a stable code the API turns into problem+json."""

    status = 400
    code = "bad_request"

    def __init__(self, detail: str, **extra: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.extra = extra


class NotFound(ServiceError):
    status, code = 404, "not_found"


class NeedsApproval(ServiceError):
    status, code = 409, "approval_required"


class Forbidden(ServiceError):
    status, code = 403, "forbidden_scope"


class PreconditionFailed(ServiceError):
    status, code = 412, "precondition_failed"


class ServiceBusy(ServiceError):
    status, code = 503, "store_busy"


class Corrupt(ServiceError):
    status, code = 409, "lockfile_corrupt"


@dataclass(frozen=True)
class LockOutcome:
    created: bool
    record: VersionRecord
    result: DiffResult


@dataclass(frozen=True)
class LockRequest:
    """Who asks for a lock and why (recorded in the audit log)."""

    who: str | None = None
    commit: str | None = None
    reason: str | None = None
    approved_by: str | None = None
    may_approve: bool = True
    """False when auth is on and the token lacks the ``approve`` scope."""
    if_match: str | None = None
    """``If-Match`` (RFC 9110): lock only over this digest (``*``: over any existing lock)."""
    if_none_match: str | None = None
    """``If-None-Match``: ``*`` locks only a server with no lock yet; a list, only over another digest."""
    implicit_approver: str | None = None
    """A token with the ``approve`` scope approves BREAKING changes by itself: its name is
    recorded as the approver, but only on a lock that needed approval."""
    base_version: int | None = None
    """Lock only when the last version is still this one (approving a refused attempt)."""


def empty_surface(server: str) -> Surface:
    return Surface(server=server, source_format="none")


def summarizer(policy: Policy | None) -> Callable[[Surface | None, Surface], tuple[dict[str, int], str | None]]:
    """Counts and max severity of a version against the one before it (what the store
    records for a lockfile committed by hand). Nothing for a first version, as for a
    first version locked through :meth:`Governance.lock`."""

    def summarize(previous: Surface | None, surface: Surface) -> tuple[dict[str, int], str | None]:
        if previous is None:
            return {}, None
        result = diff(previous, surface, policy)
        return result.summary, result.max_severity.value if result.max_severity else None

    return summarize


@dataclass(frozen=True)
class UnknownTool:
    """A call to a tool the live surface does not have (:meth:`Governance.unknown_tool`)."""

    tool: str
    removed: bool
    """The lock knew the tool and the live surface dropped it (removed or renamed)."""
    replacement: str | None
    """The tool to call instead: a rename's new name, or the one its deprecation notice named."""
    available: tuple[str, ...]
    """The tools the live surface has (the lock's, without a live report), sorted."""
    xml: str
    """The ``<contract_awareness>`` that says the tool was removed; '' when ``removed`` is False."""


@dataclass
class _LiveView:
    """A live record parsed once per process (the awareness hot path reuses it)."""

    record: LiveRecord
    result: DiffResult | None
    tools: frozenset[str]
    surface: Surface | None = None
    expires: float = float("inf")
    """When the report stops counting as its instance's (seconds since the epoch)."""
    rendered: OrderedDict[tuple[str, str | None, int, tuple[str, ...]], str] = field(default_factory=OrderedDict)


class Governance:
    RENDER_CACHE = 512

    def __init__(self, store: LockStore, policy: Policy | None = None, instance_ttl: float = 3600.0) -> None:
        self.store = store
        self.instance_ttl = instance_ttl
        """Seconds an instance's live report counts after it was made (then the server's last is used)."""
        self.policy = policy
        """One policy for every server: its per-server sections apply by server name."""
        self._views: dict[tuple[str, str | None], _LiveView] = {}
        self._views_lock = threading.Lock()
        self._reconciled: dict[str, object] = {}
        self.clock: Callable[[], float] = time.time
        """Now, in seconds since the epoch: every stamp and expiry of the service reads it (a test
        moves it forward instead of sleeping through an instance's expiry)."""

    # -- diffing -------------------------------------------------------------------

    def diff(self, before: Surface, after: Surface) -> DiffResult:
        return diff(before, after, self.policy)

    # -- locks ---------------------------------------------------------------------

    def current(self, server: str) -> StoredLock | None:
        try:
            return self.store.current(server)
        except CorruptLockfile as exc:
            raise Corrupt(str(exc), server=server) from None

    def history(self, server: str) -> list[VersionRecord]:
        """Every accepted version, oldest first, including a lockfile committed by hand
        that nobody has read yet (reading the current lock adopts it)."""
        with contextlib.suppress(CorruptLockfile):  # not adopted; the versions before it are still history
            self.store.current(server)
        return self.store.history(server)

    def version(self, server: str, number: int) -> StoredLock:
        """One accepted version (see :meth:`history`). Raises UnknownVersion."""
        self.history(server)
        return self.store.version(server, number)

    def lock(self, server: str, surface: Surface, request: LockRequest) -> LockOutcome:
        """Record a known-good surface: idempotent for an unchanged digest, refused when it
        breaks the previous lock without approval or when If-Match names another digest.

        The previous lock is the current file, or, when that file was deleted or is corrupt,
        the last accepted version: removing a lockfile by hand never waives the approval."""
        if request.approved_by and not request.may_approve:
            # Always, not only when approval is needed: a lock-only caller must not write an
            # approver into the audit log of any lock (DECISIONS.md "Hardening").
            raise Forbidden("approved_by needs a token with the approve scope; leave it out to lock without approval")
        surface = replace(surface, server=server)
        for _ in range(self.COMMIT_ATTEMPTS):
            try:
                return self._lock_once(server, surface, request)
            except VersionConflict:
                continue  # another writer (of any process or replica) got there first: read again
        raise ServiceBusy(f"the lock of {server!r} kept changing while this lock was written; try again",
                          server=server)

    COMMIT_ATTEMPTS = 50

    def _lock_once(self, server: str, surface: Surface, request: LockRequest) -> LockOutcome:
        """One read-diff-commit round; the commit is conditional on the last version read."""
        try:
            current = self.store.current(server)
        except CorruptLockfile:
            current = None
        history = self.store.history(server)  # reading the current file may adopt a hand-committed one
        last = history[-1] if history else None
        if request.base_version is not None and (last.version if last else 0) != request.base_version:
            raise PreconditionFailed(f"the lock of {server!r} changed since the attempt was refused; "
                                     "lock it again to compare it with the current version", server=server)
        if current is not None:
            previous_surface: Surface | None = current.surface
        else:
            previous_surface = self.store.version(server, last.version).surface if last else None
        current_digest = current.record.integrity_digest if current else None
        if request.if_match is not None and not etags.if_match(request.if_match, current_digest):
            raise PreconditionFailed(
                f"If-Match {request.if_match!r} does not name the current digest", current=current_digest)
        if request.if_none_match is not None and not etags.if_none_match(request.if_none_match, current_digest):
            raise PreconditionFailed(
                f"If-None-Match {request.if_none_match!r} names the current lock", current=current_digest)
        if current is not None and current_digest == surface.integrity_digest:
            return LockOutcome(False, current.record, self.diff(current.surface, current.surface))
        result = self.diff(previous_surface or empty_surface(server), surface)
        breaking = [d for d in result.deltas if d.severity is Severity.BREAKING]
        approver = request.approved_by or (request.implicit_approver if breaking else None)
        if breaking and not (approver and request.may_approve):
            why = "set approved_by to accept them (a token with the approve scope)"
            attempt = self._remember_refusal(server, surface, request, last, result)
            extra = {"attempt": attempt.id} if attempt is not None else {}
            raise NeedsApproval(
                f"{len(breaking)} BREAKING change(s) against the current lock; {why}",
                deltas=[d.to_json() for d in breaking], **extra)
        now = utc_stamp(self.clock())
        record = VersionRecord(
            server=server,
            version=(last.version + 1) if last else 1,
            integrity_digest=surface.integrity_digest,
            previous_digest=last.integrity_digest if last else None,
            locked_at=now,
            who=request.who,
            commit=request.commit,
            reason=request.reason,
            approved_by=approver,
            server_version=surface.server_version,
            summary=result.summary if previous_surface else {},
            max_severity=(result.max_severity.value if result.max_severity else None) if previous_surface else None,
        )
        self.store.commit_version(record, write_surface(surface, now).encode("utf-8"),
                                  replace(surface, generated_at=now))
        self._refresh_live(server)
        return LockOutcome(True, record, result)

    # -- refused attempts and their approval ----------------------------------------

    def _remember_refusal(self, server: str, surface: Surface, request: LockRequest,
                          base: VersionRecord | None, result: DiffResult) -> RefusedAttempt | None:
        """Keep a refused lock so that an approver can accept it later.
        The refusal is the answer either way: failing to keep it is logged, not raised."""
        now = utc_stamp(self.clock())
        base_digest = base.integrity_digest if base else ""
        attempt = RefusedAttempt(
            server=server,
            id=RefusedAttempt.make_id(base_digest, surface.integrity_digest),
            attempted_at=now,
            base_version=base.version if base else 0,
            base_digest=base_digest,
            integrity_digest=surface.integrity_digest,
            surface_document=lock_document(surface, now),
            who=request.who,
            commit=request.commit,
            reason=request.reason,
            server_version=surface.server_version,
            summary=result.summary,
        )
        try:
            self.store.save_refused(attempt)
        except (OSError, StoreError):
            log.exception("could not keep the refused lock attempt of %s", server)
            return None
        return attempt

    def refused_attempts(self, server: str) -> list[RefusedAttempt]:
        """The refused attempts that can still be approved, newest first: those refused
        against the version that is still the last one (once the lock moves on, an attempt
        would be compared with another base, so it is no longer offered)."""
        history = self.history(server)
        base = (history[-1].version, history[-1].integrity_digest) if history else (0, "")
        return [attempt for attempt in self.store.refused(server)
                if (attempt.base_version, attempt.base_digest) == base and attempt.integrity_digest != base[1]]

    def refused_attempt(self, server: str, attempt_id: str) -> RefusedAttempt:
        """One approvable attempt. Raises NotFound, or PreconditionFailed when the lock
        moved on since it was refused."""
        for attempt in self.refused_attempts(server):
            if attempt.id == attempt_id:
                return attempt
        if any(attempt.id == attempt_id for attempt in self.store.refused(server)):
            raise PreconditionFailed(f"the lock of {server!r} changed since attempt {attempt_id} was refused; "
                                     "lock it again to compare it with the current version",
                                     server=server, attempt=attempt_id)
        raise NotFound(f"server {server!r} has no refused attempt {attempt_id!r}", server=server, attempt=attempt_id)

    def refused_diff(self, attempt: RefusedAttempt) -> DiffResult:
        """What approving the attempt accepts: its surface against the version it was refused against."""
        before = (self.store.version(attempt.server, attempt.base_version).surface if attempt.base_version
                  else empty_surface(attempt.server))
        return self.diff(before, read_document(attempt.surface_document))

    def approve_refused(self, server: str, attempt_id: str, approved_by: str, reason: str) -> LockOutcome:
        """Lock a refused attempt with an approval. The caller's face has checked that the
        approver may approve (the ``approve`` scope); ``approved_by`` is the identity
        recorded in the audit log, ``reason`` why it was accepted; who asked for the lock
        and its commit stay those of the attempt."""
        if not approved_by.strip():
            raise InputError("say who approves", "approved_by")
        if not reason.strip():
            raise InputError("an approval needs a reason", "reason")
        attempt = self.refused_attempt(server, attempt_id)
        request = LockRequest(who=attempt.who, commit=attempt.commit, reason=reason.strip(),
                              approved_by=approved_by.strip(), may_approve=True, if_match=None,
                              base_version=attempt.base_version)
        return self.lock(server, read_document(attempt.surface_document), request)

    # -- live surfaces -------------------------------------------------------------

    def report_live(self, server: str, surface: Surface, instance: str | None = None) -> LiveRecord:
        """An MCP server reports what it exposes now: diff it against the lock once, keep it
        (as ``instance``'s last report when the instance names itself)."""
        surface = replace(surface, server=server)
        record = self._live_record(server, surface, utc_stamp(self.clock()), instance)
        self.store.save_live(record, expired_before=utc_stamp(self.clock() - self.instance_ttl))
        return record

    def _live_record(self, server: str, surface: Surface, reported_at: str,
                     instance: str | None = None) -> LiveRecord:
        try:
            current = self.store.current(server)
        except CorruptLockfile:
            current = None
        result = self.diff(current.surface, surface) if current else None
        return LiveRecord(
            server=server,
            reported_at=reported_at,
            live_digest=surface.integrity_digest,
            surface_document=lock_document(surface, reported_at),
            lock_version=current.record.version if current else None,
            lock_digest=current.record.integrity_digest if current else None,
            locked_at=current.record.locked_at if current else None,
            result=result.to_json() if result else None,
            instance=instance,
        )

    def _refresh_live(self, server: str) -> None:
        """A new lock: recompute the cached live diff against it."""
        if self.store.read_only:  # read-only: live_record diffs on read instead
            return
        for live in self.store.live_reports(server):  # oldest first: the newest stays the server's last
            surface = read_document(live.surface_document)
            self.store.save_live(self._live_record(server, surface, live.reported_at, live.instance))

    def reconcile(self) -> None:
        """Pick up lockfiles committed by hand and bring live diffs up to date with them.
        Incremental: a server whose stored state has not changed since the last pass costs a
        stat (a dict lookup on PostgreSQL), and the first pass runs after the service is ready."""
        keys = self.store.change_keys()
        for server in self.store.servers():
            key = keys.get(server)
            if key is not None and self._reconciled.get(server) == key:
                continue
            try:
                current = self.store.current(server)
            except CorruptLockfile:
                continue
            live = self.store.live(server)
            if live is not None and current is not None and live.lock_digest != current.record.integrity_digest:
                self._refresh_live(server)
            self._reconciled[server] = self.store.change_key(server)
            time.sleep(0)  # let request threads run between servers

    def instance_fresh(self, record: LiveRecord) -> bool:
        """Whether an instance was heard from within ``instance_ttl`` seconds."""
        return _seconds(record.reported_at) + self.instance_ttl >= self.clock()

    def named_instance(self, server: str, instance: str | None) -> str | None:
        """``instance`` when it has a report that has not expired; else None (the server's last)."""
        if not instance:
            return None
        record = self.store.live(server, instance)
        return instance if record is not None and self.instance_fresh(record) else None

    def live_record(self, server: str, instance: str | None = None) -> LiveRecord | None:
        """The server's last live report (or ``instance``'s), its diff against the current lock:
        a report older than the lock (a lock by another process or replica, a file committed by
        hand) is diffed again on read, never served stale until the background reconcile comes by."""
        live = self.store.live(server, instance)
        if live is None:
            return None
        try:
            current = self.store.current(server)
        except CorruptLockfile:
            return live
        if current is None or live.lock_digest == current.record.integrity_digest:
            return live
        record = self._live_record(server, read_document(live.surface_document), live.reported_at, live.instance)
        if not self.store.read_only:
            try:
                self.store.save_live(record)
            except StoreUnavailable:
                return record
            return self.store.live(server, instance) or record
        return record

    def live_view(self, server: str, instance: str | None = None) -> _LiveView | None:
        record = self.live_record(server, instance)
        if record is None:
            return None
        view = self._views.get((server, instance))
        if view is not None and view.record is record:
            return view
        result = (result_from_json(record.result, record.lock_digest or "", record.live_digest)
                  if record.result else None)
        tools = frozenset(record.surface_document.get("tools", {}))
        view = _LiveView(record, result, tools, expires=_seconds(record.reported_at) + self.instance_ttl)
        with self._views_lock:
            self._views[(server, instance)] = view
        return view

    def live_surface(self, server: str, instance: str | None = None) -> Surface | None:
        view = self.live_view(server, instance)
        if view is None:
            return None
        if view.surface is None:
            view.surface = read_document(view.record.surface_document)
        return view.surface

    # -- comparing any two surfaces of a server ------------------------------------

    def surface_at(self, server: str, ref: int | str) -> Surface:
        """A server's surface at a version number, or ``"live"`` (its last live report)."""
        if ref == LIVE:
            surface = self.live_surface(server)
            if surface is None:
                raise NotFound(f"server {server!r} has not reported a live surface", server=server)
            return surface
        if not isinstance(ref, int):
            raise InputError(f"expected a version number or {LIVE!r}, not {ref!r}", "version")
        try:
            return self.version(server, ref).surface
        except UnknownVersion:
            raise NotFound(f"server {server!r} has no version {ref}", server=server, version=ref) from None

    def compare(self, server: str, before: int | str, after: int | str) -> DiffResult:
        """ContractDiff between two of a server's surfaces (version numbers or ``"live"``).
        The lock against the live surface is the kept live diff itself, the one awareness
        reads, so a page shows exactly what a model is told."""
        if after == LIVE and before != LIVE:
            view = self.live_view(server)
            if view is not None and view.result is not None and view.record.lock_version == before:
                return view.result
        return self.diff(self.surface_at(server, before), self.surface_at(server, after))

    # -- awareness and validation errors -------------------------------------------

    def awareness(self, server: str, tool: str, action: str | None = None, max_changes: int = 5,
                  failed: tuple[str, ...] = (), instance: str | None = None) -> str:
        """The ``<contract_awareness>`` section from the cached live diff ('' when nothing
        is relevant); for a tool the lock knows and the live surface lacks, the section that
        says it was removed (:func:`app.awareness.render_removed`). ``failed``: the dotted
        paths of a validation error's arguments, whose changes come first. ``instance``: the
        calling instance, whose own last report is used while it has not expired. Raises
        NotFound for an unknown server or tool."""
        instance = self.named_instance(server, instance)
        view = self.live_view(server, instance)  # (re)load the live record into memory when it changed
        cached = self.cached_awareness(server, tool, action, max_changes, failed, instance)
        if cached is None and view is not None:  # a view the store's cache does not hold (read-only: diffed in memory)
            cached = self._render(view, tool, action, max_changes, failed)
        if cached is not None:
            return cached
        if view is None:
            current = self.current(server)
            if current is None:
                raise NotFound(f"unknown server {server!r}", server=server)
            if self._tool_name(tool, current.surface.tools) is None:
                raise NotFound(f"unknown tool {tool!r} of server {server!r}", server=server, tool=tool)
            return ""
        raise NotFound(f"unknown tool {tool!r} of server {server!r}", server=server, tool=tool)

    def cached_awareness(self, server: str, tool: str, action: str | None = None,
                         max_changes: int = 5, failed: tuple[str, ...] = (), instance: str | None = None,
                         ) -> str | None:
        """The section when memory answers it alone (the hot path: one stat of the live
        record, then usually a cache hit; never file reading, the store lock or a diff);
        None when the slow path must decide (no live report yet in this process, a newer
        one on disk, an unknown tool)."""
        record = self.store.live_if_cached(server, instance)
        view = self._views.get((server, instance))
        if record is None or view is None or view.record is not record:
            return None
        if instance and view.expires < self.clock():
            return None  # an expired instance: the slow path answers with the server's last report
        return self._render(view, tool, action, max_changes, failed)

    def _render(self, view: _LiveView, tool: str, action: str | None, max_changes: int,
                failed: tuple[str, ...]) -> str | None:
        """The section from one live view (cached in it); None for a tool it does not know."""
        removed = self._tool_name(tool, view.tools) is None
        if removed and (view.result is None or tool not in view.result.tools.removed):
            return None
        if view.result is None:
            return ""
        key = (tool, None if removed else action, max_changes, () if removed else failed)
        cached = view.rendered.get(key)
        if cached is None:
            version, at = view.record.lock_version, view.record.locked_at
            cached = (render_removed(view.result, tool, max_changes, lock_version=version, locked_at=at) if removed
                      else render_awareness(view.result, tool, action, max_changes, lock_version=version, locked_at=at,
                                            failed=failed))
            with self._views_lock:
                view.rendered[key] = cached
                if len(view.rendered) > self.RENDER_CACHE:
                    view.rendered.popitem(last=False)
        return cached

    def unknown_tool(self, server: str, tool: str, max_changes: int = 5,
                     instance: str | None = None) -> UnknownTool:
        """What a model that called a tool the live surface lacks should be told: whether the
        lock knew it (removed, or renamed), the tool that replaces it, the tools there are, and
        the ``<contract_awareness>`` section that says so ('' for a tool never locked). For the
        SDK integration's ``<tool_error code="UNKNOWN_ACTION">``. ``instance``: the calling
        instance, whose own live surface is used while it has not expired (as in
        :meth:`awareness`). Raises NotFound for an unknown server."""
        instance = self.named_instance(server, instance)
        view = self.live_view(server, instance)
        if view is None:
            current = self.current(server)
            if current is None:
                raise NotFound(f"unknown server {server!r}", server=server)
            return UnknownTool(tool, False, None, tuple(sorted(current.surface.tools)), "")
        available = tuple(sorted(view.tools))
        if view.result is None or tool in view.tools or tool not in view.result.tools.removed:
            return UnknownTool(tool, False, None, available, "")
        _, instead = removal(view.result, tool)
        xml = self.cached_awareness(server, tool, None, max_changes, instance=instance)
        if xml is None:  # the live record changed under us: render from the view we hold
            xml = render_removed(view.result, tool, max_changes, lock_version=view.record.lock_version,
                                 locked_at=view.record.locked_at)
        return UnknownTool(tool, True, instead, available, xml)

    @staticmethod
    def _tool_name(tool: str, tools: Any) -> str | None:
        """The tool a request names: exact, or the ``tool.action`` flat form."""
        if tool in tools:
            return tool
        head = tool.split(".", 1)[0]
        return head if "." in tool and head in tools else None

    def validation_error(self, server: str, tool: str, action: str | None, *, arguments: Any = None,
                         issues: list[Any] | None = None, max_changes: int = 5,
                         instance: str | None = None) -> tuple[bool, str]:
        """Validate arguments against the tool's live input schema (or take the server's own
        problems) and render the ``<validation_error>`` with awareness embedded. ``instance``:
        the calling instance, whose own live surface is used while it has not expired."""
        instance = self.named_instance(server, instance)
        surface = self.live_surface(server, instance)
        if surface is None:
            current = self.current(server)
            if current is None:
                raise NotFound(f"unknown server {server!r}", server=server)
            surface = current.surface
        name = self._tool_name(tool, surface.tools)
        if name is None:
            raise NotFound(f"unknown tool {tool!r} of server {server!r}", server=server, tool=tool)
        if name != tool and action is None:
            action = tool[len(name) + 1:]
        spec = surface.tools[name]
        if issues is None:
            action = action or _discriminated_action(spec, arguments)
            # compiled once per tool digest and action (the hot path of every governed server and gateway)
            problems = validate_compiled(input_schema_for(spec, action), arguments, f"{spec.digest}#{action or ''}")
            if not problems:
                return True, ""
        else:
            problems = issues
        failed = tuple(sorted({as_problem(problem).path for problem in problems}))
        awareness = self.awareness(server, name, action, max_changes, failed, instance)
        return False, render_validation_error(name, action, problems, awareness)


def _discriminated_action(tool: Tool, arguments: Any) -> str | None:
    if not tool.actions or not isinstance(arguments, dict):
        return None
    discriminator = next(iter(tool.actions.values())).discriminator
    value = arguments.get(discriminator) if discriminator else None
    return value if isinstance(value, str) and value in tool.actions else None


def input_schema_for(tool: Tool, action: str | None) -> JSON:
    """The schema arguments are checked against: the action's branch (with the tool's
    shared keywords and definitions) for a grouped tool, else the whole input schema."""
    schema = tool.input_schema or {}
    branch = tool.actions.get(action) if action else None
    if branch is None or branch.schema is None or branch.keyword is None:
        return schema
    shared = {key: value for key, value in schema.items() if key != branch.keyword}
    return {**shared, "allOf": [*shared.get("allOf", []), branch.schema]}


# -- dashboards ------------------------------------------------------------------------

def _seconds(stamp: str) -> float:
    """An ISO-8601 UTC stamp (as ``utc_now`` writes it) as seconds since the epoch; 0 when unreadable."""
    from datetime import datetime

    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def _counts(result: dict[str, JSON] | None) -> dict[str, int]:
    return dict(result.get("summary", {})) if result else {s.value: 0 for s in Severity}


def drift_status(lock_digest: str | None, live_digest: str) -> str:
    """A live surface against the lock: ``unlocked``, ``in-sync`` (the same digest) or
    ``drifted``. One definition for the dashboard's rows, its instances and the gateway."""
    if lock_digest is None:
        return "unlocked"
    return "in-sync" if live_digest == lock_digest else "drifted"


def server_status(gov: Governance, server: str) -> dict[str, JSON]:
    """One dashboard row: lock (version, when, who asked and who approved), live drift,
    worst change, counts."""
    live = gov.live_record(server)
    try:
        current = gov.store.current(server)
        corrupt = False
    except CorruptLockfile:
        current, corrupt = None, True
    if corrupt:
        status = "corrupt"
    elif current is None:
        status = "unlocked"
    elif live is None:
        status = "unreported"
    else:
        status = drift_status(current.record.integrity_digest, live.live_digest)
    result = live.result if live is not None and current is not None else None
    row: dict[str, JSON] = {
        "server": server,
        "version": current.record.version if current else None,
        "locked_at": current.record.locked_at if current else None,
        "locked_by": current.record.who if current else None,
        "approved_by": current.record.approved_by if current else None,
        "lock_digest": current.record.integrity_digest if current else None,
        "live_digest": live.live_digest if live else None,
        "status": status,
        "maxSeverity": result.get("maxSeverity") if result else None,
        "counts": _counts(result),
        "last_reported": live.reported_at if live else None,
    }
    instances = instance_statuses(gov, server, current.record.integrity_digest if current else None)
    if instances:
        row["instances"] = instances
    severities = {row["maxSeverity"], *(instance["maxSeverity"] for instance in instances)}
    row["worstSeverity"] = next((s.value for s in Severity if s.value in severities), None)
    return row


def instance_statuses(gov: Governance, server: str, lock_digest: str | None) -> list[dict[str, JSON]]:
    """Each instance that named itself and has not expired: its last report's drift, by name."""
    rows: list[dict[str, JSON]] = []
    for report in gov.store.live_reports(server):
        if not report.instance or not gov.instance_fresh(report):
            continue
        record = gov.live_record(server, report.instance) or report  # diffed again if the lock moved
        result = record.result if lock_digest is not None else None
        rows.append({
            "instance": report.instance,
            "reported_at": record.reported_at,
            "live_digest": record.live_digest,
            "lock_version": record.lock_version,
            "status": drift_status(lock_digest, record.live_digest),
            "maxSeverity": result.get("maxSeverity") if result else None,
            "counts": _counts(result),
        })
    return sorted(rows, key=lambda row: str(row["instance"]))


def fleet_status(gov: Governance, covers: Callable[[str], bool]) -> list[dict[str, JSON]]:
    """The dashboard rows of every server ``covers`` admits (a caller's server globs), by name."""
    return [server_status(gov, server) for server in gov.store.servers() if covers(server)]


DEFAULT_PAGE = 100
"""Servers per page of GET /dashboard and GET /lockfiles when the caller gives no ``limit``."""
MAX_PAGE = 1000


@dataclass(frozen=True)
class Page:
    servers: list[str]
    next_cursor: str | None
    """Pass it as ``cursor`` for the next page; None: this is the last one."""


def page_of(gov: Governance, covers: Callable[[str], bool], cursor: str | None, limit: int) -> Page:
    """A page of the servers ``covers`` admits, by name, after ``cursor`` (the last name of the
    previous page: any server name works as a starting point). Servers added or removed
    between pages never make a page repeat or skip one that was there throughout."""
    if cursor and not is_server_name(cursor):
        raise InputError("not a cursor (pass next_cursor of the previous page)", "cursor")
    names = [server for server in gov.store.servers() if (not cursor or server > cursor) and covers(server)]
    page = names[:limit]
    return Page(page, page[-1] if len(names) > limit else None)


def fleet_page(gov: Governance, covers: Callable[[str], bool], cursor: str | None,
               limit: int = DEFAULT_PAGE) -> tuple[list[dict[str, JSON]], str | None]:
    """One page of dashboard rows and the cursor of the next."""
    page = page_of(gov, covers, cursor, limit)
    with gov.store.snapshot(page.servers):
        return [server_status(gov, server) for server in page.servers], page.next_cursor


@dataclass(frozen=True)
class ServerDetail:
    """One server at a glance: its dashboard row, its version history and its tools."""

    status: dict[str, JSON]
    history: list[VersionRecord]
    tools: list[dict[str, JSON]]


def server_detail(gov: Governance, server: str) -> ServerDetail:
    """Raises NotFound for a server the store does not know."""
    if server not in gov.store.servers():
        raise NotFound(f"unknown server {server!r}", server=server)
    status = server_status(gov, server)
    tools = [] if status["status"] == "corrupt" else tool_statuses(gov, server)
    return ServerDetail(status, gov.store.history(server), tools)


def tool_statuses(gov: Governance, server: str) -> list[dict[str, JSON]]:
    """Per tool of the live diff: unchanged / changed / added / removed, worst change, counts."""
    live = gov.live_record(server)
    if live is None or not live.result:
        current = gov.current(server)
        if current is not None:
            names = sorted(current.surface.tools)
        else:
            names = sorted(live.surface_document.get("tools", {})) if live else []
        return [{"tool": name, "status": "unchanged", "maxSeverity": None, "counts": _counts(None)} for name in names]
    tools = live.result.get("tools", {})
    per_tool: dict[str, dict[str, int]] = {}  # one pass over the deltas, not one per tool
    for delta in live.result.get("deltas", []):
        counts = per_tool.setdefault(delta.get("tool"), {s.value: 0 for s in Severity})
        counts[delta["severity"]] += 1
    rows = []
    for status in ("removed", "added", "changed", "unchanged"):
        for name in tools.get(status, []):
            counts = dict(per_tool.get(name) or {s.value: 0 for s in Severity})
            worst = next((s.value for s in Severity if counts[s.value]), None)
            rows.append({"tool": name, "status": status, "maxSeverity": worst, "counts": counts})
    return sorted(rows, key=lambda row: row["tool"])
