"""The example billing server (BILLING_VERSION v1 or v2), recording every tool call it
receives in the file CALL_LOG (one JSON line each): the gateway tests assert on what reached
the server."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

BILLING = Path(__file__).resolve().parents[2] / "examples" / "billing_server" / "server.py"


def main() -> None:
    spec = importlib.util.spec_from_file_location("billing_server_example", BILLING)
    assert spec is not None and spec.loader is not None
    billing = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(billing)
    server = billing.build(os.environ.get("BILLING_VERSION", "v2"))
    call_next = server.call_tool
    log = os.environ.get("CALL_LOG")

    async def call_tool(name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if log:
            with open(log, "a", encoding="utf-8") as out:
                out.write(json.dumps({"tool": name, "arguments": arguments}) + "\n")
        return await call_next(name, arguments, context)

    server.call_tool = call_tool
    server.run()


if __name__ == "__main__":
    main()
