"""Liveness, readiness and metrics for operators."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from app.api import metrics
from app.api.models import Health
from app.api.problems import ApiError
from app.api.security import require

router = APIRouter(tags=["operations"])


@router.get("/healthz", response_model=Health, summary="Liveness: the process answers")
async def healthz() -> Health:
    return Health(status="ok")


@router.get("/readyz", response_model=Health, summary="Readiness: the store can be read and written",
            responses={503: {"description": "The store is not usable"}})
def readyz(request: Request) -> Health:
    problem = request.app.state.governance.store.unready()
    if problem is not None:
        raise ApiError(503, "store_unavailable", problem)
    return Health(status="ready")


@router.get("/metrics", summary="Prometheus metrics", response_class=Response,
            dependencies=[Depends(require("read", "report"))],
            responses={200: {"content": {"text/plain": {}}, "description": "Prometheus text exposition"}})
def metrics_endpoint() -> Response:
    body, content_type = metrics.render()
    return Response(body, media_type=content_type)
