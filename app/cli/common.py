"""What every command shares: reading inputs, writing outputs, one-line errors, gates."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from app.diff import Severity
from app.ingest.load import FORMATS, load_surface, surface_from_bytes, surface_from_json
from app.lockfile import SERVER_NAME
from app.model import Surface
from app.store.atomic import write_atomic

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


def read_input(source: str, input_format: str | None, server: str | None = None,
               server_version: str | None = None) -> Surface:
    """A surface from a path, or from stdin when ``source`` is ``-``."""
    if source == "-":
        surface = surface_from_bytes(sys.stdin.buffer.read(), input_format, "<stdin>")
        return load_surface(surface, server=server, server_version=server_version)
    return load_surface(source, input_format=input_format, server=server, server_version=server_version)


def write_output(text: str, destination: str) -> None:
    """Write all or nothing: stdout for ``-``, else a temp file renamed into place."""
    if destination == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        write_atomic(Path(destination), text.encode("utf-8"))
    except OSError as exc:
        raise CliError(f"{destination}: cannot write ({exc.strerror or exc})") from None


def gate_of(value: str) -> Severity | None:
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
        f"Instead of {positional}: start or connect to the server with the official MCP SDK, list its tools "
        "(every page), prompts and resources, and disconnect. Progress goes to stderr.")
    group.add_argument("--from-command", metavar="CMD",
                       help='start this MCP server over stdio, e.g. "python server.py" (POSIX quoting, no shell; '
                            "it inherits this environment), and stop it afterwards")
    group.add_argument("--from-url", metavar="URL",
                       help="a streamable-HTTP MCP server on a loopback address (127.0.0.1, ::1, localhost), "
                            "e.g. http://127.0.0.1:3000/mcp")
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
    if source is not None:
        return read_input(source, input_format, server, server_version), source
    from app.capture import capture_from_command, capture_from_url

    if args.from_command is not None:
        where = "--from-command"
        captured = capture_from_command(args.from_command, timeout=args.timeout, progress=progress)
    else:
        where = "--from-url"
        captured = capture_from_url(args.from_url, timeout=args.timeout, progress=progress)
    surface = surface_from_json(captured, "mcp", where)
    if server is None and surface.server is not None and not SERVER_NAME.match(surface.server):
        raise CliError(f"{where}: the server calls itself {surface.server!r}, which is not a valid server name; "
                       "pass --server NAME")
    return load_surface(surface, server=server, server_version=server_version), where
