"""What MCP servers call: report the live surface, fetch awareness, render validation errors."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from app.api import metrics
from app.api.bodies import json_body, openapi_body, raw_surface, server_name, validated
from app.api.hotpath import ANSWERED_BY
from app.api.models import LiveResponse, ValidationErrorBody, ValidationErrorResponse
from app.api.security import Caller, require
from app.names import SERVER_NAME_PATTERN
from app.problems import InputError
from app.service import Governance, server_status

router = APIRouter(tags=["mcp servers"])
INSTANCE_HEADER = "X-Instance-Id"


def instance_of(request: Request, query: str | None) -> str | None:
    """The calling instance: ``?instance=`` or the ``X-Instance-Id`` header (a name like a
    server's); None when it does not name itself."""
    value = query if query is not None else request.headers.get(INSTANCE_HEADER)
    if value is None or value == "":
        return None
    return server_name(value, "instance")


INSTANCE_QUERY = Query(None, pattern=SERVER_NAME_PATTERN, max_length=128,
                       description="The reporting or calling instance (or the X-Instance-Id header), named like a "
                                   "server: its last report is kept apart and used for its awareness")


@router.put(
    "/servers/{server}/live",
    summary="Report the surface a server exposes now (e.g. its tools/list result)",
    response_model=LiveResponse,
    openapi_extra=openapi_body(any_surface=True, toml="An mcp-governance TOML lockfile"),
    responses={422: {"description": "Bad input"}},
)
async def put_live(server: str, request: Request, instance: str | None = INSTANCE_QUERY,
                   caller: Caller = Depends(require("report"))) -> LiveResponse:
    server_name(server, "server")
    named = instance_of(request, instance)
    surface = await raw_surface(request, server)
    gov: Governance = request.app.state.governance
    record = await run_in_threadpool(gov.report_live, server, surface, named)  # store write + diff: off the loop
    result = record.result or {}
    status = (await run_in_threadpool(server_status, gov, server))["status"]
    return LiveResponse(server=server, live_digest=record.live_digest, reported_at=record.reported_at,
                        lock_version=record.lock_version, lock_digest=record.lock_digest, status=status,
                        maxSeverity=result.get("maxSeverity"), summary=result.get("summary", {}))


@router.get(
    "/servers/{server}/awareness",
    summary="The <contract_awareness> section for one tool (and action), from the cached live diff",
    response_class=Response,
    responses={200: {"content": {"application/xml": {}},
                     "description": "The section; for a tool the lock knows and the live surface lacks, the "
                                    "section that says it was removed (with <replacement> when one is named)"},
               204: {"description": "Nothing relevant changed"},
               404: {"description": "Unknown server, or a tool neither the lock nor the live surface has"}},
)
def get_awareness(
    server: str,
    request: Request,
    tool: str = Query(..., min_length=1, description="The tool, or tool.action"),
    action: str | None = Query(None, description="The action of a grouped tool"),
    max: int = Query(5, ge=1, le=20, description="At most this many changes"),
    instance: str | None = INSTANCE_QUERY,
    caller: Caller = Depends(require("report", "read")),
) -> Response:
    server_name(server, "server")
    gov: Governance = request.app.state.governance
    text = gov.awareness(server, tool, action, max, instance=instance_of(request, instance))
    answered_by = {ANSWERED_BY: "route"}
    if not text:
        metrics.AWARENESS.labels("empty").inc()
        return Response(status_code=204, headers=answered_by)
    metrics.AWARENESS.labels("hit").inc()
    return Response(text, media_type="application/xml", headers=answered_by)


@router.post(
    "/servers/{server}/validation-error",
    summary="A tool call's arguments (or the server's own problems) in, the <validation_error> out",
    response_model=ValidationErrorResponse,
    openapi_extra=openapi_body(ValidationErrorBody),
    responses={404: {"description": "Unknown server or tool"}, 422: {"description": "Bad input"}},
)
async def post_validation_error(server: str, request: Request, instance: str | None = INSTANCE_QUERY,
                                caller: Caller = Depends(require("report", "read"))) -> ValidationErrorResponse:
    server_name(server, "server")
    body = validated(ValidationErrorBody, await json_body(request))
    if body.issues is not None and "arguments" in body.model_fields_set:
        raise InputError("give arguments or issues, not both", "body")
    gov: Governance = request.app.state.governance
    issues = [issue.model_dump(exclude_unset=True) for issue in body.issues] if body.issues is not None else None
    valid, xml = await run_in_threadpool(gov.validation_error, server, body.tool, body.action,
                                         arguments=body.arguments, issues=issues, max_changes=body.max,
                                         instance=instance_of(request, instance))
    return ValidationErrorResponse(valid=valid, xml=xml)
