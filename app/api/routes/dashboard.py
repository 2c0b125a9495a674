"""Dashboard JSON: every server's lock and drift at a glance, and one server's history."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Request, Response

from app.api.bodies import server_name
from app.api.models import Dashboard, ServerDashboard, ServerStatus, ToolStatus
from app.api.security import Caller, require
from app.lockfile import utc_now
from app.names import SERVER_NAME_PATTERN
from app.service import DEFAULT_PAGE, MAX_PAGE, Governance, fleet_page, server_detail

router = APIRouter(tags=["dashboard"])
CURSOR = Query(None, pattern=SERVER_NAME_PATTERN, max_length=128,
               description="next_cursor of the previous page: servers after this name (absent: the first page)")
LIMIT = Query(DEFAULT_PAGE, ge=1, le=MAX_PAGE, description=f"Servers per page (default {DEFAULT_PAGE})")


@router.get("/dashboard", summary="Every server, a page at a time: lock version, drift, worst change",
            response_model=Dashboard)
def dashboard(request: Request, response: Response, cursor: str | None = CURSOR, limit: int = LIMIT,
              caller: Caller = Depends(require("read"))) -> Dashboard:
    gov: Governance = request.app.state.governance
    rows, next_cursor = fleet_page(gov, caller.covers, cursor, limit)
    link_next(request, response, next_cursor, limit)
    return Dashboard(generated_at=utc_now(), servers=[ServerStatus(**row) for row in rows], next_cursor=next_cursor)


def link_next(request: Request, response: Response, next_cursor: str | None, limit: int) -> None:
    """RFC 8288 ``Link: <...>; rel="next"`` (and ``X-Next-Cursor``) when there is a next page."""
    if next_cursor is not None:
        url = request.url.include_query_params(cursor=next_cursor, limit=limit)
        response.headers["Link"] = f'<{url.path}?{url.query}>; rel="next"'
        response.headers["X-Next-Cursor"] = next_cursor


@router.get("/dashboard/servers/{server}", summary="One server: version history with diff summaries, tools",
            response_model=ServerDashboard, responses={404: {"description": "Unknown server"}})
def server_dashboard(server: str, request: Request, caller: Caller = Depends(require("read"))) -> ServerDashboard:
    server_name(server, "server")
    detail = server_detail(request.app.state.governance, server)
    return ServerDashboard(server=ServerStatus(**detail.status), history=detail.history,
                           tools=[ToolStatus(**row) for row in detail.tools])
