"""``gateway``: an MCP server in front of another one, governed (app/gateway)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from app.cli.common import EXIT_OK, CliError, default_lockfiles, service_token
from mcp_governance.names import is_server_name

MODES = ("observe", "enforce", "pin")


def default_cache() -> str:
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return os.environ.get("MCP_GOVERNANCE_GATEWAY_CACHE") or str(Path(root) / "mcp-governance" / "gateway")


def upstream_env(token: str | None) -> dict[str, str]:
    """The environment the server gets: the gateway's own, without the gateway's settings
    and never its token to the service."""
    return {key: value for key, value in os.environ.items()
            if not key.startswith("MCP_GOVERNANCE_") and not (token and token in value)}


def default_instance(host: str, pid: int, suffix: str) -> str:
    """``host-pid-suffix``, named like a server (the service refuses any other instance name)."""
    tail = f"-{pid}-{suffix}"
    head = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "_.-") else "-" for ch in host)
    head = head.lstrip("_.-")[: 128 - len(tail)] or "gateway"
    return head + tail


def _listen(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit() or int(port) > 65535:
        raise CliError(f"--listen: expected HOST:PORT (e.g. 127.0.0.1:8765), not {value!r}")
    return host.strip("[]"), int(port)


def cmd_gateway(args: argparse.Namespace) -> int:
    import logging
    import uuid

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if bool(command) == bool(args.upstream_url):
        raise CliError("give the server to front: a command after `--`, or --upstream-url (not both)")
    if not is_server_name(args.server):
        raise CliError(f"--server: {args.server!r} is not a valid server name")
    if args.service and args.lockfiles:
        raise CliError("--service and --lockfiles: give one source of locks, not both")
    if not 0 < args.budget_ms <= 10_000:
        raise CliError("--budget-ms: between 1 and 10000")
    if not (args.lock_refresh == 0 or 0.1 <= args.lock_refresh <= 86_400):
        raise CliError("--lock-refresh: 0 (never) or between 0.1 and 86400 seconds")
    listen = _listen(args.listen) if args.listen else None

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="mcp-governance gateway: %(message)s")
    logging.getLogger("mcp_governance").setLevel(getattr(logging, args.log_level.upper()))

    import anyio
    from mcp import StdioServerParameters

    from app.gateway.core import GatewayCore, Settings
    from app.gateway.locks import LockfilesSource, LockSource, ServiceSource
    from app.gateway.policy import Mode
    from app.gateway.proxy import Gateway

    token = service_token(args)  # kept from the server's environment even when no service is used
    instance = args.instance_id or default_instance(os.uname().nodename, os.getpid(), uuid.uuid4().hex[:6])
    if not is_server_name(instance):
        raise CliError(f"--instance-id: {instance!r} is not a valid instance name (named like a server: letters, "
                       "digits, '_', '.', '-'; starting with a letter or digit; at most 128 characters)")
    source: LockSource
    if args.service:
        source = ServiceSource(args.service, token, Path(args.cache_dir), instance, timeout=args.service_timeout)
    else:
        source = LockfilesSource(Path(args.lockfiles or default_lockfiles()))
    settings = Settings(args.server, Mode(args.mode), allow_new=args.allow_new, budget=args.budget_ms / 1000,
                        lock_refresh=args.lock_refresh)
    upstream: StdioServerParameters | str = args.upstream_url or StdioServerParameters(
        command=command[0], args=command[1:], env=upstream_env(token))
    gateway = Gateway(GatewayCore(settings, source), upstream)
    try:
        if listen is None:
            anyio.run(gateway.serve_stdio)
        else:
            anyio.run(gateway.serve_http, *listen)
    finally:
        source.close()
    return EXIT_OK


def register(commands: argparse._SubParsersAction) -> None:
    gateway = commands.add_parser(
        "gateway",
        help="front an MCP server: check its contract, validate calls, block or pin changed tools",
        description=(
            "An MCP server in front of one MCP server (a command after --, or --upstream-url). At connect, on "
            "tools/list_changed and when the lock moves (--lock-refresh) it diffs the server's surface against "
            "the lock of --server (from --service or --lockfiles) and applies --mode: observe (report drift), "
            "enforce (hide tools with BREAKING or security changes; calls get FORBIDDEN), pin (as enforce, and a "
            "tool whose text alone changed is served with the locked text). Invalid calls are answered with "
            "<validation_error> before the server sees them. Everything else passes through. Logs go to stderr."),
        epilog=("Example: mcp-governance gateway --server filesystem --lockfiles lockfiles --mode pin -- "
                "npx -y @modelcontextprotocol/server-filesystem /tmp"),
    )
    gateway.add_argument("--server", required=True, metavar="NAME", help="the server's name in the lock store")
    gateway.add_argument("--service", metavar="URL", help="the governance service (locks, awareness, live reports)")
    gateway.add_argument("--token", help="bearer token for --service (default: $MCP_GOVERNANCE_TOKEN); "
                                         "never passed to the server")
    gateway.add_argument("--lockfiles", metavar="DIR",
                         help="a lockfile directory instead of a service (default without --service: "
                              "$MCP_GOVERNANCE_LOCKFILES or ./lockfiles)")
    gateway.add_argument("--mode", choices=MODES, default="observe", help="observe (default), enforce or pin")
    gateway.add_argument("--allow-new", action="store_true",
                         help="enforce/pin: serve tools the lock does not know (default: hidden until locked)")
    gateway.add_argument("--listen", metavar="HOST:PORT",
                         help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (port 0: any free)")
    gateway.add_argument("--upstream-url", metavar="URL", help="front a streamable HTTP server instead of a command")
    gateway.add_argument("--cache-dir", metavar="DIR", default=default_cache(),
                         help="where the last lock from --service is kept (default: $MCP_GOVERNANCE_GATEWAY_CACHE "
                              "or ~/.cache/mcp-governance/gateway)")
    gateway.add_argument("--budget-ms", type=float, default=200.0, metavar="MS",
                         help="longest a call waits on the service before the local answer goes out (default: 200)")
    gateway.add_argument("--service-timeout", type=float, default=2.0, metavar="S",
                         help="longest wait for the lock from --service at connect before the cached copy is used "
                              "(default: 2)")
    gateway.add_argument("--lock-refresh", type=float, default=60.0, metavar="S",
                         help="fetch the lock again every S seconds, so a change approved meanwhile is served "
                              "without a restart (default: 60; 0: only at connect and on tools/list_changed)")
    gateway.add_argument("--instance-id", metavar="ID", help="names this gateway in live reports "
                                                             "(default: host, pid and a random suffix)")
    gateway.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"),
                         help="stderr log level (default: info)")
    gateway.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND ARGS",
                         help="the server to front, run over stdio")
    gateway.set_defaults(handler=cmd_gateway)
