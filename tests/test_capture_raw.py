"""Capture that never chokes: raw JSON-RPC results read like files (spec-breaking schemas
with one warning each), remote servers over streamable HTTP with headers and a bearer token,
clean timeouts, and the server version recorded from what can be trusted."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import stat
import sys
import threading
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from hypothesis import given
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from app.capture import capture_from_command, capture_from_url, package_version, parse_headers
from app.cli import main
from app.ingest.load import load_surface
from app.problems import InputError
from tests.servers import spec_breaking
from tests.service_fixtures import loopback_socket

SERVER = Path(spec_breaking.__file__)
NO_TYPE = 'tool {}: inputSchema has no "type" (read as "object", as MCP clients do)'


def command(*args: str) -> str:
    return shlex.join([sys.executable, str(SERVER), *args])


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def warnings_of(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("mcp-governance: warning: ")]


# --------------------------------------------------------------------------- spec-breaking schemas


def test_a_spec_breaking_server_is_locked_with_one_warning_per_problem(tmp_path, capsys):
    code, _, err = cli(capsys, "lock", "--from-command", command(), "--lockfiles", str(tmp_path))
    assert code == 0, err
    assert warnings_of(err) == [f"mcp-governance: warning: --from-command: {NO_TYPE.format('read_file')}",
                                f"mcp-governance: warning: --from-command: {NO_TYPE.format('write_file')}"]
    assert "Traceback" not in err
    lock = load_surface(tmp_path / "spec-breaking.lock.toml")
    assert lock.tools["read_file"].input_schema == {**spec_breaking.DRAFT7, "type": "object"}
    assert lock.tools["list_directory"].input_schema == spec_breaking.tools()[2]["inputSchema"]


def test_the_same_surface_from_a_file_reads_the_same_with_the_same_warnings(tmp_path, capsys):
    captured = capture_from_command([sys.executable, str(SERVER)])
    assert captured["tools"] == spec_breaking.tools()  # exactly what the server sent
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(captured), encoding="utf-8")
    code, _, err = cli(capsys, "lock", str(path), "--lockfiles", str(tmp_path / "from-file"))
    assert code == 0
    assert warnings_of(err) == [f"mcp-governance: warning: {path}: {NO_TYPE.format('read_file')}",
                                f"mcp-governance: warning: {path}: {NO_TYPE.format('write_file')}"]
    code, _, err = cli(capsys, "lock", "--from-command", command(), "--lockfiles", str(tmp_path / "live"))
    assert code == 0
    from_file = load_surface(tmp_path / "from-file" / "spec-breaking.lock.toml")
    live = load_surface(tmp_path / "live" / "spec-breaking.lock.toml")
    assert from_file.integrity_digest == live.integrity_digest


def test_the_fixed_schema_of_a_later_release_is_no_break(tmp_path):
    """What the missing type is read as is what the server's fix says: no BREAKING change."""
    before = load_surface(capture_from_command([sys.executable, str(SERVER)]), server="fs")
    fixed = {**spec_breaking.tools()[1]["inputSchema"], "type": "object"}
    after = load_surface({"tools": [*spec_breaking.tools()[:1], {**spec_breaking.tools()[1], "inputSchema": fixed},
                                    spec_breaking.tools()[2]]}, server="fs")
    from app import diff

    assert [delta for delta in diff(before, after).deltas if delta.tool == "write_file"] == []


@pytest.mark.parametrize("root", [
    {"$ref": "#/$defs/Args", "$defs": {"Args": {"type": "object"}}},
    {"oneOf": [{"type": "object", "properties": {"action": {"const": "a"}}}]},
    {"allOf": [{"type": "object"}]},
    {"type": ["object", "null"]},
])
def test_a_root_that_names_its_type_another_way_is_kept_as_sent(root):
    surface = load_surface({"tools": [{"name": "t", "inputSchema": root}]}, server="s")
    assert surface.tools["t"].input_schema == root and surface.warnings == ()


# --------------------------------------------------------------------------- names and versions


def test_a_self_reported_version_is_marked(tmp_path, capsys):
    code, _, err = cli(capsys, "lock", "--from-command", command(), "--lockfiles", str(tmp_path))
    assert code == 0, err
    header = tomllib.loads((tmp_path / "spec-breaking.lock.toml").read_text())
    assert header["server_version"] == "0.2.0 (self-reported)"
    code, _, err = cli(capsys, "lock", "--from-command", command(), "--server-version", "3.1.4", "-o",
                       str(tmp_path / "given.toml"))
    assert tomllib.loads((tmp_path / "given.toml").read_text())["server_version"] == "3.1.4"


