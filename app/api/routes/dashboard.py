"""Dashboard JSON: every server's lock and drift at a glance, and one server's history."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from app.api.bodies import server_name
from app.api.models import Dashboard, ServerDashboard, ServerStatus, ToolStatus
from app.api.security import Caller, require
from app.lockfile import utc_now
from app.service import Governance, NotFound, server_status, tool_statuses

router = APIRouter(tags=["dashboard"])


@router.get("/dashboard", summary="Every server: lock version, drift, worst change", response_model=Dashboard)
def dashboard(request: Request, caller: Caller = Depends(require("read"))) -> Dashboard:
    gov: Governance = request.app.state.governance
    rows = [ServerStatus(**server_status(gov, server)) for server in gov.store.servers() if caller.covers(server)]
    return Dashboard(generated_at=utc_now(), servers=rows)


@router.get("/dashboard/servers/{server}", summary="One server: version history with diff summaries, tools",
            response_model=ServerDashboard, responses={404: {"description": "Unknown server"}})
def server_dashboard(server: str, request: Request, caller: Caller = Depends(require("read"))) -> ServerDashboard:
    server_name(server, "server")
    gov: Governance = request.app.state.governance
    if server not in gov.store.servers():
        raise NotFound(f"unknown server {server!r}", server=server)
    status = ServerStatus(**server_status(gov, server))
    tools = [] if status.status == "corrupt" else [ToolStatus(**row) for row in tool_statuses(gov, server)]
    history = gov.store.history(server)
    return ServerDashboard(server=status, history=history, tools=tools)
