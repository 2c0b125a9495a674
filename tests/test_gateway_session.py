"""The gateway in a whole session with a server that changes its tools mid-session (a rug
pull after ``initialize``) and uses everything that must pass through: prompts, resources,
sampling, elicitation, roots, progress and log messages. The official SDK client, over
stdio and over streamable HTTP (``--listen``)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from mcp_governance.errors import parse_tool_error
from tests.gateway_fixtures import SERVERS, gateway_client, gateway_params, lock_from_command, text_of

WEATHER = [sys.executable, str(SERVERS / "weather_rugpull.py")]
sys.path.insert(0, str(SERVERS))
from weather_rugpull import DESCRIPTION, POISONED, REWORDED  # noqa: E402


@pytest.fixture(scope="module")
def lockfiles(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("lockfiles")
    lock_from_command(directory, "weather", WEATHER)
    return directory


class Seen:
    """What the client received besides results."""

    def __init__(self) -> None:
        self.tools_changed = anyio.Event()
        self.logs: list[Any] = []
        self.progress: list[tuple[float, float | None, str | None]] = []

    async def message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.tools_changed.set()

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params.data)

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append((progress, total, message))


async def sampling(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    asked = params.messages[0].content
    return types.CreateMessageResult(role="assistant", model="test-model",
                                     content=types.TextContent(type="text", text=f"42 ({asked.text})"))


async def elicitation(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"ok": True})


async def roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///srv/project", name="project")])


def calls(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def run(lockfiles: Path, tmp_path: Path, mode: str, script: Callable[[Client, Seen], Any],
        options: tuple[str, ...] = (), **extra_env: str) -> Any:
    params = gateway_params("weather", WEATHER, mode=mode, lockfiles=lockfiles, options=options,
                            CALL_LOG=str(tmp_path / "calls.jsonl"), **extra_env)
    seen = Seen()

    async def scenario() -> Any:
        with tempfile.TemporaryFile("w+") as log:
            async with gateway_client(params, log, message_handler=seen.message, logging_callback=seen.log,
                                      sampling_callback=sampling, elicitation_callback=elicitation,
                                      list_roots_callback=roots) as client:
                return await script(client, seen)

    return anyio.run(scenario)


async def rug_pull(client: Client, seen: Seen, kind: str) -> None:
    assert (await client.call_tool("rug_pull", {"kind": kind})).is_error is False
    with anyio.fail_after(10):
        await seen.tools_changed.wait()


def weather_tool(listing: Any) -> Any:
    return next((tool for tool in listing.tools if tool.name == "get_weather"), None)


@pytest.mark.parametrize("mode", ["enforce", pytest.param("pin", marks=pytest.mark.slow)])
def test_a_breaking_rug_pull_mid_session_is_blocked(lockfiles, tmp_path, mode):
    async def script(client: Client, seen: Seen) -> tuple[Any, Any, Any, Any]:
        before = await client.list_tools()
        first = await client.call_tool("get_weather", {"city": "Paris"})
        await rug_pull(client, seen, "schema")
        return before, first, await client.list_tools(), await client.call_tool(
            "get_weather", {"city": "Paris", "units": "C"})

    before, first, after, blocked = run(lockfiles, tmp_path, mode, script)
    assert weather_tool(before) is not None and text_of(first) == "sunny in Paris"
    assert weather_tool(after) is None
    info = parse_tool_error(text_of(blocked))
    assert blocked.is_error is True and info is not None and info.code == "FORBIDDEN"
    assert "get_weather" not in info.available_actions
    reached = [call for call in calls(tmp_path / "calls.jsonl") if call["tool"] == "get_weather"]
    assert reached == [{"tool": "get_weather", "arguments": {"city": "Paris"}}]


@pytest.mark.slow  # a variation of the sessions kept in the dev profile: ci profile only
def test_pin_serves_the_locked_text_after_a_poisoning_rug_pull(lockfiles, tmp_path):
    async def script(client: Client, seen: Seen) -> tuple[Any, Any]:
        await rug_pull(client, seen, "poison")
        return await client.list_tools(), await client.call_tool("get_weather", {"city": "Oslo"})

    listing, result = run(lockfiles, tmp_path, "pin", script)
    assert weather_tool(listing).description == DESCRIPTION
    assert POISONED not in json.dumps([tool.model_dump() for tool in listing.tools])
    assert text_of(result) == "sunny in Oslo"


@pytest.mark.slow  # a variation of the sessions kept in the dev profile: ci profile only
def test_enforce_blocks_the_poisoned_tool_and_pin_rewords_nothing_it_need_not(lockfiles, tmp_path):
    async def poisoned(client: Client, seen: Seen) -> Any:
        await rug_pull(client, seen, "poison")
        return await client.list_tools()

    assert weather_tool(run(lockfiles, tmp_path, "enforce", poisoned)) is None

    async def reworded(client: Client, seen: Seen) -> Any:
        await rug_pull(client, seen, "text")
        return await client.list_tools()

    assert weather_tool(run(lockfiles, tmp_path, "enforce", reworded)).description == REWORDED
    assert weather_tool(run(lockfiles, tmp_path, "pin", reworded)).description == DESCRIPTION


@pytest.mark.slow  # a variation of the sessions kept in the dev profile: ci profile only
def test_observe_reports_a_rug_pull_and_validates_against_the_new_schema(lockfiles, tmp_path):
    async def script(client: Client, seen: Seen) -> tuple[Any, Any, Any]:
        await rug_pull(client, seen, "schema")
        return (await client.list_tools(), await client.call_tool("get_weather", {"city": "Paris"}),
                await client.list_prompts())

    listing, invalid, prompts = run(lockfiles, tmp_path, "observe", script)
    assert prompts.prompts[1].description == "Ask for tomorrow's weather.\u200b"  # observe changes nothing
    assert "units" in weather_tool(listing).input_schema["properties"]
    assert invalid.is_error is True and text_of(invalid).startswith("<validation_error")
    assert "<contract_awareness" in text_of(invalid)
    assert [call["tool"] for call in calls(tmp_path / "calls.jsonl")] == ["rug_pull"]


def test_everything_ungoverned_passes_through(lockfiles, tmp_path):
    async def script(client: Client, seen: Seen) -> dict[str, Any]:
        return {
            "prompts": await client.list_prompts(),
            "prompt": await client.get_prompt("forecast", {"city": "Oslo"}),
            "resources": await client.list_resources(),
            "resource": await client.read_resource("weather://cities"),
            "sampling": await client.call_tool("ask_model", {"question": "meaning of life?"}),
            "elicitation": await client.call_tool("confirm", {"question": "sure?"}),
            "roots": await client.call_tool("list_roots", {}),
            "slow": await client.call_tool("slow", {"steps": 3}, progress_callback=seen.on_progress),
            "seen": seen,
        }

    got = run(lockfiles, tmp_path, "enforce", script)
    assert [prompt.name for prompt in got["prompts"].prompts] == ["forecast", "tomorrow"]
    assert got["prompts"].prompts[1].description == "Ask for tomorrow's weather."  # hidden character removed
    assert "forecast for Oslo" in got["prompt"].messages[0].content.text
    assert [str(resource.uri) for resource in got["resources"].resources] == ["weather://cities"]
    assert got["resource"].contents[0].text == "Paris, Oslo"
    assert text_of(got["sampling"]) == "model said: 42 (meaning of life?)"
    assert text_of(got["elicitation"]).startswith("user: accept")
    assert text_of(got["roots"]) == "file:///srv/project"
    assert text_of(got["slow"]) == "done"
    assert [step[0] for step in got["seen"].progress] == [1.0, 2.0, 3.0]
    assert any("step 3 of 3" in str(data) for data in got["seen"].logs)


def test_the_token_never_reaches_the_server(lockfiles, tmp_path):
    secret = "tok-never-forwarded-5f2c"

    async def script(client: Client, seen: Seen) -> Any:
        return await client.call_tool("report_env", {"needle": secret})

    result = run(lockfiles, tmp_path, "observe", script, MCP_GOVERNANCE_TOKEN=secret, OTHER_COPY=secret)
    assert json.loads(text_of(result)) == {"found": False, "governance_variables": []}


# --------------------------------------------------------------------------- streamable HTTP


@contextmanager
def listening_gateway(lockfiles: Path, tmp_path: Path, mode: str) -> Iterator[str]:
    """``gateway --listen 127.0.0.1:0`` in a process of its own; yields its URL."""
    params = gateway_params("weather", WEATHER, mode=mode, lockfiles=lockfiles, options=("--listen", "127.0.0.1:0"),
                            CALL_LOG=str(tmp_path / "calls.jsonl"))
    with tempfile.TemporaryFile("w+") as log:
        process = subprocess.Popen([params.command, *params.args], env=params.env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=log)
        try:
            deadline = time.monotonic() + 60  # polled: generous under load
            while True:
                log.seek(0)
                found = re.search(r"listening on (http://\S+)", log.read())
                if found:
                    break
                assert process.poll() is None and time.monotonic() < deadline, "the gateway did not start"
                time.sleep(0.05)
            yield found.group(1)
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@asynccontextmanager
async def http_client(url: str, seen: Seen, mode: str) -> AsyncIterator[Client]:
    async with Client(url, cache=None, mode=mode, message_handler=seen.message) as client:
        yield client


@pytest.mark.parametrize("protocol", ["legacy", pytest.param("auto", marks=pytest.mark.slow)])
def test_over_streamable_http_a_rug_pull_is_blocked_and_the_rest_passes(lockfiles, tmp_path, protocol):
    seen = Seen()
    with listening_gateway(lockfiles, tmp_path, "enforce") as url:
        async def scenario() -> dict[str, Any]:
            async with http_client(url, seen, protocol) as client:
                got = {"before": await client.list_tools(),
                       "valid": await client.call_tool("get_weather", {"city": "Paris"}),
                       "invalid": await client.call_tool("get_weather", {}),
                       "resource": await client.read_resource("weather://cities")}
                assert (await client.call_tool("rug_pull", {"kind": "schema"})).is_error is False
                deadline = time.monotonic() + 10
                while weather_tool(await client.list_tools()) is not None:
                    assert time.monotonic() < deadline, "the rug pull was never blocked"
                    await anyio.sleep(0.05)
                got["blocked"] = await client.call_tool("get_weather", {"city": "Paris", "units": "C"})
                return got

        got = anyio.run(scenario)
    assert weather_tool(got["before"]) is not None and text_of(got["valid"]) == "sunny in Paris"
    assert text_of(got["invalid"]).startswith("<validation_error")
    assert got["resource"].contents[0].text == "Paris, Oslo"
    info = parse_tool_error(text_of(got["blocked"]))
    assert info is not None and info.code == "FORBIDDEN"
    assert [call["arguments"] for call in calls(tmp_path / "calls.jsonl") if call["tool"] == "get_weather"] == [
        {"city": "Paris"}]





def approve_live(own: Path) -> None:
    """A reviewer approves the rug-pulled schema the gateway reported: a lock with approved_by."""
    from app.service import Governance, LockRequest
    from app.store import FileStore

    gov = Governance(FileStore(own))
    deadline = time.monotonic() + 10
    while True:
        live = gov.live_surface("weather")
        if live is not None and "units" in json.dumps(live.tools["get_weather"].input_schema):
            break
        assert time.monotonic() < deadline, "the gateway never reported the rug-pulled surface"
        time.sleep(0.05)
    gov.lock("weather", live, LockRequest(who="test", approved_by="reviewer", reason="units are fine"))


# The dev profile keeps the timer; the tools/list_changed variation runs in the ci profile.
@pytest.mark.parametrize("trigger", ["lock-refresh", pytest.param("list-changed", marks=pytest.mark.slow)])
def test_a_change_approved_mid_session_comes_back(lockfiles, tmp_path, trigger):
    """Once someone approves the blocked schema (a lock with approved_by), the tool comes back
    and the client is told (tools/list_changed): the gateway fetches the lock on a timer
    (--lock-refresh), though the server changed nothing since, and again on every
    tools/list_changed from the server."""
    import shutil

    own = tmp_path / "lockfiles"
    shutil.copytree(lockfiles, own)

    async def script(client: Client, seen: Seen) -> tuple[Any, Any, Any]:
        await rug_pull(client, seen, "schema")
        blocked = await client.list_tools()
        seen.tools_changed = anyio.Event()
        await anyio.to_thread.run_sync(approve_live, own)
        if trigger == "list-changed":
            await rug_pull(client, seen, "schema")  # the server says its tools changed again
        else:
            with anyio.fail_after(30):
                await seen.tools_changed.wait()  # from the gateway: the server sent nothing
        return blocked, await client.list_tools(), await client.call_tool("get_weather", {"city": "Oslo", "units": "C"})

    refresh = "0.2" if trigger == "lock-refresh" else "0"
    blocked, approved, called = run(own, tmp_path, "enforce", script, options=("--lock-refresh", refresh))
    assert weather_tool(blocked) is None
    assert "units" in weather_tool(approved).input_schema["properties"]
    assert text_of(called) == "sunny in Oslo, 21 C"


@pytest.mark.slow  # a variation of the sessions kept in the dev profile: ci profile only
def test_a_gateway_fronts_a_streamable_http_server_with_upstream_url(lockfiles, tmp_path):
    """Two gateways in a row: the first serves the weather server over streamable HTTP, the
    second fronts that URL (``--upstream-url``) for a stdio client, in pin mode."""
    with listening_gateway(lockfiles, tmp_path, "observe") as url:
        params = gateway_params("weather", [], mode="pin", lockfiles=lockfiles, options=("--upstream-url", url))
        params = params.model_copy(update={"args": [arg for arg in params.args if arg != "--"]})

        async def scenario() -> tuple[Any, Any, Any]:
            seen = Seen()
            with tempfile.TemporaryFile("w+") as log:
                async with gateway_client(params, log, message_handler=seen.message) as client:
                    listing = await client.list_tools()
                    valid = await client.call_tool("get_weather", {"city": "Oslo"})
                    await rug_pull(client, seen, "poison")  # relayed by both gateways
                    return listing, valid, await client.list_tools()

        listing, valid, after = anyio.run(scenario)
    assert weather_tool(listing).description == DESCRIPTION and text_of(valid) == "sunny in Oslo"
    assert weather_tool(after).description == DESCRIPTION  # pinned: the poisoned text never reaches the client
