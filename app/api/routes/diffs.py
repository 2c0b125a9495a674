"""POST /diff and POST /check: ContractDiff for CI and people."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from app.api.bodies import json_body, openapi_body, server_name, surface_of, validated
from app.api.models import DIFF_EXAMPLE, CheckBody, CheckResponse, DiffBody
from app.api.problems import ApiError
from app.api.security import Caller, require
from app.diff import Severity
from app.diff.reports import FORMATS, render_report
from app.problems import InputError
from app.service import Governance, NotFound

router = APIRouter(tags=["diff"])

MEDIA = {"json": "application/json", "sarif": "application/sarif+json", "junit": "application/xml",
         "markdown": "text/markdown; charset=utf-8", "text": "text/plain; charset=utf-8",
         "github": "text/plain; charset=utf-8"}


def _gate(value: str) -> Severity | None:
    if value.lower() == "never":
        return None
    try:
        return Severity.parse(value)
    except ValueError as exc:
        raise InputError(str(exc), "fail_on") from None


@router.post(
    "/diff",
    summary="ContractDiff of two surfaces, or of a surface against a server's current lock",
    response_class=Response,
    openapi_extra=openapi_body(DiffBody),
    responses={200: {"description": "The report; header X-ContractDiff-Gate says pass or fail",
                     "content": {"application/json": {"example": DIFF_EXAMPLE}}},
               404: {"description": "Unknown server"}, 422: {"description": "Bad input"}},
)
async def post_diff(
    request: Request,
    format: str = Query("json", description=f"One of: {', '.join(FORMATS)}"),
    fail_on: str = Query("BREAKING", description="BREAKING, RISKY, SAFE, COSMETIC or never"),
    caller: Caller = Depends(require("read")),
) -> Response:
    if format not in FORMATS:
        raise InputError(f"unknown format {format!r} (one of: {', '.join(FORMATS)})", "format")
    gate = _gate(fail_on)
    body = validated(DiffBody, await json_body(request))
    gov: Governance = request.app.state.governance
    if body.server is not None:
        server = server_name(body.server, "body.server")
        caller.check_server(server)
        current = await run_in_threadpool(gov.current, server)  # may wait for the store lock: off the loop
        if current is None:
            raise NotFound(f"server {server!r} has no lock", server=server)
        result = await run_in_threadpool(gov.diff, current.surface, surface_of(body.surface, "surface", server))
    else:
        if body.before is None or body.after is None:
            raise ApiError(422, "invalid_input", "body: give before and after, or server and surface")
        result = await run_in_threadpool(gov.diff, surface_of(body.before, "before"), surface_of(body.after, "after"))
    text = render_report(result, format, gate=gate)
    headers = {"X-ContractDiff-Gate": "fail" if result.fails(gate) else "pass"}
    return Response(text, media_type=MEDIA[format], headers=headers)


@router.post("/check", summary="Does a surface match the server's current lock?", response_model=CheckResponse,
             openapi_extra=openapi_body(CheckBody),
             responses={404: {"description": "Unknown server"}, 422: {"description": "Bad input"}})
async def post_check(request: Request, caller: Caller = Depends(require("read"))) -> CheckResponse:
    body = validated(CheckBody, await json_body(request))
    server = server_name(body.server, "body.server")
    caller.check_server(server)
    gov: Governance = request.app.state.governance
    current = await run_in_threadpool(gov.current, server)  # may wait for the store lock: off the loop
    if current is None:
        raise NotFound(f"server {server!r} has no lock", server=server)
    result = await run_in_threadpool(gov.diff, current.surface, surface_of(body.surface, "surface", server))
    max_severity = result.max_severity
    return CheckResponse(ok=result.unchanged, added=list(result.tools.added), removed=list(result.tools.removed),
                         changed=list(result.tools.changed), unchanged=list(result.tools.unchanged),
                         maxSeverity=max_severity.value if max_severity else None,
                         deltas=[delta.to_json() for delta in result.deltas])
