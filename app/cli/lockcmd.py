"""``mcp-governance``: the command-line face over the engine.

Exit codes: 0 success, 1 a gate failed (``diff``/``check``), 2 bad input or usage (one
line on stderr naming the file and the problem; never a traceback).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Callable, Sequence

from app import __version__
from app.ingest.load import FORMATS, load_surface
from app.lockfile import dumps_json, dumps_toml, lock_document
from app.model import Surface
from app.problems import InputError
from app.store.atomic import write_atomic

EXIT_OK, EXIT_GATE, EXIT_USAGE = 0, 1, 2
DEFAULT_LOCKFILES = "lockfiles"


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
        from app.ingest.load import surface_from_bytes

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


# --- lock ----------------------------------------------------------------------------


def cmd_lock(args: argparse.Namespace) -> int:
    surface = read_input(args.surface, args.input_format, args.server, args.server_version)
    if surface.server is None:
        raise CliError(f"{args.surface}: no server name in the input; pass --server NAME")
    destination = args.output or str(Path(args.lockfiles) / f"{surface.server}.lock.toml")
    generated_at = _unchanged_timestamp(destination, surface)
    text = dumps_toml(lock_document(surface, generated_at))
    write_output(text, destination)
    if destination != "-":
        state = "unchanged" if generated_at else "written"
        progress(
            f"{destination}: {state} ({len(surface.tools)} tools, {len(surface.prompts)} prompts, "
            f"{len(surface.resources) + len(surface.resource_templates)} resources; {surface.integrity_digest})"
        )
    return EXIT_OK


def _unchanged_timestamp(destination: str, surface: Surface) -> str | None:
    """Re-locking an identical surface keeps the file byte-for-byte (no git noise)."""
    if destination == "-" or not Path(destination).is_file():
        return None
    try:
        current = load_surface(destination, input_format="lockfile")
    except InputError:
        return None
    if current.integrity_digest == surface.integrity_digest and current.server == surface.server:
        return current.generated_at
    return None


# --- export --------------------------------------------------------------------------


def cmd_export(args: argparse.Namespace) -> int:
    surface = read_input(args.lockfile, args.input_format)
    if surface.server is None:
        raise CliError(f"{args.lockfile}: no server name in the input")
    document = lock_document(surface, surface.generated_at)
    text = dumps_json(document) if args.format == "json" else dumps_toml(document)
    write_output(text, args.output)
    return EXIT_OK


# --- parser --------------------------------------------------------------------------


def _add_input_format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--input-format",
        choices=FORMATS,
        metavar="FORMAT",
        help=f"read the input as this format instead of detecting it ({', '.join(FORMATS)})",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcp-governance",
        description=(
            "Govern the tool contracts of MCP servers: lock a known-good surface as a canonical "
            "TOML lockfile, and compare what a server exposes now against it."
        ),
        epilog=(
            "Inputs are detected automatically: an MCP tools/list result (or a bare list of tools, "
            "or a JSON array of result pages), a `fastmcp inspect --format mcp` manifest, a Vurb / "
            "MCP Fusion lockfile, or an mcp-governance lockfile (TOML or its JSON export). "
            "Exit codes: 0 ok, 1 gate failed, 2 bad input or usage."
        ),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    lock = commands.add_parser(
        "lock",
        help="write the lockfile of a surface",
        description=(
            "Read a tool surface in any input format and write its canonical TOML lockfile "
            "(default: lockfiles/<server>.lock.toml). Re-locking an identical surface leaves the file "
            "untouched."
        ),
        epilog="Example: mcp-governance lock tools.json --server billing --server-version 2.4.0",
    )
    lock.add_argument("surface", metavar="SURFACE", help="the surface to lock (a file, or - for stdin)")
    lock.add_argument("--server", metavar="NAME",
                      help="server name (default: the input's server, serverName or serverInfo.name)")
    lock.add_argument("--server-version", metavar="V", help="server version to record")
    lock.add_argument("-o", "--output", metavar="PATH", help="where to write; - for stdout")
    lock.add_argument("--lockfiles", metavar="DIR", default=os.environ.get("MCP_GOVERNANCE_LOCKFILES",
                      DEFAULT_LOCKFILES), help="lockfile directory for the default output path "
                      "(default: $MCP_GOVERNANCE_LOCKFILES or ./lockfiles)")
    _add_input_format(lock)
    lock.set_defaults(handler=cmd_lock)

    export = commands.add_parser(
        "export",
        help="print a lockfile as canonical JSON or TOML",
        description=(
            "Read a lockfile (TOML, or its JSON export), verify its digests and print it. The JSON "
            "export has sorted keys, 2-space indent, the same fields and digests, and schemas as JSON "
            "objects; it can be read back by every command."
        ),
        epilog="Example: mcp-governance export lockfiles/billing.lock.toml > billing.lock.json",
    )
    export.add_argument("lockfile", metavar="LOCKFILE", help="the lockfile (or - for stdin)")
    export.add_argument("--format", choices=("json", "toml"), default="json", help="output format (default: json)")
    export.add_argument("-o", "--output", metavar="PATH", default="-", help="where to write (default: stdout)")
    _add_input_format(export)
    export.set_defaults(handler=cmd_export)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except InputError as exc:
        print(f"mcp-governance: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except CliError as exc:
        print(f"mcp-governance: error: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        print("mcp-governance: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
