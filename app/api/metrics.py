"""Prometheus metrics: requests by route and status, latency, locks, awareness hits.

With several uvicorn workers, ``serve`` points ``PROMETHEUS_MULTIPROC_DIR`` at a shared
directory before the workers start, and /metrics aggregates every worker's samples.
"""

from __future__ import annotations

import os
import time

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest, multiprocess
from starlette.types import ASGIApp, Message, Receive, Scope, Send

REQUESTS = Counter("mcp_governance_requests_total", "HTTP requests by route, method and status",
                   ["route", "method", "status"])
LATENCY = Histogram("mcp_governance_request_duration_seconds", "HTTP request latency by route", ["route"],
                    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5))
LOCKS = Counter("mcp_governance_locks_total", "Lock requests by outcome",
                ["outcome"])  # created, unchanged, needs_approval, precondition_failed
AWARENESS = Counter("mcp_governance_awareness_total", "Awareness lookups by outcome",
                    ["outcome"])  # hit (a section was served), empty (204)


def render() -> tuple[bytes, str]:
    """The exposition text, aggregated across workers in multiprocess mode."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry), CONTENT_TYPE_LATEST
    from prometheus_client import REGISTRY

    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST


class RequestMetrics:
    """Pure ASGI middleware (no per-request task or body buffering): counts and times
    each request under its route template, never the raw path."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500

        async def observe(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, observe)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            REQUESTS.labels(template, scope.get("method", ""), str(status)).inc()
            LATENCY.labels(template).observe(time.perf_counter() - start)
