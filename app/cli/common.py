"""What every command shares: reading inputs, writing outputs, one-line errors, gates."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from app.diff import Severity
from app.ingest.load import FORMATS, load_surface, surface_from_bytes
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
