"""What every command shares: reading inputs, writing outputs, one-line errors, gates.

Light at import (``--help`` loads only this and argparse): readers, the engine and the
store are imported inside the functions that use them.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from app.ingest.formats import FORMATS
from mcp_governance.names import is_server_name

if TYPE_CHECKING:
    from app.diff.model import Severity
    from app.model import Surface

EXIT_OK, EXIT_GATE, EXIT_USAGE = 0, 1, 2
DEFAULT_LOCKFILES = "lockfiles"
GATES = ("BREAKING", "RISKY", "SAFE", "COSMETIC", "never")


class CliError(Exception):
    """A problem to report in one line, with an exit code."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code


def progress(message: str) -> None:
    """Progress for people goes to stderr, so stdout stays clean for pipes."""
    print(message, file=sys.stderr)


def warn_about(surface: Surface, where: str) -> Surface:
    """One line on stderr per assumption the reader made (a spec-breaking schema)."""
    for warning in surface.warnings:
        print(f"mcp-governance: warning: {where}: {warning}", file=sys.stderr)
    return surface


def read_input(source: str, input_format: str | None, server: str | None = None,
               server_version: str | None = None) -> Surface:
    """A surface from a path, or from stdin when ``source`` is ``-``."""
    from app.ingest.load import load_surface, surface_from_bytes

    if source == "-":
        surface = surface_from_bytes(sys.stdin.buffer.read(), input_format, "<stdin>")
        return warn_about(load_surface(surface, server=server, server_version=server_version), "<stdin>")
    return warn_about(load_surface(source, input_format=input_format, server=server, server_version=server_version),
                      source)


def write_output(text: str, destination: str) -> None:
    """Write all or nothing: stdout for ``-``, else a temp file renamed into place."""
    if destination == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    from app.store.atomic import write_atomic

    try:
        write_atomic(Path(destination), text.encode("utf-8"))
    except OSError as exc:
        raise CliError(f"{destination}: cannot write ({exc.strerror or exc})") from None


def gate_of(value: str) -> Severity | None:
    from app.diff.model import Severity

    return None if value == "never" else Severity(value)


def add_input_format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--input-format",
        choices=FORMATS,
        metavar="FORMAT",
        help=f"read inputs as this format instead of detecting it ({', '.join(FORMATS)})",
    )


def add_gate(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--fail-on", choices=GATES, default="BREAKING", metavar="SEVERITY",
                        help="exit 1 when a change at or above this severity remains after the policy: "
                             "BREAKING (default), RISKY, SAFE, COSMETIC, or never")


def default_lockfiles() -> str:
    return os.environ.get("MCP_GOVERNANCE_LOCKFILES", DEFAULT_LOCKFILES)


def service_token(args: argparse.Namespace) -> str | None:
    """--token, else MCP_GOVERNANCE_TOKEN (so tokens stay out of shell history)."""
    return getattr(args, "token", None) or os.environ.get("MCP_GOVERNANCE_TOKEN")


# -- a surface from a running MCP server (--from-command / --from-url) ------------------


def add_live_source(parser: argparse.ArgumentParser, positional: str = "SURFACE") -> None:
    """``--from-command`` / ``--from-url``: the alternative to the ``positional`` file."""
    group = parser.add_argument_group(
        "reading the surface from a running MCP server",
        f"Instead of {positional}: start or connect to the server, list its tools (every page), prompts and "
        "resources over plain JSON-RPC, and disconnect. What it answers is read like a file: a schema that "
        "breaks the spec is read as MCP clients read it, with one warning per problem. The server version "
        "recorded is --server-version, else the version pinned in a package runner's command (npx PKG@V, "
        "uvx PKG==V, uvx --from PKG==V, pipx run PKG==V), else serverInfo.version marked \"(self-reported)\". "
        "Progress goes to stderr.")
    group.add_argument("--from-command", metavar="CMD",
                       help='start this MCP server over stdio, e.g. "python server.py" or "npx -y PKG@1.2.3 ARGS" '
                            "(POSIX quoting, no shell; it inherits this environment), and stop it afterwards")
    group.add_argument("--from-url", metavar="URL",
                       help="a streamable-HTTP MCP server, e.g. https://mcp.example.com/mcp (plain http only to "
                            "127.0.0.1, ::1 or localhost, unless --insecure)")
    group.add_argument("--header", action="append", default=[], metavar="NAME:VALUE",
                       help="with --from-url: send this header with every request (repeatable)")
    group.add_argument("--token-env", metavar="VAR",
                       help="with --from-url: send 'Authorization: Bearer $VAR' (the token stays out of the "
                            "command line and of every message)")
    group.add_argument("--insecure", action="store_true",
                       help="with --from-url: allow plain http to another host")
    group.add_argument("--timeout", type=float, default=30.0, metavar="S",
                       help="give up when the server has not answered within S seconds (default: 30)")
    parser.set_defaults(source_parser=parser)


def read_source(args: argparse.Namespace, source: str | None, positional: str = "SURFACE", *,
                input_format: str | None = None, server: str | None = None,
                server_version: str | None = None) -> tuple[Surface, str]:
    """The surface from exactly one of ``source`` (a file, or - for stdin), ``--from-command``
    and ``--from-url``; and how to name it in messages."""
    given = [name for name, value in ((positional, source), ("--from-command", args.from_command),
                                      ("--from-url", args.from_url)) if value is not None]
    if len(given) != 1:
        # A usage error, reported like argparse's own (usage line, exit 2).
        args.source_parser.error(f"give exactly one of {positional}, --from-command or --from-url"
                                 + (f" (got {' and '.join(given)})" if given else ""))
    if args.from_url is None and (args.header or args.token_env or args.insecure):
        args.source_parser.error("--header, --token-env and --insecure go with --from-url")
    if source is not None:
        return read_input(source, input_format, server, server_version), source
    from app import capture
    from app.ingest.load import load_surface, surface_from_json

    if args.from_command is not None:
        where = "--from-command"
        captured = capture.capture_from_command(args.from_command, timeout=args.timeout, progress=progress)
        pinned = capture.package_version(capture.command_argv(args.from_command))
    else:
        where = "--from-url"
        headers = capture.parse_headers(args.header)
        if args.token_env:
            headers.update(capture.bearer_from_env(args.token_env))
        captured = capture.capture_from_url(args.from_url, timeout=args.timeout, headers=headers,
                                            insecure=args.insecure, progress=progress)
        pinned = None
    surface = warn_about(surface_from_json(captured, "mcp", where), where)
    if server is None and surface.server is not None and not is_server_name(surface.server):
        raise CliError(f"{where}: the server calls itself {surface.server!r}, which is not a valid server name; "
                       "pass --server NAME")
    if server_version is None:
        server_version = pinned[1] if pinned else self_reported(surface.server_version)
    return load_surface(surface, server=server, server_version=server_version), where


SELF_REPORTED = "(self-reported)"


def self_reported(version: str | None) -> str | None:
    """A version only the server vouches for (serverInfo.version: often its SDK's version, or
    never bumped), marked as such wherever it is recorded or shown."""
    return None if not version else f"{version} {SELF_REPORTED}"
