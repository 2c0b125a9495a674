"""The HTTP face: FastAPI routers over the governance service (:mod:`app.service`)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator

from fastapi import FastAPI

from app import __version__, ui
from app.api import problems
from app.api.hotpath import AwarenessHotPath
from app.api.limits import BodyLimit, WorkBudget
from app.api.metrics import RequestMetrics
from app.api.routes import dashboard, diffs, health, locks, servers
from app.config import Settings, load_settings
from app.policy import load_policy
from app.service import Governance, summarizer
from app.store.select import open_store

log = logging.getLogger("mcp_governance")
RECONCILE_SECONDS = 5.0

DESCRIPTION = """Governs the tool contracts of MCP servers.

Release pipelines **lock** a server's known-good tool surface; **ContractDiff** grades every change
against it (BREAKING / RISKY / SAFE / COSMETIC); MCP servers report their **live** surface and fetch a
bounded `<contract_awareness>` section for the model when a tool call fails validation.
Errors are `application/problem+json` with a stable `code`.
"""


def build_governance(settings: Settings) -> Governance:
    policy = load_policy(settings.policy) if settings.policy else None  # a broken file stops the start
    return Governance(open_store(settings.store or settings.lockfiles, summarize=summarizer(policy)), policy,
                      instance_ttl=settings.instance_seconds)


def create_app(settings: Settings | None = None, governance: Governance | None = None) -> FastAPI:
    settings = settings or load_settings()
    governance = governance or build_governance(settings)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if not settings.auth_enabled:
            log.warning("AUTH IS OFF: no tokens are configured, so anyone who can reach this port can read, "
                        "report and lock. Configure tokens with --config or MCP_GOVERNANCE_TOKENS.")
        await asyncio.to_thread(governance.store.startup)  # cleans what a killed writer left; parses nothing
        task = asyncio.create_task(_reconcile_forever(governance))
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await asyncio.to_thread(governance.store.close)

    # /docs and /redoc come from app.ui, with assets shipped in the package (no CDN).
    app = FastAPI(title="mcp-governance", version=__version__, description=DESCRIPTION, lifespan=lifespan,
                  docs_url=None, redoc_url=None)
    app.state.settings = settings
    app.state.governance = governance
    problems.install(app)
    for module in (locks, diffs, servers, dashboard, health):
        app.include_router(module.router)
    ui.install(app)
    app.add_middleware(AwarenessHotPath, fastapi_app=app)
    app.add_middleware(WorkBudget, seconds=settings.work_budget_seconds)
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    app.add_middleware(RequestMetrics)
    return app


async def _reconcile_forever(governance: Governance) -> None:
    """Pick up lockfiles committed into the directory by hand, even when nobody reads them.
    The first pass runs right after start, in the background: the service is ready before it."""
    while True:
        try:
            await asyncio.to_thread(governance.reconcile)
        except Exception:  # a bad file must not stop the loop; it is reported where it is read
            log.exception("reconciling the lockfile store failed")
        await asyncio.sleep(RECONCILE_SECONDS)


def app_from_environment() -> FastAPI:
    """The factory uvicorn workers import (settings from MCP_GOVERNANCE_* variables).

    A served process also collects garbage less often: under load every young collection
    promotes the objects of the requests in flight, so full collections (which scan the
    store's caches: tens of milliseconds with 100 servers) came every few seconds and made
    the awareness p99. The thresholds trade a little memory for that tail, and what is
    alive at start (modules, the app) is moved out of the collector's sight."""
    gc.set_threshold(20_000, 50, 100)
    app = create_app(load_settings())
    gc.collect()
    gc.freeze()  # modules and the app itself are never garbage: full collections skip them
    return app
