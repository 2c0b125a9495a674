"""The gateway in front of real published TypeScript servers from the npm registry
(tests/npm_servers.py: pinned, installed into the test cache, run with node), driven by the
official SDK client over stdio: ``@modelcontextprotocol/server-everything`` and
``@modelcontextprotocol/server-filesystem``.

A lock a release pipeline recorded earlier is simulated by editing the captured surface (an
old tool name, an older schema, another description), then locked with the CLI."""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest

from app.capture import capture_from_command
from app.cli import main
from mcp_governance.errors import parse_tool_error
from tests.gateway_fixtures import gateway_client, gateway_params, names, text_of
from tests.npm_servers import installed

pytestmark = pytest.mark.slow

EVERYTHING = "@modelcontextprotocol/server-everything"
FILESYSTEM = "@modelcontextprotocol/server-filesystem"


def lock(lockfiles: Path, server: str, surface: dict[str, Any], tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / f"{server}.surface.json"
    path.write_text(json.dumps(surface))
    assert main(["lock", str(path), "--server", server, "--lockfiles", str(lockfiles)]) == 0, capsys.readouterr().err


def tool_named(surface: dict[str, Any], name: str) -> dict[str, Any]:
    return next(tool for tool in surface["tools"] if tool["name"] == name)


def run(params: Any, script: Any, **client_options: Any) -> Any:
    async def scenario() -> Any:
        with tempfile.TemporaryFile("w+") as log:
            async with gateway_client(params, log, **client_options) as client:
                return await script(client)

    return anyio.run(scenario)


# --------------------------------------------------------------------------- everything


@pytest.fixture(scope="module")
def everything() -> list[str]:
    return [*installed(EVERYTHING), "stdio"]


@pytest.fixture
def everything_locked(everything, tmp_path, capsys) -> Path:
    """The lock of an earlier release: ``get-sum`` was called ``add``."""
    surface = capture_from_command(everything)
    earlier = copy.deepcopy(surface)
    tool_named(earlier, "get-sum")["name"] = "add"
    lockfiles = tmp_path / "lockfiles"
    lock(lockfiles, "everything", earlier, tmp_path, capsys)
    return lockfiles


async def sampling(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    return types.CreateMessageResult(role="assistant", model="test-model",
                                     content=types.TextContent(type="text", text="the sampled answer"))


@pytest.mark.filterwarnings("ignore:The logging capability is deprecated")
def test_everything_in_enforce(everything, everything_locked):
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async def script(client: Any) -> dict[str, Any]:
        return {
            "listing": await client.list_tools(),
            "echo": await client.call_tool("echo", {"message": "hello through the gateway"}),
            "invalid": await client.call_tool("echo", {"text": "hello"}),
            "renamed": await client.call_tool("add", {"a": 1, "b": 2}),
            "new_name": await client.call_tool("get-sum", {"a": 1, "b": 2}),
            "prompt": await client.get_prompt("simple-prompt"),
            "resources": await client.list_resources(),
            "completion": await client.complete(types.PromptReference(type="ref/prompt", name="completable-prompt"),
                                                {"name": "department", "value": "Eng"}),
            "log_level": await client.set_logging_level("debug"),
            "long": await client.call_tool("trigger-long-running-operation", {"duration": 0.2, "steps": 2},
                                           progress_callback=on_progress),
        }

    params = gateway_params("everything", everything, mode="enforce", lockfiles=everything_locked)
    got = run(params, script)
    listed = names(got["listing"])
    assert "echo" in listed and "get-sum" not in listed  # the rename is BREAKING: hidden until locked
    assert text_of(got["echo"]) == "Echo: hello through the gateway"
    invalid = text_of(got["invalid"])
    assert got["invalid"].is_error is True and invalid.startswith("<validation_error")  # the gateway's, not zod's
    unknown = parse_tool_error(text_of(got["renamed"]))
    assert unknown is not None and unknown.code == "UNKNOWN_ACTION"
    assert unknown.awareness is not None and "get-sum" in text_of(got["renamed"])
    blocked = parse_tool_error(text_of(got["new_name"]))
    assert blocked is not None and blocked.code == "FORBIDDEN"
    assert got["prompt"].messages and got["resources"].resources
    assert "Engineering" in got["completion"].completion.values
    assert got["long"].is_error is not True and progress == [1.0, 2.0]


def test_everything_forwards_sampling_and_serves_the_new_tools_in_observe(everything, everything_locked):
    async def script(client: Any) -> tuple[Any, Any]:
        listing = await client.list_tools()
        return listing, await client.call_tool("trigger-sampling-request", {"prompt": "hi", "maxTokens": 10})

    params = gateway_params("everything", everything, mode="observe", lockfiles=everything_locked)
    listing, sampled = run(params, script, sampling_callback=sampling)
    assert "trigger-sampling-request" in names(listing) and "get-sum" in names(listing)
    assert "the sampled answer" in text_of(sampled)


# --------------------------------------------------------------------------- filesystem


@pytest.fixture(scope="module")
def filesystem(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], Path]:
    allowed = tmp_path_factory.mktemp("allowed")
    (allowed / "notes.txt").write_text("governed notes\n")
    return [*installed(FILESYSTEM), str(allowed)], allowed


def test_filesystem_in_pin(filesystem, tmp_path, capsys):
    """filesystem 2025.7.1 publishes schemas that accept anything (``{"$schema": ...}`` alone),
    so it validates arguments itself: its own errors pass through."""
    command, allowed = filesystem
    surface = capture_from_command(command)
    earlier = copy.deepcopy(surface)
    tool_named(earlier, "read_file")["description"] = "Read a file (the description the team approved)."
    earlier["tools"] = [tool for tool in earlier["tools"] if tool["name"] != "move_file"]  # new since the lock
    earlier["tools"].append({**tool_named(surface, "write_file"), "name": "delete_file",
                             "description": "Delete a file."})  # removed since the lock
    lockfiles = tmp_path / "lockfiles"
    lock(lockfiles, "filesystem", earlier, tmp_path, capsys)

    async def script(client: Any) -> dict[str, Any]:
        target = str(allowed / "x.txt")
        return {
            "listing": await client.list_tools(),
            "read": await client.call_tool("read_file", {"path": str(allowed / "notes.txt")}),
            "server_error": await client.call_tool("write_file", {"path": target}),
            "new": await client.call_tool("move_file", {"source": target, "destination": target + ".moved"}),
            "removed": await client.call_tool("delete_file", {"path": target}),
        }

    got = run(gateway_params("filesystem", command, mode="pin", lockfiles=lockfiles), script)
    served = {tool.name: tool for tool in got["listing"].tools}
    assert served["read_file"].description == "Read a file (the description the team approved)."
    assert "move_file" not in served and "write_file" in served and "delete_file" not in served
    assert text_of(got["read"]) == "governed notes\n"
    assert got["server_error"].is_error is True and "content" in text_of(got["server_error"])
    assert not text_of(got["server_error"]).startswith("<validation_error")  # the server's own words
    assert not (allowed / "x.txt").exists()
    new = parse_tool_error(text_of(got["new"]))
    assert new is not None and new.code == "FORBIDDEN" and "not in the lock of filesystem" in new.message
    removed = parse_tool_error(text_of(got["removed"]))
    assert removed is not None and removed.code == "UNKNOWN_ACTION" and removed.awareness is not None
    assert "delete_file" in text_of(got["removed"]) and "read_file" in removed.available_actions
