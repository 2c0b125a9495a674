"""Dashboard JSON: every server's lock and drift at a glance, and one server's history."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from app.api.bodies import server_name
from app.api.models import Dashboard, ServerDashboard, ServerStatus, ToolStatus
from app.api.security import Caller, require
from app.lockfile import utc_now
from app.service import Governance, fleet_status, server_detail

router = APIRouter(tags=["dashboard"])


@router.get("/dashboard", summary="Every server: lock version, drift, worst change", response_model=Dashboard)
def dashboard(request: Request, caller: Caller = Depends(require("read"))) -> Dashboard:
    gov: Governance = request.app.state.governance
    rows = [ServerStatus(**row) for row in fleet_status(gov, caller.covers)]
    return Dashboard(generated_at=utc_now(), servers=rows)


@router.get("/dashboard/servers/{server}", summary="One server: version history with diff summaries, tools",
            response_model=ServerDashboard, responses={404: {"description": "Unknown server"}})
def server_dashboard(server: str, request: Request, caller: Caller = Depends(require("read"))) -> ServerDashboard:
    server_name(server, "server")
    detail = server_detail(request.app.state.governance, server)
    return ServerDashboard(server=ServerStatus(**detail.status), history=detail.history,
                           tools=[ToolStatus(**row) for row in detail.tools])
