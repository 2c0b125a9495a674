"""``mcp-governance``: the command-line face over the engine and the service.

Exit codes: 0 success, 1 a gate failed (``diff``/``check``, or a lock refused for BREAKING
changes), 2 bad input or usage (one line on stderr naming the file and the problem; never
a traceback).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from app import __version__
from app.cli import diffcmd, gatewaycmd, lockcmd, servecmd, storecmd
from app.cli.common import EXIT_OK, EXIT_USAGE, CliError
from app.problems import InputError

# Start-up: this module, argparse and the three command modules are all `--help` loads; each
# command imports the readers, the engine, the store or the service when it runs
# (bench/start_bench.py measures it against `python -c 'import json'`).


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcp-governance",
        description=(
            "Govern the tool contracts of MCP servers: lock a known-good surface as a canonical TOML lockfile, "
            "classify every change against it, and serve contract awareness to MCP servers."
        ),
        epilog=(
            "Inputs are detected automatically: an MCP tools/list result (or a bare list of tools, or a JSON array "
            "of result pages), a `fastmcp inspect --format mcp` manifest, a Vurb / MCP Fusion lockfile, or an "
            "mcp-governance lockfile (TOML or its JSON export). Exit codes: 0 ok, 1 gate failed, 2 bad input."
        ),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in (lockcmd, diffcmd, servecmd, storecmd, gatewaycmd):
        module.register(commands)
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


__all__ = ["build_parser", "main"]
