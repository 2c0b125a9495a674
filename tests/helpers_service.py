"""Helpers for the HTTP API and service tests: surfaces, tokens, an app over a temporary
store (FastAPI TestClient), problem+json checks, Prometheus samples, and a real uvicorn
(in a thread, or ``python -m app serve`` as a subprocess) on a free loopback port."""

from __future__ import annotations

import copy
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app import load_surface
from app.api import create_app
from app.config import Settings, TokenGrant, hash_token
from app.jsontypes import JSON

ROOT = Path(__file__).resolve().parent.parent
PROBLEM_JSON = "application/problem+json"
START_TIMEOUT = 60.0
"""How long a started server may take to answer: generous, since loops poll readiness (a loaded
2-core machine running several suites has taken over 10 s); success never waits for it."""

# -- surfaces ---------------------------------------------------------------------------


def tool(name: str = "get_invoice", description: str = "Fetch one invoice", *,
         properties: dict[str, JSON] | None = None, required: tuple[str, ...] = ("id",),
         **extra: JSON) -> dict[str, JSON]:
    props = {"id": {"type": "string"}} if properties is None else properties
    schema: dict[str, JSON] = {"type": "object", "properties": props}
    if required:
        schema["required"] = list(required)
    return {"name": name, "description": description, "inputSchema": schema, **extra}


def surface(*tools: dict[str, JSON]) -> dict[str, JSON]:
    return {"tools": list(tools)}


LIST_TOOL = tool("list_invoices", "List invoices", properties={"limit": {"type": "integer", "maximum": 50}},
                 required=())
V1 = surface(tool(), LIST_TOOL)
"""The known-good billing surface."""
V1_SAFE = surface(tool(properties={"id": {"type": "string"}, "note": {"type": "string"}}), LIST_TOOL)
"""V1 plus an optional argument: SAFE."""
V1_COSMETIC = surface(tool(description="Fetch a single invoice"), LIST_TOOL)
"""V1 with a reworded description: COSMETIC."""
V2_BREAKING = surface(
    tool(properties={"id": {"type": "string"}, "currency": {"type": "string", "enum": ["EUR", "USD"]}},
         required=("id", "currency")),
    LIST_TOOL,
)
"""V1 with a new required argument ``currency`` on get_invoice: BREAKING."""


def numbered(index: int) -> dict[str, JSON]:
    """Distinct surfaces that differ only in a description (never BREAKING between them)."""
    return surface(tool(description=f"Fetch one invoice (revision {index})"))


def digest_of(value: JSON, server: str = "billing") -> str:
    return load_surface(copy.deepcopy(value), server=server).integrity_digest


# -- tokens -----------------------------------------------------------------------------

TOKENS = {
    "admin": "admin-token-0123456789abcdef",
    "ci": "ci-token-0123456789abcdef",
    "approver": "approver-token-0123456789abcdef",
    "reader": "reader-token-0123456789abcdef",
    "mcp": "mcp-token-0123456789abcdef",
}
"""Plain tokens (tests only); the app only ever sees their sha256."""

GRANTS = (
    TokenGrant("admin", hash_token(TOKENS["admin"]), frozenset({"admin"})),
    TokenGrant("ci", hash_token(TOKENS["ci"]), frozenset({"read", "lock"}), ("bill*",)),
    TokenGrant("approver", hash_token(TOKENS["approver"]), frozenset({"read", "lock", "approve"})),
    TokenGrant("reader", hash_token(TOKENS["reader"]), frozenset({"read"})),
    TokenGrant("mcp", hash_token(TOKENS["mcp"]), frozenset({"report"}), ("billing",)),
)


def bearer(name_or_token: str) -> dict[str, str]:
    token = TOKENS.get(name_or_token, name_or_token)
    return {"Authorization": f"Bearer {token}"}


# -- apps -------------------------------------------------------------------------------


def make_app(root: Path, tokens: tuple[TokenGrant, ...] = (), **settings: Any) -> FastAPI:
    """An app over ``root``: the directory, or under a ``[pg]`` test a PostgreSQL schema of its own."""
    from tests.stores import location_for

    location = location_for(root)
    if not isinstance(location, Path):
        settings.setdefault("store", location)
    return create_app(Settings(lockfiles=root, tokens=tokens, **settings))


