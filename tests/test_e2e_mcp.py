"""End to end, loopback only: the governance service on a real uvicorn port, v1 of the example
billing server locked with ``mcp-governance lock --from-command``, v2 started through the
official SDK's stdio client, and a model's v1-style call to it."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from mcp_governance.errors import parse_tool_error
from tests.service_fixtures import (
    BILLING_SERVER,
    RunningService,
    billing_command,
    billing_env,
    running_service,
    wait_for_live,
)


@pytest.fixture
def governance_service(tmp_path: Path) -> Iterator[RunningService]:
    """The governance service on a free loopback port, over a fresh lockfile store."""
    with running_service(tmp_path / "lockfiles") as service:
        yield service

V1_CALL = {"id": "inv_1001"}
V2_CALL = {"id": "inv_1001", "currency": "EUR"}


def lock_v1_from_command(service: RunningService) -> None:
    """The release pipeline's step, as a user types it."""
    command = " ".join(f'"{part}"' for part in billing_command())
    done = subprocess.run(
        [sys.executable, "-m", "app", "lock", "--from-command", command, "--server", "billing", "--url", service.url],
        env=billing_env("v1"), capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "billing: locked as version 1" in done.stderr


@asynccontextmanager
async def v2_server(service: RunningService) -> AsyncIterator[Client]:
    """v2, governed, started by the official SDK client over stdio (as an MCP host would)."""
    params = StdioServerParameters(command=sys.executable, args=[str(BILLING_SERVER)],
                                   env=billing_env("v2", service.url))
    with tempfile.TemporaryFile("w+") as log:  # the server's stderr (its logs), out of the test output
        async with Client(stdio_client(params, errlog=log), cache=None) as client:
            yield client


def text_of(result: Any) -> str:
    return "\n".join(item.text for item in result.content if getattr(item, "text", None) is not None)


def test_a_v1_call_to_v2_gets_the_breaking_change_then_succeeds(governance_service):
    lock_v1_from_command(governance_service)

    async def scenario() -> tuple[Any, Any]:
        async with v2_server(governance_service) as client:
            live = await anyio.to_thread.run_sync(wait_for_live, governance_service.url, "billing")
            assert live["status"] == "drifted"
            return await client.call_tool("get_invoice", V1_CALL), await client.call_tool("get_invoice", V2_CALL)

    wrong, right = anyio.run(scenario)
    assert wrong.is_error is True
    text = text_of(wrong)
    root = ET.fromstring(text)
    assert root.tag == "validation_error"
    assert [field.get("name") for field in root.findall("field")] == ["currency"]
    awareness = root.find("contract_awareness")
    assert awareness is not None and awareness.findtext("max_severity") == "BREAKING"
    info = parse_tool_error(text)
    assert info is not None and info.kind == "validation_error" and "currency" in info.fields
    assert info.awareness is not None
    breaking = [change for change in info.awareness.changes if change.severity == "BREAKING"]
    assert breaking and "currency" in (breaking[0].field or "") and "currency" in (breaking[0].description or "")
    assert right.is_error is False and text_of(right) == "inv_1001: 129.00 EUR"


def test_with_the_service_stopped_the_sdk_error_arrives_within_the_budget(governance_service):
    lock_v1_from_command(governance_service)

    async def scenario() -> tuple[Any, float, Any]:
        async with v2_server(governance_service) as client:
            await anyio.to_thread.run_sync(wait_for_live, governance_service.url, "billing")
            await anyio.to_thread.run_sync(governance_service.stop)
            started = time.perf_counter()
            wrong = await client.call_tool("get_invoice", V1_CALL)
            elapsed = time.perf_counter() - started
            return wrong, elapsed, await client.call_tool("get_invoice", V2_CALL)

    wrong, elapsed, right = anyio.run(scenario)
    assert wrong.is_error is True
    assert text_of(wrong).startswith("Error executing tool get_invoice: 1 validation error")
    assert parse_tool_error(text_of(wrong)) is None  # the SDK's own text, untouched
    assert elapsed < 2.0  # budget 200 ms (a refused connection is faster still) + stdio round trip
    assert right.is_error is False
