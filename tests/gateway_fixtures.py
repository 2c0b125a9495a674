"""Helpers for the gateway tests: lock a server from its command, run ``mcp-governance
gateway`` in front of it as an MCP host would (the official SDK client over stdio), and
read what the client gets."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.service_fixtures import ROOT

SERVERS = Path(__file__).resolve().parent / "servers"


def env(**extra: str) -> dict[str, str]:
    base = {key: value for key, value in os.environ.items() if not key.startswith("MCP_GOVERNANCE_")}
    base["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), base.get("PYTHONPATH")]))
    base.update(extra)
    return base


def lock_from_command(lockfiles: Path, server: str, command: Sequence[str], **extra_env: str) -> None:
    """The release pipeline's step: lock the server's surface as it runs."""
    line = " ".join(f'"{part}"' for part in command)
    done = subprocess.run(
        [sys.executable, "-m", "app", "lock", "--from-command", line, "--server", server, "--lockfiles",
         str(lockfiles)], env=env(**extra_env), capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr


def gateway_params(server: str, command: Sequence[str], *, mode: str = "observe", lockfiles: Path | None = None,
                   service: str | None = None, options: Sequence[str] = (), **extra_env: str) -> StdioServerParameters:
    args = ["-m", "app", "gateway", "--server", server, "--mode", mode, *options]
    if lockfiles is not None:
        args += ["--lockfiles", str(lockfiles)]
    if service is not None:
        args += ["--service", service]
    return StdioServerParameters(command=sys.executable, args=[*args, "--", *command], env=env(**extra_env))


@asynccontextmanager
async def gateway_client(params: StdioServerParameters, log: IO[str], **client_options: Any) -> AsyncIterator[Client]:
    """The official SDK client, connected to the gateway over stdio (the gateway's stderr
    goes to ``log``)."""
    client_options.setdefault("mode", "legacy")
    async with Client(stdio_client(params, errlog=log), cache=None, **client_options) as client:
        yield client


def text_of(result: Any) -> str:
    return "\n".join(item.text for item in result.content if getattr(item, "text", None) is not None)


def names(listing: Any) -> list[str]:
    return sorted(tool.name for tool in listing.tools)