@pytest.fixture
def fake_runners(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``npx``, ``uvx`` and ``pipx`` on PATH that start the spec-breaking server whatever they are asked."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for runner in ("npx", "uvx", "pipx"):
        path = bin_dir / runner
        path.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(str(SERVER))}\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return bin_dir


@pytest.mark.parametrize("runner, version", [
    ("npx -y @acme/server-files@2025.7.1 /srv", "2025.7.1"),
    ("npx acme-files@1.4.2", "1.4.2"),
    ("uvx acme-files==0.9.0 --root /srv", "0.9.0"),
    ("uvx --from acme-files==0.9.1 acme-serve", "0.9.1"),
    ("pipx run acme-files==2.0.0", "2.0.0"),
])
def test_a_package_runners_pin_is_the_version(fake_runners, tmp_path, capsys, runner, version):
    out = tmp_path / "lock.toml"
    code, _, err = cli(capsys, "lock", "--from-command", runner, "-o", str(out))
    assert code == 0, err
    assert tomllib.loads(out.read_text())["server_version"] == version


package_names = st.from_regex(r"\A(@[a-z][a-z0-9-]{0,10}/)?[a-z][a-z0-9._-]{0,20}\Z")
versions = st.from_regex(r"\A[0-9]{1,4}(\.[0-9]{1,4}){0,3}(-[a-z0-9.]{1,8})?\Z")


@given(package_names, versions, st.sampled_from([[], ["-y"], ["--yes"], ["-y", "--quiet"]]),
       st.lists(st.sampled_from(["/srv", "--root", "x"]), max_size=3))
def test_npx_pins_are_read_whatever_the_flags_and_arguments(name, version, flags, arguments):
    assert package_version(["npx", *flags, f"{name}@{version}", *arguments]) == (name, version)


@given(package_names.filter(lambda name: not name.startswith("@")), versions)
def test_python_runner_pins_are_read(name, version):
    assert package_version(["uvx", f"{name}=={version}"]) == (name, version)
    assert package_version(["uvx", "--from", f"{name}=={version}", "serve"]) == (name, version)
    assert package_version(["pipx", "run", f"{name}=={version}"]) == (name, version)
    assert package_version(["/usr/local/bin/uvx", f"{name}[cli]=={version}"]) == (name, version)


@pytest.mark.parametrize("argv", [
    ["npx", "-y", "acme-files"], ["npx", "acme-files@latest"], ["uvx", "acme-files"], ["uvx", "acme-files>=1"],
    ["pipx", "install", "acme==1.0"], ["python", "server.py"], ["node", "acme@1.0.0"], [],
])
def test_unpinned_or_unknown_commands_give_no_version(argv):
    assert package_version(argv) is None


def test_diff_names_the_lock_not_what_the_live_server_calls_itself(tmp_path, capsys):
    code, _, _ = cli(capsys, "lock", "--from-command", command(), "--server", "files", "-o", str(tmp_path / "l.toml"))
    assert code == 0
    odd = command("Secure Filesystem Server!", "--paths")  # not a valid name, and a BREAKING change
    code, out, err = cli(capsys, "diff", str(tmp_path / "l.toml"), "--from-command", odd, "--format", "json")
    assert code == 1, err
    assert json.loads(out)["server"] == "files"
    code, out, _ = cli(capsys, "diff", str(tmp_path / "l.toml"), "--from-command", odd, "--server", "other",
                       "--format", "json")
    assert json.loads(out)["server"] == "other"
    code, out, _ = cli(capsys, "diff", str(tmp_path / "l.toml"), "--from-command", odd, "--format", "markdown")
    assert "0.2.0 (self-reported) →" not in out and "Version" not in out  # equal versions: nothing to say


def test_check_takes_server_with_a_command(tmp_path, capsys):
    code, _, _ = cli(capsys, "lock", "--from-command", command(), "--server", "files", "--lockfiles", str(tmp_path))
    assert code == 0
    code, _, err = cli(capsys, "check", "--from-command", command("Not A Name!"), "--server", "files",
                       "--lockfiles", str(tmp_path))
    assert code == 0, err


# --------------------------------------------------------------------------- streamable HTTP


