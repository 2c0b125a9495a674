"""The gateway with ``--service``: the lock from the governance service, the live surface
reported to it, and the last lock cached on disk so that a service that is down or hangs
never blocks a call (valid calls pass; invalid calls get the local answer within the
budget). The token goes to the service and nowhere else."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_governance.errors import parse_tool_error
from tests.gateway_fixtures import SERVERS, env, gateway_client, gateway_params, names, text_of
from tests.loopback import refused_url, serving
from tests.service_fixtures import RunningService, loopback_socket, running_service, wait_for_live

BILLING = [sys.executable, str(SERVERS / "recording_billing.py")]
WEATHER = [sys.executable, str(SERVERS / "weather_rugpull.py")]
BUDGET = 0.2
SLACK = 0.5
"""What a fallback may take beyond the budget on a loaded CI machine (thread hand-offs)."""


@pytest.fixture
def service(tmp_path: Path) -> Iterator[RunningService]:
    with running_service(tmp_path / "store") as running:
        yield running


def lock_v1(service: RunningService) -> None:
    line = " ".join(f'"{part}"' for part in BILLING)
    done = subprocess.run([sys.executable, "-m", "app", "lock", "--from-command", line, "--server", "billing",
                           "--url", service.url], env=env(BILLING_VERSION="v1"), capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr


def calls(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def session(tmp_path: Path, url: str, version: str, mode: str, script: Any, options: tuple[str, ...] = (),
            command: list[str] = BILLING, **extra_env: str) -> Any:
    params = gateway_params("billing", command, mode=mode, service=url,
                            options=("--cache-dir", str(tmp_path / "cache"), "--service-timeout", "0.5", *options),
                            BILLING_VERSION=version, CALL_LOG=str(tmp_path / "calls.jsonl"), **extra_env)

    async def scenario() -> Any:
        with tempfile.TemporaryFile("w+") as log:
            async with gateway_client(params, log) as client:
                return await script(client)

    return anyio.run(scenario)


async def listing(client: Any) -> Any:
    return await client.list_tools()


def test_the_lock_comes_from_the_service_and_the_live_surface_goes_back(service, tmp_path):
    lock_v1(service)
    assert names(session(tmp_path, service.url, "v2", "enforce", listing, options=("--instance-id", "gw-1"))) == []
    status = wait_for_live(service.url, "billing")
    assert status["status"] == "drifted"
    assert [(row["instance"], row["status"]) for row in status.get("instances") or []] == [("gw-1", "drifted")]
    assert (tmp_path / "cache" / "billing.lock.json").exists()


@pytest.mark.parametrize("where", ["down", pytest.param("hanging", marks=pytest.mark.slow)])
def test_a_service_down_or_hanging_never_blocks_a_call(service, tmp_path, where):
    lock_v1(service)
    assert names(session(tmp_path, service.url, "v1", "enforce", listing)) == ["get_invoice", "list_invoices"]
    hanging = loopback_socket()  # accepts connections, never answers
    url = refused_url() if where == "down" else f"http://127.0.0.1:{hanging.getsockname()[1]}"

    async def script(client: Any) -> dict[str, Any]:
        got: dict[str, Any] = {"listing": await client.list_tools()}
        got["valid"] = await client.call_tool("get_invoice", {"id": "inv_1001"})
        started = time.perf_counter()
        got["invalid"] = await client.call_tool("get_invoice", {"ident": "inv_1001"})
        got["elapsed"] = time.perf_counter() - started
        return got

    try:
        got = session(tmp_path, url, "v1", "enforce", script, options=("--budget-ms", str(BUDGET * 1000)))
    finally:
        hanging.close()
    # enforce with no lock at all would hide every tool: the cached lock is what is served
    assert names(got["listing"]) == ["get_invoice", "list_invoices"]
    assert text_of(got["valid"]) == "inv_1001: 129.00 EUR"
    assert got["invalid"].is_error is True and text_of(got["invalid"]).startswith("<validation_error")
    assert got["elapsed"] < BUDGET + SLACK
    assert [call["arguments"] for call in calls(tmp_path / "calls.jsonl")] == [{"id": "inv_1001"}] * 1


class Recorder(BaseHTTPRequestHandler):
    """A governance service that records each request's headers and is unavailable."""

    seen: ClassVar[list[tuple[str, str, dict[str, str]]]] = []

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        type(self).seen.append((self.command, self.path, dict(self.headers)))
        self.send_response(503)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_PUT = do_POST = _answer

    def log_message(self, format: str, *args: Any) -> None:
        return None


@contextmanager
def recording_service() -> Iterator[tuple[str, list[tuple[str, str, dict[str, str]]]]]:
    seen: list[tuple[str, str, dict[str, str]]] = []
    with serving(type("RecorderHere", (Recorder,), {"seen": seen})) as url:
        yield url, seen


def test_the_token_goes_to_the_service_with_the_instance_id_and_nowhere_else(tmp_path):
    secret = "tok-only-for-the-service-81d3"

    async def script(client: Any) -> Any:
        return await client.call_tool("report_env", {"needle": secret})

    with recording_service() as (url, seen):
        result = session(tmp_path, url, "v1", "observe", script, command=WEATHER,
                         options=("--token", secret, "--instance-id", "gw-test-1"), SECRET_COPY=secret)
        deadline = time.monotonic() + 10
        while not any(method == "PUT" for method, _, _ in seen):
            assert time.monotonic() < deadline, f"no live report reached the service: {seen}"
            time.sleep(0.05)
    assert json.loads(text_of(result)) == {"found": False, "governance_variables": []}
    assert {(method, path) for method, path, _ in seen} >= {("GET", "/lockfiles/billing"),
                                                              ("PUT", "/servers/billing/live")}
    for _, _, headers in seen:
        assert headers.get("Authorization") == f"Bearer {secret}"
        assert headers.get("X-Instance-Id") == "gw-test-1"


@pytest.mark.slow  # a variation of the sessions kept in the dev profile: ci profile only
def test_a_service_without_the_servers_lock_means_every_tool_is_new(service, tmp_path):
    async def script(client: Any) -> tuple[Any, Any]:
        return await client.list_tools(), await client.call_tool("get_invoice", {"id": "inv_1001"})

    listed, refused = session(tmp_path, service.url, "v1", "enforce", script)
    assert names(listed) == []
    info = parse_tool_error(text_of(refused))
    assert info is not None and info.code == "FORBIDDEN" and "not in the lock of billing" in info.message


@given(st.text(max_size=300), st.integers(min_value=1, max_value=2**22), st.text("0123456789abcdef", min_size=6,
                                                                                  max_size=6))
def test_the_default_instance_id_is_always_a_name_the_service_accepts(host, pid, suffix):
    from app.cli.gatewaycmd import default_instance
    from mcp_governance.names import is_server_name

    instance = default_instance(host, pid, suffix)
    assert is_server_name(instance) and instance.endswith(f"-{pid}-{suffix}")
