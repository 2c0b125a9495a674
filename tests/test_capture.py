"""Capturing a running MCP server's surface with the SDK client (``--from-command``,
``--from-url``), and the CLI commands that read one."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import textwrap
import threading
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from app.capture import capture_from_command, capture_from_url, check_url
from app.cli import main
from app.ingest.load import surface_from_json
from app.problems import InputError
from tests.loopback import refused_url
from tests.service_fixtures import (
    RunningService,
    billing_command,
    billing_env,
    billing_module,
    loopback_socket,
    running_service,
)


@pytest.fixture
def governance_service(tmp_path: Path) -> Iterator[RunningService]:
    """The governance service on a free loopback port, over a fresh lockfile store."""
    with running_service(tmp_path / "lockfiles") as service:
        yield service

PAGED_SERVER = textwrap.dedent('''
    """A low-level SDK server that pages tools/list (5 tools, 2 a page) and prompts/list."""
    import anyio
    import mcp.types as types
    from mcp.server.lowlevel.server import Server
    from mcp.server.stdio import stdio_server

    TOOLS = [types.Tool(name=f"tool_{i}", input_schema={"type": "object", "properties": {"n": {"type": "integer"}}})
             for i in range(5)]
    PROMPTS = [types.Prompt(name=f"prompt_{i}") for i in range(3)]


    def page(items, params, size):
        start = int(params.cursor) if params is not None and params.cursor else 0
        following = str(start + size) if start + size < len(items) else None
        return items[start:start + size], following


    async def list_tools(ctx, params):
        tools, following = page(TOOLS, params, 2)
        return types.ListToolsResult(tools=tools, next_cursor=following)


    async def list_prompts(ctx, params):
        prompts, following = page(PROMPTS, params, 2)
        return types.ListPromptsResult(prompts=prompts, next_cursor=following)


    server = Server("paged", version="0.1", on_list_tools=list_tools, on_list_prompts=list_prompts)


    async def main():
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
''')


@pytest.fixture(autouse=True)
def _no_ambient_service(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MCP_GOVERNANCE_URL", "MCP_GOVERNANCE_TOKEN", "BILLING_VERSION"):
        monkeypatch.delenv(name, raising=False)


def tools_of(surface: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool for tool in surface["tools"]}


# --------------------------------------------------------------------------- capture


def test_capture_the_example_server_at_v1_and_v2():
    progress: list[str] = []
    v1 = capture_from_command(billing_command(), env=billing_env("v1"), progress=progress.append)
    v2 = capture_from_command(billing_command(), env=billing_env("v2"))
    assert v1["serverInfo"]["name"] == "billing" and v1["serverInfo"]["version"] == "1.0.0"
    assert isinstance(v1["protocolVersion"], str)
    assert tools_of(v1)["get_invoice"]["inputSchema"]["required"] == ["id"]
    assert "customer" in tools_of(v1)["list_invoices"]["inputSchema"]["properties"]
    currency = tools_of(v2)["get_invoice"]["inputSchema"]["properties"]["currency"]
    assert currency["enum"] == ["EUR", "USD"]
    assert tools_of(v2)["get_invoice"]["inputSchema"]["required"] == ["id", "currency"]
    assert "customer_id" in tools_of(v2)["list_invoices"]["inputSchema"]["properties"]
    assert progress and progress[0].startswith("started billing (") and "2 tools in 1 page" in progress[0]
    surface = surface_from_json(v1)
    assert surface.server == "billing" and sorted(surface.tools) == ["get_invoice", "list_invoices"]
    assert json.loads(json.dumps(v1)) == v1


def test_capture_follows_next_cursor_and_lists_only_what_is_advertised(tmp_path):
    script = tmp_path / "paged.py"
    script.write_text(PAGED_SERVER, encoding="utf-8")
    progress: list[str] = []
    surface = capture_from_command([sys.executable, str(script)], progress=progress.append)
    assert [tool["name"] for tool in surface["tools"]] == [f"tool_{i}" for i in range(5)]
    assert [prompt["name"] for prompt in surface["prompts"]] == [f"prompt_{i}" for i in range(3)]
    assert "resources" not in surface and "resourceTemplates" not in surface
    assert "5 tools in 3 pages" in progress[0] and "3 prompts in 2 pages" in progress[0]


def test_a_server_that_never_answers_times_out_and_is_stopped(tmp_path):
    pid_file = tmp_path / "pid"
    code = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    started = time.monotonic()
    with pytest.raises(InputError) as caught:
        capture_from_command([sys.executable, "-c", code], timeout=0.5)
    elapsed = time.monotonic() - started
    assert str(caught.value) == "--from-command: the MCP server did not answer initialize within 0.5 s"
    # The deadline, then the shutdown: stdin closed, 2 s grace, SIGTERM to its process group.
    assert elapsed < 0.5 + 5.0
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_server_that_crashes_is_named_with_its_last_stderr_line():
    code = "import sys; print('config missing: BILLING_DB', file=sys.stderr); sys.exit(3)"
    with pytest.raises(InputError) as caught:
        capture_from_command([sys.executable, "-c", code], timeout=10)
    message = str(caught.value)
    assert message.startswith("--from-command: the MCP server stopped during initialize")
    assert message.endswith("(its stderr: config missing: BILLING_DB)")


def test_a_command_that_does_not_exist_or_is_empty_is_one_line():
    with pytest.raises(InputError, match=r"^--from-command: cannot start 'no-such-mcp-server-x': "):
        capture_from_command("no-such-mcp-server-x --flag")
    with pytest.raises(InputError, match=r"^--from-command: empty command$"):
        capture_from_command("  ")


@pytest.mark.parametrize("url", [
    "http://example.com/mcp", "http://10.0.0.1:8000/mcp", "http://127.0.0.1.nip.io/mcp", "http://user@evil.test/mcp",
])
def test_plain_http_to_another_host_is_refused_unless_insecure(url):
    with pytest.raises(InputError) as caught:
        capture_from_url(url, timeout=1)
    assert str(caught.value).startswith("--from-url: plain http to ")
    assert str(caught.value).endswith("use https://, or pass --insecure to allow it")
    assert check_url(url, insecure=True) == url


@pytest.mark.parametrize("url", ["ftp://127.0.0.1/mcp", "127.0.0.1:8000/mcp", "http://[::1/mcp", "https:///mcp"])
def test_a_url_that_is_not_http_is_refused(url):
    with pytest.raises(InputError) as caught:
        capture_from_url(url, timeout=1, insecure=True)
    assert str(caught.value).startswith("--from-url: ")


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/mcp", "http://localhost/mcp", "https://[::1]:9/mcp",
                                 "http://LOCALHOST:1/", "https://mcp.example.com/mcp", "https://10.0.0.1/mcp"])
def test_loopback_http_and_any_https_urls_are_accepted(url):
    assert check_url(url) == url


@pytest.fixture
def http_billing() -> Iterator[str]:
    """The example server at v1 over streamable HTTP on a free loopback port."""
    server = billing_module().build("v1")
    app = server.streamable_http_app(host="127.0.0.1")
    sock = loopback_socket()
    web = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=web.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not web.started and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    finally:
        web.should_exit = True
        thread.join(10)
        sock.close()


def test_capture_from_a_streamable_http_server(http_billing):
    surface = capture_from_url(http_billing, timeout=10)
    assert surface["serverInfo"]["name"] == "billing"
    assert sorted(tools_of(surface)) == ["get_invoice", "list_invoices"]


def test_an_unreachable_url_is_one_line():
    url = f"{refused_url()}/mcp"
    with pytest.raises(InputError, match=rf"^--from-url: cannot reach {url}: "):
        capture_from_url(url, timeout=5)


def test_a_capture_needs_no_mcp_sdk(tmp_path):
    """Raw JSON-RPC: the SDK is blocked in the capturing process (the server still uses it)."""
    script = tmp_path / "paged.py"
    script.write_text(PAGED_SERVER, encoding="utf-8")
    code = ("import sys; sys.modules['mcp'] = None\n"
            "from app.cli import main\n"
            f"raise SystemExit(main(['lock', '--from-command', {shlex.join([sys.executable, str(script)])!r}, "
            "'-o', '-']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "5 tools in 3 pages" in done.stderr and 'server = "paged"' in done.stdout


# --------------------------------------------------------------------------- CLI


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def billing_cli_command() -> str:
    return " ".join(f'"{part}"' for part in billing_command())


def test_cli_lock_from_command_writes_the_lockfile(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("BILLING_VERSION", "v1")
    code, out, err = cli(capsys, "lock", "--from-command", billing_cli_command(), "--lockfiles", str(tmp_path))
    assert code == 0 and out == ""
    assert "started billing (" in err and "2 tools in 1 page" in err
    lock = tomllib.loads((tmp_path / "billing.lock.toml").read_text(encoding="utf-8"))
    assert lock["server"] == "billing" and sorted(lock["tools"]) == ["get_invoice", "list_invoices"]
    # The same surface again: the file is left byte for byte.
    before = (tmp_path / "billing.lock.toml").read_bytes()
    assert cli(capsys, "lock", "--from-command", billing_cli_command(), "--lockfiles", str(tmp_path))[0] == 0
    assert (tmp_path / "billing.lock.toml").read_bytes() == before


def test_cli_diff_and_check_read_the_after_side_from_a_command(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("BILLING_VERSION", "v1")
    assert cli(capsys, "lock", "--from-command", billing_cli_command(), "--lockfiles", str(tmp_path))[0] == 0
    monkeypatch.setenv("BILLING_VERSION", "v2")
    code, out, err = cli(capsys, "diff", str(tmp_path / "billing.lock.toml"), "--from-command", billing_cli_command(),
                         "--format", "json")
    assert code == 1
    rules = {(delta["tool"], delta["rule"]) for delta in json.loads(out)["deltas"]}
    assert ("get_invoice", "input.property.added-required") in rules
    code, out, err = cli(capsys, "check", "--from-command", billing_cli_command(), "--lockfiles", str(tmp_path))
    assert code == 1 and "currency" in out and "gate BREAKING: FAIL" in err


def usage_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as caught:
        main(list(argv))
    assert caught.value.code == 2
    return capsys.readouterr().err


def test_cli_needs_exactly_one_source(tmp_path, capsys):
    surface = tmp_path / "tools.json"
    surface.write_text('{"tools": []}')
    err = usage_error(capsys, "lock", str(surface), "--from-command", "python server.py")
    assert err.startswith("usage: mcp-governance lock")
    assert err.endswith("error: give exactly one of SURFACE, --from-command or --from-url "
                        "(got SURFACE and --from-command)\n")
    assert usage_error(capsys, "lock").endswith("error: give exactly one of SURFACE, --from-command or --from-url\n")
    assert "give exactly one of AFTER, --from-command or --from-url" in usage_error(capsys, "diff", str(surface))
    assert "(got --from-command and --from-url)" in usage_error(
        capsys, "live", "--from-command", "x", "--from-url", "http://127.0.0.1/", "--url", "http://127.0.0.1:1")
    code, _, err = cli(capsys, "check", "--from-url", "http://example.com/mcp", "--server", "x")
    assert code == 2 and err.strip() == ("mcp-governance: error: --from-url: plain http to 'example.com' would send "
                                         "the request in clear text: use https://, or pass --insecure to allow it")


def test_cli_refuses_a_server_name_it_cannot_use(tmp_path, capsys):
    script = tmp_path / "named.py"
    script.write_text("from mcp.server.mcpserver import MCPServer\nMCPServer('Billing Server').run()\n")
    code, _, err = cli(capsys, "lock", "--from-command", f'"{sys.executable}" "{script}"', "-o", "-")
    assert code == 2 and err.strip().endswith(
        "--from-command: the server calls itself 'Billing Server', which is not a valid server name; "
        "pass --server NAME")


def test_cli_live_reports_the_drift(governance_service, capsys, monkeypatch, tmp_path):
    url = governance_service.url
    monkeypatch.setenv("BILLING_VERSION", "v1")
    assert cli(capsys, "lock", "--from-command", billing_cli_command(), "--url", url)[0] == 0
    code, out, _ = cli(capsys, "live", "--from-command", billing_cli_command(), "--url", url)
    assert code == 0 and out == "billing: in sync with lock version 1\n"
    monkeypatch.setenv("BILLING_VERSION", "v2")
    code, out, _ = cli(capsys, "live", "--from-command", billing_cli_command(), "--url", url)
    assert code == 0 and out.startswith("billing: drifted from lock version 1 (max BREAKING: ")
    dead = refused_url()
    surface = tmp_path / "tools.json"
    surface.write_text('{"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}')
    code, _, err = cli(capsys, "live", str(surface), "--server", "billing", "--url", dead)
    assert code == 2 and "cannot reach the governance service" in err
    code, _, err = cli(capsys, "live", "--from-command", billing_cli_command())
    assert code == 2 and "pass --url URL" in err


def test_cli_live_exit_2_when_the_service_refuses(governance_service, capsys, tmp_path: Path):
    surface = tmp_path / "tools.json"
    surface.write_text('{"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}')
    code, _, err = cli(capsys, "live", str(surface), "--server", "x", "--url", governance_service.url + "/nowhere")
    assert code == 2 and "404" in err
