"""The MCP SDK integration through the real SDK: a governed ``MCPServer`` driven by the SDK's
in-process ``Client``, against a real governance service on a loopback port."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError as SdkToolError
from mcp.server.mcpserver.tools import Tool

from mcp_governance.client import GovernanceClient
from mcp_governance.errors import (
    INTERNAL_ERROR_RECOVERY,
    ToolError,
    error,
    parse_tool_error,
    tool_error,
)
from mcp_governance.integrations import Governed, govern
from mcp_governance.integrations._core import MARK
from tests.loopback import refused_url
from tests.service_fixtures import (
    RunningService,
    billing_module,
    loopback_socket,
    running_service,
)


@pytest.fixture
def governance_service(tmp_path: Path) -> Iterator[RunningService]:
    """The governance service on a free loopback port, over a fresh lockfile store."""
    with running_service(tmp_path / "lockfiles") as service:
        yield service

BUDGET = 0.2
SLACK = 0.5
"""What a fallback may take beyond the budget on a loaded CI machine (thread hand-offs)."""


def run(scenario: Callable[[], Awaitable[Any]]) -> Any:
    return anyio.run(scenario)


def text_of(result: Any) -> str:
    return "\n".join(item.text for item in result.content if getattr(item, "text", None) is not None)


async def surface_of(server: MCPServer) -> dict[str, Any]:
    async with Client(server, cache=None) as client:
        listing = await client.list_tools()
    return {"serverInfo": {"name": server.name}, "tools": [
        tool.model_dump(by_alias=True, mode="json", exclude_none=True) for tool in listing.tools]}


def lock(service: RunningService, name: str, surface: dict[str, Any]) -> None:
    with GovernanceClient(service.url) as client:
        assert client.lock(name, surface).created


@pytest.fixture
def billing(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.delenv("MCP_GOVERNANCE_URL", raising=False)
    return billing_module()


# --------------------------------------------------------------------------- validation errors


def test_a_v1_call_to_v2_gets_the_services_validation_error_with_awareness(governance_service, billing):
    lock(governance_service, "billing", run(lambda: surface_of(billing.build("v1"))))
    server = billing.build("v2")
    governed = govern(server, url=governance_service.url)

    async def scenario() -> tuple[Any, Any, float]:
        async with Client(server, cache=None) as client:
            started = time.perf_counter()
            wrong = await client.call_tool("get_invoice", {"id": "inv_1001"})
            elapsed = time.perf_counter() - started
            right = await client.call_tool("get_invoice", {"id": "inv_1001", "currency": "USD"})
        return wrong, right, elapsed

    wrong, right, elapsed = run(scenario)
    assert governed.last_report is not None and governed.last_report["status"] == "drifted"
    assert wrong.is_error is True
    info = parse_tool_error(text_of(wrong))
    assert info is not None and info.kind == "validation_error"
    assert info.action == "get_invoice" and list(info.fields) == ["currency"]
    assert info.awareness is not None and info.awareness.max_severity == "BREAKING"
    assert any(change.severity == "BREAKING" and "currency" in (change.field or "")
               for change in info.awareness.changes)
    assert elapsed < BUDGET + SLACK
    assert right.is_error is False and text_of(right) == "inv_1001: 141.90 USD"


def test_the_live_report_of_an_unchanged_server_is_in_sync_with_its_lock(governance_service, billing):
    lock(governance_service, "billing", run(lambda: surface_of(billing.build("v1"))))
    governed = govern(billing.build("v1"), url=governance_service.url, report_live=False)
    answer = run(governed.report_live)
    assert answer is not None and answer["status"] == "in-sync"


def sdk_message(build: Callable[[], MCPServer], tool: str, arguments: dict[str, Any]) -> str:
    async def scenario() -> str:
        async with Client(build(), cache=None) as client:
            return text_of(await client.call_tool(tool, arguments))

    return run(scenario)


@pytest.mark.parametrize("where", ["down", "silent"])
def test_a_down_or_silent_service_leaves_the_sdks_own_message_within_the_budget(where, billing):
    own = sdk_message(lambda: billing.build("v2"), "get_invoice", {"id": "inv_1001"})
    assert own.startswith("Error executing tool get_invoice: 1 validation error")
    silent = loopback_socket()  # accepts connections, never answers
    url = refused_url() if where == "down" else f"http://127.0.0.1:{silent.getsockname()[1]}"
    server = billing.build("v2")
    governed = govern(server, url=url, budget=BUDGET)

    async def scenario() -> tuple[Any, float]:
        async with Client(server, cache=None) as client:
            started = time.perf_counter()
            result = await client.call_tool("get_invoice", {"id": "inv_1001"})
            return result, time.perf_counter() - started

    try:
        result, elapsed = run(scenario)
    finally:
        silent.close()
        governed.close()
    assert result.is_error is True and text_of(result) == own
    assert elapsed < BUDGET + SLACK


def test_the_budget_is_configurable(billing):
    silent = loopback_socket()
    server = billing.build("v2")
    govern(server, url=f"http://127.0.0.1:{silent.getsockname()[1]}", budget=0.05, report_live=False)

    async def scenario() -> float:
        async with Client(server, cache=None) as client:
            started = time.perf_counter()
            await client.call_tool("get_invoice", {"id": "inv_1001"})
            return time.perf_counter() - started

    try:
        assert run(scenario) < 0.05 + SLACK
    finally:
        silent.close()


GROUPED_V1 = {"oneOf": [
    {"type": "object", "properties": {"action": {"const": "get_invoice"}, "id": {"type": "string"}},
     "required": ["action", "id"]},
    {"type": "object", "properties": {"action": {"const": "list_invoices"}, "customer": {"type": "string"}},
     "required": ["action", "customer"]},
]}
GROUPED_V2 = {"oneOf": [
    {"type": "object", "properties": {"action": {"const": "get_invoice"}, "id": {"type": "string"},
                                      "currency": {"type": "string", "enum": ["EUR", "USD"]}},
     "required": ["action", "id", "currency"]},
    {"type": "object", "properties": {"action": {"const": "list_invoices"}, "customer_id": {"type": "string"}},
     "required": ["action", "customer_id"]},
]}


def grouped_server() -> MCPServer:
    """One tool, two actions: the SDK validates with the function's model, the published
    schema is the grouped one (a oneOf on ``action``)."""

    def billing(action: Literal["get_invoice", "list_invoices"], id: str | None = None,
                currency: Literal["EUR", "USD"] | None = None, customer_id: str | None = None) -> str:
        return f"{action} {id or customer_id} {currency or ''}".strip()

    tool = Tool.from_function(billing)
    tool.parameters = GROUPED_V2
    return MCPServer("grouped", tools=[tool])


def test_a_grouped_tool_gets_the_awareness_of_the_action_it_called(governance_service):
    lock(governance_service, "grouped", {"tools": [{"name": "billing", "inputSchema": GROUPED_V1}]})
    server = grouped_server()
    govern(server, url=governance_service.url)

    async def scenario() -> Any:
        async with Client(server, cache=None) as client:
            return await client.call_tool("billing", {"action": "get_invoice", "id": "inv_1", "currency": "GBP"})

    info = parse_tool_error(text_of(run(scenario)))
    assert info is not None and info.kind == "validation_error"
    assert info.action == "billing.get_invoice" and "currency" in info.fields
    assert info.awareness is not None and info.awareness.action == "get_invoice"
    fields = [change.field or "" for change in info.awareness.changes]
    assert fields and all("list_invoices" not in field for field in fields)
    assert any("get_invoice" in field and "currency" in field for field in fields)


# --------------------------------------------------------------------------- return vs raise vs a bug


def error_server() -> MCPServer:
    server = MCPServer("errors")
    govern(server, url=refused_url(), report_live=False)  # before the tools: later tools are governed too

    @server.tool()
    def returns_builder(id: str) -> str:
        return error("NOT_FOUND", f"No invoice {id}").suggest("List invoices first.").actions("list_invoices") \
            .details(requestedId=id)  # type: ignore[return-value]

    @server.tool()
    async def returns_dict(id: str) -> dict[str, Any]:
        return tool_error("CONFLICT", "Invoice already paid", details={"invoiceId": id})

    @server.tool()
    def raises_tool_error(id: str) -> str:
        raise ToolError("RATE_LIMITED", "Slow down", retry_after=30, details={"limit": "10/min"})

    @server.tool()
    async def raises_critical(id: str) -> str:
        raise ToolError("FORBIDDEN", "Account frozen", severity="critical")

    @server.tool()
    def has_a_bug(id: str) -> str:
        raise RuntimeError(f"db password=hunter2 at /srv/app/db.py for {id}")

    @server.tool()
    def raises_sdk_error(id: str) -> str:
        raise SdkToolError("the SDK's own way")

    @server.tool()
    def fine(id: str) -> str:
        return f"ok {id}"

    return server


def call(server: MCPServer, tool: str, arguments: dict[str, Any]) -> Any:
    async def scenario() -> Any:
        async with Client(server, cache=None) as client:
            return await client.call_tool(tool, arguments)

    return run(scenario)


def test_a_returned_builder_reaches_the_model_intact():
    result = call(error_server(), "returns_builder", {"id": "inv_9"})
    info = parse_tool_error(text_of(result))
    assert result.is_error is True and info is not None
    assert (info.code, info.severity, info.message) == ("NOT_FOUND", "error", "No invoice inv_9")
    assert info.recovery == "List invoices first."
    assert info.available_actions == ("list_invoices",) and info.details == {"requestedId": "inv_9"}


def test_a_returned_tool_error_dict_reaches_the_model_intact():
    result = call(error_server(), "returns_dict", {"id": "inv_9"})
    info = parse_tool_error(text_of(result))
    assert result.is_error is True and info is not None
    assert info.code == "CONFLICT" and info.details == {"invoiceId": "inv_9"}


def test_a_raised_tool_error_reaches_the_model_intact():
    server = error_server()
    result = call(server, "raises_tool_error", {"id": "x"})
    info = parse_tool_error(text_of(result))
    assert result.is_error is True and info is not None
    assert (info.code, info.severity, info.retry_after) == ("RATE_LIMITED", "error", 30)
    assert info.details == {"limit": "10/min"} and info.recovery and "wait 30 seconds" in info.recovery
    critical = parse_tool_error(text_of(call(server, "raises_critical", {"id": "x"})))
    assert critical is not None and (critical.code, critical.severity) == ("FORBIDDEN", "critical")
    assert "Do not retry" in (critical.recovery or "")


def test_an_unmarked_exception_is_an_internal_error_that_leaks_nothing(caplog: pytest.LogCaptureFixture):
    with caplog.at_level(logging.ERROR, logger="mcp_governance.errors"):
        result = call(error_server(), "has_a_bug", {"id": "x"})
    text = text_of(result)
    info = parse_tool_error(text)
    assert result.is_error is True and info is not None
    assert (info.code, info.severity, info.recovery) == ("INTERNAL_ERROR", "critical", INTERNAL_ERROR_RECOVERY)
    assert "hunter2" not in text and "Traceback" not in text and "db.py" not in text
    incident = info.details["incident"]
    logged = [record for record in caplog.records if incident in record.getMessage()]
    assert logged and logged[0].exc_info is not None and "hunter2" in str(logged[0].exc_info[1])


def test_the_sdks_own_errors_and_successes_pass_unchanged():
    server = error_server()
    sdk = call(server, "raises_sdk_error", {"id": "x"})
    assert sdk.is_error is True and text_of(sdk) == "Error executing tool raises_sdk_error: the SDK's own way"
    ok = call(server, "fine", {"id": "x"})
    assert ok.is_error is False and text_of(ok) == "ok x"


def test_a_call_to_an_unknown_tool_gets_unknown_action_with_the_available_tools():
    # The service is down here: no awareness, but the model still learns what it can call.
    server = error_server()
    unknown = call(server, "nope", {})
    info = parse_tool_error(text_of(unknown))
    assert unknown.is_error is True and info is not None
    assert (info.code, info.details, info.awareness) == ("UNKNOWN_ACTION", {"tool": "nope"}, None)
    assert set(info.available_actions) == set(run(lambda: tool_names(server)))
    assert "nope" not in info.available_actions and "fine" in info.available_actions


async def tool_names(server: MCPServer) -> list[str]:
    return [tool.name for tool in await server.list_tools()]


def test_validation_still_comes_first_for_an_envelope_returning_tool():
    # Arguments that fail validation never reach the handler (the service is down here).
    result = call(error_server(), "returns_builder", {})
    assert result.is_error is True and text_of(result).startswith("Error executing tool returns_builder:")


# --------------------------------------------------------------------------- govern itself


def test_govern_refuses_a_second_call_and_a_bad_server_name():
    server = MCPServer("twice")
    assert isinstance(govern(server, url=refused_url(), report_live=False), Governed)
    with pytest.raises(RuntimeError, match="already governed"):
        govern(server, url=refused_url())
    with pytest.raises(ValueError, match="not a valid server name"):
        govern(MCPServer("has spaces"), url=refused_url())
    with pytest.raises(ValueError, match="budget"):
        govern(MCPServer("zero"), url=refused_url(), budget=0)


def test_a_down_service_never_delays_start_up(billing):
    silent = loopback_socket()
    server = billing.build("v2")
    govern(server, url=f"http://127.0.0.1:{silent.getsockname()[1]}", report_timeout=5.0)

    async def scenario() -> float:
        started = time.perf_counter()
        async with Client(server, cache=None) as client:
            await client.list_tools()
            return time.perf_counter() - started

    try:
        assert run(scenario) < 1.0
    finally:
        silent.close()


def test_an_unknown_tool_carries_the_services_awareness_for_its_name():
    """Against the service contract of issue 10: ``GET /servers/{s}/awareness?tool=X`` answers
    for a tool the lock knows and the live surface lacks (here a stand-in service)."""
    import httpx

    section = ("<contract_awareness>\n  <system_note>The tool add was renamed.</system_note>\n"
               "  <contract_changes>\n    <change severity=\"BREAKING\" rule=\"tool.renamed\" field=\"add\">\n"
               "      <description>Tool \"add\" was renamed to \"fine\"</description>\n"
               "      <fix>Use fine.</fix>\n    </change>\n  </contract_changes>\n</contract_awareness>")
    asked: list[str] = []

    def service(request: httpx.Request) -> httpx.Response:
        asked.append(f"{request.url.path}?{request.url.query.decode()}")
        return httpx.Response(200, text=section)

    server = error_server()
    governed = getattr(server, MARK)
    governed.client = GovernanceClient("http://governance.test", transport=httpx.MockTransport(service))
    info = parse_tool_error(text_of(call(server, "add", {"a": 1})))
    assert asked == ["/servers/errors/awareness?tool=add&max=5"]
    assert info is not None and info.code == "UNKNOWN_ACTION" and info.awareness_xml == section
    assert info.recovery is not None and info.recovery.startswith("Use fine.")
    assert "fine" in info.available_actions


def test_a_server_governed_as_an_instance_gets_its_own_instances_awareness(governance_service, billing):
    """``govern(..., instance=)``: the new instance's validation error carries the new
    instance's drift though an old, in-sync instance reported last."""
    v1 = run(lambda: surface_of(billing.build("v1")))
    lock(governance_service, "billing", v1)
    server = billing.build("v2")
    governed = govern(server, url=governance_service.url, instance="new-1", report_live=False)
    assert run(governed.report_live) is not None
    with GovernanceClient(governance_service.url, instance="old-1") as old:
        assert old.report_live("billing", v1) is not None  # the server's last report is in sync

    async def scenario() -> Any:
        async with Client(server, cache=None) as client:
            return await client.call_tool("get_invoice", {"id": "inv_1001"})

    info = parse_tool_error(text_of(run(scenario)))
    assert info is not None and info.kind == "validation_error" and list(info.fields) == ["currency"]
    assert info.awareness is not None and info.awareness.max_severity == "BREAKING"
