"""A real governance service for integration tests: uvicorn on a free loopback port, in a
thread, over a temporary lockfile store; and helpers to run the example billing server.

Test modules wrap :func:`running_service` in a fixture of their own.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import httpx
import uvicorn

from app.api import create_app
from app.config import Settings

ROOT = Path(__file__).resolve().parent.parent
BILLING_SERVER = ROOT / "examples" / "billing_server" / "server.py"
BILLING_CALL = ROOT / "examples" / "billing_server" / "call.py"
START_TIMEOUT = 60.0  # polled readiness: generous under load, never waited out on success


@dataclass
class RunningService:
    url: str
    lockfiles: Path
    server: uvicorn.Server
    thread: threading.Thread

    def stop(self) -> None:
        """Stop serving and close the port (later connections are refused)."""
        self.server.should_exit = True
        self.thread.join(START_TIMEOUT)


def loopback_socket() -> socket.socket:
    """A listening socket on a free port, handed to uvicorn (no bind race)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    return sock


@contextmanager
def running_service(lockfiles: Path) -> Iterator[RunningService]:
    lockfiles.mkdir(parents=True, exist_ok=True)
    app = create_app(Settings(lockfiles=lockfiles))
    sock = loopback_socket()
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the governance service did not start")
        time.sleep(0.01)
    service = RunningService(f"http://127.0.0.1:{port}", lockfiles, server, thread)
    try:
        yield service
    finally:
        service.stop()
        sock.close()


def wait_for_live(url: str, server: str, timeout: float = 30.0) -> dict[str, object]:
    """The dashboard row of ``server`` once its live surface has been reported."""
    deadline = time.monotonic() + timeout
    while True:
        row = httpx.get(f"{url}/dashboard/servers/{server}", timeout=2.0)
        if row.status_code == 200:
            status = row.json()["server"]
            if status["last_reported"] is not None:
                return status
        if time.monotonic() > deadline:
            raise AssertionError(f"{server} never reported its live surface: {row.status_code} {row.text[:200]}")
        time.sleep(0.02)


def billing_env(version: str, governance_url: str | None = None, **extra: str) -> dict[str, str]:
    """The environment the example server reads (and what it needs to import ``app``)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("MCP_GOVERNANCE_")}
    env["BILLING_VERSION"] = version
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    if governance_url:
        env["MCP_GOVERNANCE_URL"] = governance_url
    env.update(extra)
    return env


def billing_command() -> list[str]:
    return [sys.executable, str(BILLING_SERVER)]


def billing_module() -> ModuleType:
    """``examples/billing_server/server.py`` imported as a module (for in-memory tests)."""
    spec = importlib.util.spec_from_file_location("billing_server_example", BILLING_SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
