"""POST /lock and the stored locks (GET /lockfiles...)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from app import etags
from app.api import metrics
from app.api.bodies import (
    TOML_TYPES,
    json_body,
    media_type,
    openapi_body,
    raw_surface,
    require_json_or_toml,
    server_name,
    surface_of,
    validated,
    wants_toml,
)
from app.api.models import LockBody, LockfileView, LockResponse, ServerLock, VersionInfo
from app.api.problems import ApiError
from app.api.routes.dashboard import CURSOR, LIMIT, link_next
from app.api.security import Caller, authenticate, require
from app.lockfile import dumps_json, lock_document
from app.service import Corrupt, Governance, LockRequest, NeedsApproval, NotFound, PreconditionFailed, page_of
from app.store import StoredLock, UnknownVersion

router = APIRouter(tags=["locks"])

LOCK_BODY_DOC = openapi_body(LockBody, toml="An mcp-governance TOML lockfile; metadata in the query "
                                             "(commit, reason, approved_by).")


def governance(request: Request) -> Governance:
    return request.app.state.governance


@router.post(
    "/lock",
    summary="Record a server's known-good surface",
    status_code=201,
    response_model=LockResponse,
    openapi_extra=LOCK_BODY_DOC,
    responses={
        200: {"model": LockResponse, "description": "Identical to the current lock: nothing written"},
        409: {"description": "BREAKING changes against the previous lock and no approval"},
        412: {"description": "If-Match does not name the current lock, or If-None-Match does"},
        413: {"description": "Body over the limit"},
        422: {"description": "Bad input"},
    },
)
async def post_lock(
    request: Request,
    if_match: str | None = Header(None, description="Lock only over this current lock (its ETag, a list of "
                                                    "ETags, or * for any existing lock; RFC 9110)"),
    if_none_match: str | None = Header(None, description="* locks only a server with no lock yet; a list of "
                                                         "ETags, only over another lock (RFC 9110)"),
    commit: str | None = Query(None, description="For TOML bodies: the commit being locked"),
    reason: str | None = Query(None, description="For TOML bodies: why"),
    approved_by: str | None = Query(None, description="For TOML bodies: who accepts BREAKING changes"),
) -> JSONResponse:
    require_json_or_toml(request)
    caller = authenticate(request)
    if not caller.allows("lock"):
        raise ApiError(403, "forbidden_scope", "this token lacks the lock scope")
    if media_type(request) in TOML_TYPES:
        surface = await raw_surface(request)
        if surface.server is None:
            raise ApiError(422, "invalid_input", "body: the lockfile names no server")
        server = surface.server
        meta: dict[str, Any] = {"commit": commit, "reason": reason, "approved_by": approved_by}
    else:
        body = validated(LockBody, await json_body(request))
        server = server_name(body.server, "body.server")
        surface = surface_of(body.surface, "surface", server, body.input_format)
        if body.server_version:
            surface = replace(surface, server_version=body.server_version)
        meta = {"commit": body.commit, "reason": body.reason, "approved_by": body.approved_by}
    caller.check_server(server)
    lock_request = LockRequest(
        who=caller.name, commit=meta["commit"], reason=meta["reason"], approved_by=meta["approved_by"],
        may_approve=caller.allows("approve"), if_match=if_match, if_none_match=if_none_match,
        implicit_approver=caller.name if caller.grant is not None and caller.allows("approve") else None,
    )
    try:
        # In a thread: the store lock may be held by another worker; the event loop must
        # keep serving /healthz and the awareness hot path meanwhile.
        outcome = await run_in_threadpool(governance(request).lock, server, surface, lock_request)
    except NeedsApproval:
        metrics.LOCKS.labels("needs_approval").inc()
        raise
    except PreconditionFailed:
        metrics.LOCKS.labels("precondition_failed").inc()
        raise
    metrics.LOCKS.labels("created" if outcome.created else "unchanged").inc()
    body_out = LockResponse(
        server=server,
        version=outcome.record.version,
        integrity_digest=outcome.record.integrity_digest,
        previous_digest=outcome.record.previous_digest,
        diff=outcome.result.to_json(),
    )
    headers = {"ETag": etags.quoted(outcome.record.integrity_digest),
               "Location": f"/lockfiles/{server}/versions/{outcome.record.version}"}
    return JSONResponse(body_out.model_dump(), status_code=201 if outcome.created else 200, headers=headers)


@router.get("/lockfiles", summary="Every locked server, a page at a time (next page: the Link header)",
            response_model=list[ServerLock])
def list_lockfiles(request: Request, response: Response, cursor: str | None = CURSOR, limit: int = LIMIT,
                   caller: Caller = Depends(require("read"))) -> list[ServerLock]:
    gov = governance(request)
    page = page_of(gov, caller.covers, cursor, limit)
    link_next(request, response, page.next_cursor, limit)
    with gov.store.snapshot(page.servers):  # one look at the store for the page
        return [_lock_row(gov, server) for server in page.servers]


def _lock_row(gov: Governance, server: str) -> ServerLock:
    try:
        current = gov.current(server)
    except Corrupt as exc:
        return ServerLock(server=server, version=None, integrity_digest=None, locked_at=None,
                          status="corrupt", problem=exc.detail)
    if current is None:
        return ServerLock(server=server, version=None, integrity_digest=None, locked_at=None, status="unlocked")
    return ServerLock(server=server, version=current.record.version, integrity_digest=current.record.integrity_digest,
                      locked_at=current.record.locked_at, status="locked")


def _lock_response(request: Request, stored: StoredLock) -> Response:
    etag = etags.quoted(stored.record.integrity_digest)
    condition = request.headers.get("if-none-match")
    if condition is not None and not etags.if_none_match(condition, stored.record.integrity_digest):
        return Response(status_code=304, headers={"ETag": etag})
    if wants_toml(request):
        return Response(stored.text, media_type="application/toml", headers={"ETag": etag})
    view = LockfileView(record=stored.record,
                        lockfile=lock_document(stored.surface, stored.surface.generated_at))
    return Response(dumps_json(view.model_dump()), media_type="application/json", headers={"ETag": etag})


TOML_OR_JSON: dict[int | str, dict[str, Any]] = {
    200: {"content": {"application/json": {"schema": LockfileView.model_json_schema()},
                      "application/toml": {"schema": {"type": "string"}}},
          "description": "JSON by default; the exact stored TOML bytes with Accept: application/toml"}}


@router.get("/lockfiles/{server}", summary="A server's current lock", response_class=Response,
            responses={**TOML_OR_JSON, 404: {"description": "No lock"}, 409: {"description": "Corrupt lockfile"}})
def get_lockfile(server: str, request: Request, caller: Caller = Depends(require("read"))) -> Response:
    server_name(server, "server")
    current = governance(request).current(server)
    if current is None:
        raise NotFound(f"server {server!r} has no lock", server=server)
    return _lock_response(request, current)


@router.get("/lockfiles/{server}/versions", summary="Every accepted version of a server's lock",
            response_model=list[VersionInfo], responses={404: {"description": "No such server"}})
def list_versions(server: str, request: Request, caller: Caller = Depends(require("read"))) -> list[VersionInfo]:
    server_name(server, "server")
    history = governance(request).history(server)
    if not history:
        raise NotFound(f"server {server!r} has no lock history", server=server)
    return history


@router.get("/lockfiles/{server}/versions/{number}", summary="One accepted version", response_class=Response,
            responses={**TOML_OR_JSON, 404: {"description": "No such version"}})
def get_version(server: str, number: int, request: Request, caller: Caller = Depends(require("read"))) -> Response:
    server_name(server, "server")
    try:
        stored = governance(request).version(server, number)
    except UnknownVersion:
        raise NotFound(f"server {server!r} has no version {number}", server=server, version=number) from None
    return _lock_response(request, stored)
