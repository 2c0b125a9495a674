"""Call one tool of the billing server the way a model would, and print what it gets back.

    python examples/billing_server/call.py get_invoice '{"id": "inv_1001"}'

Starts ``server.py`` over stdio with the official SDK client (this environment, so
``BILLING_VERSION`` and ``MCP_GOVERNANCE_URL`` reach it), calls the tool, prints
``isError`` and every text of the result, and stops the server.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

SERVER = Path(__file__).with_name("server.py")


async def call(tool: str, arguments: dict[str, object]) -> int:
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)], env=dict(os.environ))
    async with Client(params) as client:
        result = await client.call_tool(tool, arguments)
    print(f"isError: {str(result.is_error).lower()}")
    for item in result.content:
        print(getattr(item, "text", item))
    return 1 if result.is_error else 0


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print("usage: call.py TOOL [ARGUMENTS_JSON]", file=sys.stderr)
        return 2
    arguments = json.loads(argv[2]) if len(argv) == 3 else {}
    return anyio.run(call, argv[1], arguments)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