def http_app(mode: str, delay: float = 0.0) -> Starlette:
    """The spec-breaking server over streamable HTTP; it wants X-Tenant: acme and a bearer token."""
    sessions: set[str] = set()

    async def mcp(request: Request) -> Response:
        if request.headers.get("authorization") != "Bearer s3cret":
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        if request.headers.get("x-tenant") != "acme":
            return JSONResponse({"error": "no tenant"}, status_code=403)
        message = json.loads(await request.body())
        headers = {}
        if message.get("method") == "initialize":
            await asyncio.sleep(delay)
            headers["Mcp-Session-Id"] = f"s{len(sessions)}"
            sessions.add(headers["Mcp-Session-Id"])
        elif request.headers.get("mcp-session-id") not in sessions or not request.headers.get("mcp-protocol-version"):
            return JSONResponse({"error": "no session"}, status_code=400)
        reply = spec_breaking.answer(message)
        if reply is None:
            return Response(status_code=202)
        if mode == "json":
            return JSONResponse(reply, headers=headers)

        async def events() -> Any:
            yield 'event: message\ndata: {"jsonrpc": "2.0", "method": "notifications/message", "params": {}}\n\n'
            yield f"event: message\ndata: {json.dumps(reply)}\n\n"

        return StreamingResponse(events(), media_type="text/event-stream", headers=headers)

    async def end(request: Request) -> Response:
        sessions.discard(request.headers.get("mcp-session-id", ""))
        return Response(status_code=204)

    return Starlette(routes=[Route("/mcp", mcp, methods=["POST"]), Route("/mcp", end, methods=["DELETE"])])


@pytest.fixture
def serve_http() -> Iterator[Any]:
    started: list[tuple[uvicorn.Server, threading.Thread]] = []

    def start(mode: str, delay: float = 0.0) -> str:
        sock = loopback_socket()
        web = uvicorn.Server(uvicorn.Config(http_app(mode, delay), log_level="warning", lifespan="off"))
        thread = threading.Thread(target=web.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        started.append((web, thread))
        deadline = time.monotonic() + 10
        while not web.started and time.monotonic() < deadline:
            time.sleep(0.01)
        return f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"

    yield start
    for web, thread in started:
        web.should_exit = web.force_exit = True  # no wait for a deliberately slow answer
        thread.join(10)


@pytest.mark.parametrize("mode", ["json", "sse"])
def test_a_remote_server_with_headers_and_a_token_from_the_environment(serve_http, tmp_path, capsys, monkeypatch, mode):
    url = serve_http(mode)
    monkeypatch.setenv("ACME_TOKEN", "s3cret")
    code, _, err = cli(capsys, "lock", "--from-url", url, "--header", "X-Tenant: acme", "--token-env", "ACME_TOKEN",
                       "--lockfiles", str(tmp_path))
    assert code == 0, err
    assert len(warnings_of(err)) == 2 and "s3cret" not in err
    assert sorted(load_surface(tmp_path / "spec-breaking.lock.toml").tools) == ["list_directory", "read_file",
                                                                               "write_file"]


def test_a_refusal_is_one_line_that_says_how_to_authenticate(serve_http, capsys, monkeypatch):
    url = serve_http("json")
    code, _, err = cli(capsys, "check", "--from-url", url, "--server", "x")
    assert code == 2
    assert err == ("mcp-governance: error: --from-url: the server answered HTTP 401 Unauthorized (pass --token-env "
                   'VAR or --header NAME:VALUE): {"error":"unauthorized"}\n')
    monkeypatch.delenv("NO_SUCH_TOKEN", raising=False)
    code, _, err = cli(capsys, "check", "--from-url", url, "--token-env", "NO_SUCH_TOKEN", "--server", "x")
    assert err == "mcp-governance: error: --token-env: the environment variable NO_SUCH_TOKEN is not set or empty\n"


def test_a_slow_remote_server_times_out_cleanly(serve_http):
    delay = 30.0
    url = serve_http("json", delay=delay)
    started = time.monotonic()
    with pytest.raises(InputError) as caught:
        capture_from_url(url, timeout=0.5, headers={"Authorization": "Bearer s3cret", "X-Tenant": "acme"})
    assert str(caught.value) == "--from-url: the MCP server did not answer initialize within 0.5 s"
    assert time.monotonic() - started < delay / 3  # it gave up; it did not wait for the answer


@pytest.mark.parametrize("values, problem", [
    (["X-Tenant"], "expected NAME:VALUE"), (["Bad Name: x"], "expected NAME:VALUE"), ([": x"], "expected NAME:VALUE"),
])
def test_bad_headers_are_named(values, problem):
    with pytest.raises(InputError, match=f"^--header: {problem}"):
        parse_headers(values)


def test_header_options_go_with_from_url_only(capsys, tmp_path):
    with pytest.raises(SystemExit):
        main(["lock", "--from-command", command(), "--header", "A: b", "-o", str(tmp_path / "x")])
    assert "--header, --token-env and --insecure go with --from-url" in capsys.readouterr().err
