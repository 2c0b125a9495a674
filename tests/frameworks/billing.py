"""The billing server of the framework tests, written for each framework ``govern()`` supports.

    python billing.py FRAMEWORK VERSION [GOVERNANCE_URL]

FRAMEWORK is an id of tests/frameworks/envs.py FRAMEWORKS; VERSION ``v1`` or ``v2``. v2
makes ``currency`` a required argument of ``get_invoice`` and renames ``add`` to
``get_sum``; ``refund`` raises a ``ToolError``, ``lookup`` returns a builder and ``audit``
crashes (its text holds a secret that must not reach the model). With a URL the server is
governed. It serves stdio, and runs in the framework's own venv (no project code but the
client, found in the working tree).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python"))

from mcp_governance import ToolError, error, govern

FRAMEWORK, VERSION = sys.argv[1], sys.argv[2]
URL = sys.argv[3] if len(sys.argv) > 3 else None
PRICES = {"EUR": "129.00", "USD": "141.90"}
SECRET = "hunter2-db-password"


def get_invoice_v1(id: str) -> str:
    return f"{id}: 129.00 EUR"


def get_invoice_v2(id: str, currency: Literal["EUR", "USD"]) -> str:
    return f"{id}: {PRICES[currency]} {currency}"


def add(a: int, b: int) -> str:
    return str(a + b)


def refund(id: str) -> str:
    raise ToolError("CONFLICT", f"Invoice {id} is already refunded", suggestion="Do not refund it again.",
                    details={"invoiceId": id})


def lookup(id: str) -> Any:
    return error("NOT_FOUND", f"No invoice {id}").suggest("List invoices first.").actions("get_invoice")


def audit(id: str) -> str:
    raise KeyError(f"cannot connect with {SECRET}")


TOOLS: list[tuple[str, Any]] = [
    ("get_invoice", get_invoice_v1 if VERSION == "v1" else get_invoice_v2),
    ("add" if VERSION == "v1" else "get_sum", add),
    ("refund", refund),
    ("lookup", lookup),
    ("audit", audit),
]

STRING = {"type": "string"}
INTEGER = {"type": "integer"}


def schema(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties)}


SCHEMAS = {
    "get_invoice": schema({"id": STRING} if VERSION == "v1"
                          else {"id": STRING, "currency": {"type": "string", "enum": ["EUR", "USD"]}}),
    "add": schema({"a": INTEGER, "b": INTEGER}),
    "get_sum": schema({"a": INTEGER, "b": INTEGER}),
    "refund": schema({"id": STRING}),
    "lookup": schema({"id": STRING}),
    "audit": schema({"id": STRING}),
}
FUNCTIONS = dict(TOOLS)


def high_level(server: Any) -> Any:
    for name, fn in TOOLS:
        server.tool(name=name)(fn)
    return server


def build() -> Any:
    version = "1.0.0" if VERSION == "v1" else "2.0.0"
    if FRAMEWORK == "mcp1-fastmcp":
        from mcp.server.fastmcp import FastMCP

        return high_level(FastMCP("billing"))
    if FRAMEWORK == "mcp2-mcpserver":
        from mcp.server.mcpserver import MCPServer

        return high_level(MCPServer("billing", version=version))
    if FRAMEWORK.startswith("fastmcp"):
        from fastmcp import FastMCP as FastMCPPackage

        return high_level(FastMCPPackage("billing", version=version))
    if FRAMEWORK == "mcp1-lowlevel":
        import mcp.types as types
        from mcp.server.lowlevel import Server

        server = Server("billing", version=version)

        @server.list_tools()
        async def list_tools() -> list[types.Tool]:
            return [types.Tool(name=name, inputSchema=SCHEMAS[name]) for name, _ in TOOLS]

        @server.call_tool()
        async def call_tool(name: str, arguments: dict[str, Any]) -> Any:
            if name not in FUNCTIONS:
                raise ValueError(f"Unknown tool: {name}")
            value = FUNCTIONS[name](**arguments)
            return value if not isinstance(value, str) else [types.TextContent(type="text", text=value)]

        return server
    if FRAMEWORK == "mcp2-lowlevel":
        import mcp.types as types
        from mcp.server.lowlevel import Server

        async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
            return types.ListToolsResult(tools=[types.Tool(name=name, input_schema=SCHEMAS[name]) for name, _ in TOOLS])

        async def on_call_tool(ctx: Any, params: Any) -> Any:
            if params.name not in FUNCTIONS:
                raise ValueError(f"Unknown tool: {params.name}")
            # No validation in the 2.x low-level server: a missing argument is the handler's TypeError.
            value = FUNCTIONS[params.name](**(params.arguments or {}))
            if not isinstance(value, str):
                return value
            return types.CallToolResult(content=[types.TextContent(type="text", text=value)])

        return Server("billing", version=version, on_list_tools=on_list_tools, on_call_tool=on_call_tool)
    raise SystemExit(f"unknown framework {FRAMEWORK!r}")


def serve(server: Any) -> None:
    if FRAMEWORK.endswith("lowlevel"):
        import anyio
        from mcp.server.stdio import stdio_server

        async def main() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(main)
    elif FRAMEWORK.startswith("fastmcp"):
        server.run(show_banner=False)
    else:
        server.run()


if __name__ == "__main__":
    built = build()
    if URL:
        govern(built, url=URL, budget=3.0)  # generous: a loaded CI machine, three processes on two cores
    serve(built)
