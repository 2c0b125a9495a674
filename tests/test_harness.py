"""The suite's own helpers, where a mistake would make other tests flaky rather than fail."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest

from tests import helpers_service
from tests.loopback import refused_url
from tests.service_fixtures import loopback_socket


def test_a_serve_whose_port_was_taken_meanwhile_starts_on_another(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Between finding a port free and ``serve`` binding it, another test's server may take it:
    the helper starts again on another port instead of failing the test (or, worse, polling the
    other server's /healthz)."""
    taken = loopback_socket()  # listening: serve cannot bind it
    offered = [taken.getsockname()[1]]
    real = helpers_service.free_port
    monkeypatch.setattr(helpers_service, "free_port", lambda: offered.pop() if offered else real())
    try:
        with helpers_service.serve_started(["--lockfiles", str(tmp_path / "lockfiles")], tmp_path / "serve.log",
                                           ready="/readyz") as (url, process):
            assert not offered and not url.endswith(f":{taken.getsockname()[1]}")
            assert process.poll() is None and httpx.get(f"{url}/lockfiles", timeout=10).status_code == 200
    finally:
        taken.close()


def test_the_refused_url_refuses_and_keeps_its_port() -> None:
    url = refused_url()
    assert refused_url() == url  # one per process, bound for its whole life
    host, port = url.removeprefix("http://").split(":")
    with pytest.raises(ConnectionRefusedError), socket.create_connection((host, int(port)), timeout=5):
        pass
    with pytest.raises(OSError), socket.socket() as other:  # nobody else can take it
        other.bind((host, int(port)))