@contextmanager
def api(root: Path, tokens: tuple[TokenGrant, ...] = (), **settings: Any) -> Iterator[TestClient]:
    """A TestClient over a fresh app on ``root`` (lifespan run: startup reconcile, warning)."""
    with TestClient(make_app(root, tokens, **settings), raise_server_exceptions=False) as client:
        yield client


def lock(client: TestClient | httpx.Client, value: JSON, server: str = "billing", *,
         headers: dict[str, str] | None = None, **fields: Any) -> httpx.Response:
    """POST /lock with a JSON body: ``{"server", "surface", **fields}``."""
    return client.post("/lock", json={"server": server, "surface": value, **fields}, headers=headers)


def assert_problem(response: httpx.Response, status: int, code: str | None = None) -> dict[str, JSON]:
    """An RFC 9457 problem with our stable code, and never a traceback."""
    assert response.status_code == status, response.text[:500]
    assert response.headers["content-type"].startswith(PROBLEM_JSON), response.headers
    body = response.json()
    assert {"type", "title", "status", "detail", "code"} <= set(body), body
    assert body["status"] == status
    assert body["type"].endswith(f"/{body['code']}")
    if code is not None:
        assert body["code"] == code, body
    assert "Traceback" not in response.text and 'File "' not in response.text
    return body


def assert_healthy(client: TestClient | httpx.Client) -> None:
    """The service still answers and still locks after whatever came before."""
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/readyz").status_code == 200
    probe = client.post("/lock", json={"server": "health-probe", "surface": numbered(time.monotonic_ns())},
                        headers=bearer("admin"))
    assert probe.status_code == 201, probe.text


# -- metrics ----------------------------------------------------------------------------

_SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][\w:]*)(?:\{(?P<labels>.*)\})? (?P<value>\S+)$")


def metric(text: str, name: str, **labels: str) -> float:
    """The sum of the samples of ``name`` whose labels include ``labels`` (0 when none)."""
    total = 0.0
    for line in text.splitlines():
        match = _SAMPLE.match(line)
        if not match or match["name"] != name:
            continue
        found = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', match["labels"] or ""))
        if all(found.get(key) == value for key, value in labels.items()):
            total += float(match["value"])
    return total


# -- real servers -----------------------------------------------------------------------


def _loopback_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    return sock


@contextmanager
def uvicorn_thread(app: FastAPI) -> Iterator[str]:
    """Serve ``app`` with uvicorn in a thread on a free loopback port; yields the URL."""
    sock = _loopback_socket()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(START_TIMEOUT)
        sock.close()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def clean_env(**extra: str) -> dict[str, str]:
    """The environment for a child process: none of the caller's service settings."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("MCP_GOVERNANCE_") and key != "PROMETHEUS_MULTIPROC_DIR"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.update(extra)
    return env


@contextmanager
def serve_started(args: list[str], log: Path, *, env: dict[str, str] | None = None, ready: str = "/healthz",
                  ) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``python -m app serve ARGS`` on a free loopback port (stdout and stderr to ``log``),
    waited for by polling ``ready`` (never a fixed sleep: generous under load, quick when
    idle); yields the URL and the process, and stops it afterwards (if a test has not). A port
    taken by another test's server between finding it free and binding it: another port."""
    for attempt in range(3):
        port = free_port()
        with log.open("wb") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "app", "serve", "--host", "127.0.0.1", "--port", str(port), *args],
                stdout=out, stderr=subprocess.STDOUT, env=env or clean_env(), cwd=log.parent)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + START_TIMEOUT
        while process.poll() is None and time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}{ready}", timeout=1.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        if process.poll() is None and time.monotonic() < deadline:
            break
        output = log.read_text(errors="replace")
        if process.poll() is None:
            process.kill()
            process.wait()
        if "address already in use" not in output or attempt == 2:
            raise RuntimeError(f"serve did not start:\n{output[-2000:]}")
    try:
        yield url, process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(START_TIMEOUT)
            except subprocess.TimeoutExpired:  # pragma: no cover - only when shutdown hangs
                process.kill()
                process.wait()


@contextmanager
def serve_process(lockfiles: Path, log: Path, *, workers: int = 2, env: dict[str, str] | None = None,
                  ) -> Iterator[str]:
    """A directory-store ``serve`` with ``workers`` workers; yields its URL."""
    with serve_started(["--lockfiles", str(lockfiles), "--workers", str(workers), "--log-level", "debug"],
                       log, env=env) as (url, _process):
        yield url


def read_json_lines(path: Path) -> list[dict[str, JSON]]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
