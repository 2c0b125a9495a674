"""Drive the billing server through the framework's own client, as an MCP host would.

    python drive.py FRAMEWORK GOVERNANCE_URL

Starts ``billing.py FRAMEWORK v2 URL`` over stdio with the framework's client, waits until
the server's start-up report reached the service, makes the calls of CALLS and prints one
JSON list: ``[{"tool", "arguments", "isError", "text"}]``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx

FRAMEWORK, URL = sys.argv[1], sys.argv[2]
SERVER = [sys.executable, str(Path(__file__).with_name("billing.py")), FRAMEWORK, "v2", URL]
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_invoice", {"id": "inv_1001"}),
    ("get_invoice", {"id": "inv_1001", "currency": "USD"}),
    ("add", {"a": 1, "b": 2}),
    ("get_sum", {"a": 1, "b": 2}),
    ("refund", {"id": "inv_1001"}),
    ("lookup", {"id": "inv_9"}),
    ("audit", {"id": "inv_1001"}),
]


def wait_for_live(timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = httpx.get(f"{URL}/dashboard/servers/billing", timeout=5.0)
        if row.status_code == 200 and row.json()["server"]["last_reported"] is not None:
            return
        time.sleep(0.05)
    raise SystemExit("the governed server never reported its live surface")


def texts(content: Any) -> str:
    return "\n".join(item.text for item in content if getattr(item, "text", None) is not None)


async def with_mcp1() -> list[dict[str, Any]]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=SERVER[0], args=SERVER[1:])
    out = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await anyio.to_thread.run_sync(wait_for_live)
        for tool, arguments in CALLS:
            result = await session.call_tool(tool, arguments)
            out.append({"tool": tool, "arguments": arguments, "isError": result.isError,
                        "text": texts(result.content)})
    return out


async def with_mcp2() -> list[dict[str, Any]]:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=SERVER[0], args=SERVER[1:])
    out = []
    async with Client(stdio_client(params), cache=None) as client:
        await anyio.to_thread.run_sync(wait_for_live)
        for tool, arguments in CALLS:
            result = await client.call_tool(tool, arguments)
            out.append({"tool": tool, "arguments": arguments, "isError": result.is_error,
                        "text": texts(result.content)})
    return out


async def with_fastmcp() -> list[dict[str, Any]]:
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport

    out = []
    async with Client(StdioTransport(command=SERVER[0], args=SERVER[1:])) as client:
        await anyio.to_thread.run_sync(wait_for_live)
        for tool, arguments in CALLS:
            result = await client.call_tool(tool, arguments, raise_on_error=False)
            out.append({"tool": tool, "arguments": arguments, "isError": result.is_error,
                        "text": texts(result.content)})
    return out


if __name__ == "__main__":
    drivers = {"mcp1": with_mcp1, "mcp2": with_mcp2, "fastmcp": with_fastmcp}
    family = "fastmcp" if FRAMEWORK.startswith("fastmcp") else FRAMEWORK.split("-")[0]
    print(json.dumps(anyio.run(drivers[family])))
