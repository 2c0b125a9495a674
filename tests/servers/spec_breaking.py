"""An MCP server that breaks the spec the way published servers do, with no SDK at all:
newline-delimited JSON-RPC on stdio (or, imported, :func:`answer` for an HTTP face).

``read_file`` and ``write_file`` publish an ``inputSchema`` without ``type`` (what
filesystem 2025.3.28 to 2025.8.21 publish: ``$schema`` alone), ``list_directory`` a proper
one. The server pings the client before answering ``tools/list`` (a request the client must
answer) and logs a notification; it calls itself NAME (argv[1], default ``spec-breaking``)
at version 0.2.0, as servers that never bump their version do.

    python spec_breaking.py [NAME] [--paths]      # --paths: read_file gains a required "paths"
"""

from __future__ import annotations

import json
import sys
from typing import Any

DRAFT7 = {"$schema": "http://json-schema.org/draft-07/schema#"}
NAME = "spec-breaking"
PATHS = False


def tools() -> list[dict[str, Any]]:
    read_file: dict[str, Any] = dict(DRAFT7)
    if PATHS:
        read_file = {**DRAFT7, "type": "object", "properties": {"paths": {"type": "array"}}, "required": ["paths"]}
    return [
        {"name": "read_file", "description": "Read a file.", "inputSchema": read_file},
        {"name": "write_file", "description": "Write a file.", "inputSchema": dict(DRAFT7)},
        {"name": "list_directory", "description": "List a directory.",
         "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
    ]


def answer(message: dict[str, Any]) -> dict[str, Any] | None:
    method, ident = message.get("method"), message.get("id")
    if ident is None:
        return None
    if method == "initialize":
        result: dict[str, Any] = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                                  "serverInfo": {"name": NAME, "version": "0.2.0"}}
    elif method == "tools/list":
        result = {"tools": tools()}
    else:
        return {"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": f"no method {method}"}}
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    global NAME, PATHS
    NAME = next((arg for arg in sys.argv[1:] if not arg.startswith("--")), NAME)
    PATHS = "--paths" in sys.argv
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("method") == "tools/list":
            send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}})
            send({"jsonrpc": "2.0", "id": "ping-1", "method": "ping"})
            pong = json.loads(sys.stdin.readline())
            if pong.get("id") != "ping-1" or pong.get("result") != {}:
                sys.exit(f"the client answered the ping with {pong!r}")
        reply = answer(message)
        if reply is not None:
            send(reply)


if __name__ == "__main__":
    main()
