"""``lock`` (write a lockfile, or post it to a service), ``export``, and ``live`` (report what a
server exposes now to a service)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.cli.common import (
    EXIT_OK,
    CliError,
    add_input_format,
    add_live_source,
    default_lockfiles,
    progress,
    read_input,
    read_source,
    service_token,
    write_output,
)

if TYPE_CHECKING:
    from app.model import Surface


def cmd_lock(args: argparse.Namespace) -> int:
    from app.lockfile import dumps_toml, lock_document

    surface, where = read_source(args, args.surface, input_format=args.input_format, server=args.server,
                                 server_version=args.server_version)
    if surface.server is None:
        raise CliError(f"{where}: no server name in the input; pass --server NAME")
    if args.url:
        return _lock_remote(args, surface)
    destination = args.output or str(Path(args.lockfiles) / f"{surface.server}.lock.toml")
    generated_at = _unchanged_timestamp(destination, surface)
    write_output(dumps_toml(lock_document(surface, generated_at)), destination)
    if destination != "-":
        state = "unchanged" if generated_at else "written"
        progress(
            f"{destination}: {state} ({len(surface.tools)} tools, {len(surface.prompts)} prompts, "
            f"{len(surface.resources) + len(surface.resource_templates)} resources; {surface.integrity_digest})"
        )
    return EXIT_OK


def _lock_remote(args: argparse.Namespace, surface: Surface) -> int:
    from app.lockfile import lock_document
    from mcp_governance.client import GovernanceClient, GovernanceError

    document = lock_document(surface)
    with GovernanceClient(args.url, service_token(args)) as client:
        try:
            result = client.lock(surface.server or "", document, server_version=surface.server_version,
                                 commit=args.commit, reason=args.reason, approved_by=args.approved_by)
        except GovernanceError as exc:
            breaking = exc.problem.get("deltas") or []
            for delta in breaking:
                progress(f"  [BREAKING] {delta.get('tool')}: {delta.get('description')}")
            raise CliError(f"{args.url}: {exc}", code=1 if exc.status == 409 else 2) from None
    body = result.body
    state = f"locked as version {body['version']}" if result.created else f"unchanged (version {body['version']})"
    progress(f"{surface.server}: {state} at {args.url} ({body['integrity_digest']})")
    summary = body.get("diff", {}).get("summary", {})
    if result.created and any(summary.values()):
        progress("  changes: " + ", ".join(f"{count} {severity}" for severity, count in summary.items() if count))
    return EXIT_OK


def _unchanged_timestamp(destination: str, surface: Surface) -> str | None:
    """Re-locking an identical surface keeps the file byte-for-byte (no git noise)."""
    if destination == "-" or not Path(destination).is_file():
        return None
    from app.ingest.load import load_surface
    from app.problems import InputError

    try:
        current = load_surface(destination, input_format="lockfile")
    except InputError:
        return None
    if current.integrity_digest == surface.integrity_digest and current.server == surface.server:
        return current.generated_at
    return None


def cmd_live(args: argparse.Namespace) -> int:
    if not args.url:
        raise CliError("live needs the governance service: pass --url URL (or set MCP_GOVERNANCE_URL)")
    surface, where = read_source(args, args.surface, input_format=args.input_format, server=args.server)
    if surface.server is None:
        raise CliError(f"{where}: no server name in the input; pass --server NAME")
    from app.lockfile import lock_document
    from mcp_governance.client import GovernanceClient, GovernanceError

    with GovernanceClient(args.url, service_token(args)) as client:
        try:
            # The raising flavour: unlike an MCP server at start, a person wants the refusal.
            body = client.put_live(surface.server, lock_document(surface), instance=args.instance)
        except GovernanceError as exc:
            raise CliError(f"{args.url}: {exc}") from None
        except ValueError:
            raise CliError(f"{args.url}: the service did not answer with JSON") from None
    write_output(_drift_line(body) + "\n", "-")
    return EXIT_OK


def _drift_line(body: dict[str, Any]) -> str:
    """``billing: drifted from lock version 1 (max BREAKING: 1 BREAKING, 1 SAFE)``."""
    server, status = body.get("server"), body.get("status")
    if status == "unlocked":
        return f"{server}: unlocked (no lock to compare with; live {body.get('live_digest')})"
    if status == "in-sync":
        return f"{server}: in sync with lock version {body.get('lock_version')}"
    summary: dict[str, int] = body.get("summary") or {}
    counts = ", ".join(f"{count} {severity}" for severity, count in summary.items() if count)
    return (f"{server}: {status} from lock version {body.get('lock_version')} "
            f"(max {body.get('maxSeverity')}: {counts or 'no classified changes'})")


def cmd_export(args: argparse.Namespace) -> int:
    from app.lockfile import dumps_json, dumps_toml, lock_document

    surface = read_input(args.lockfile, args.input_format)
    if surface.server is None:
        raise CliError(f"{args.lockfile}: no server name in the input")
    document = lock_document(surface, surface.generated_at)
    text = dumps_json(document) if args.format == "json" else dumps_toml(document)
    write_output(text, args.output)
    return EXIT_OK


def register(commands: argparse._SubParsersAction) -> None:
    lock = commands.add_parser(
        "lock",
        help="write the lockfile of a surface, or record it in a governance service",
        description=(
            "Read a tool surface in any input format and write its canonical TOML lockfile (default: "
            "lockfiles/<server>.lock.toml; re-locking an identical surface leaves the file untouched). With "
            "--url, post it to a governance service instead, which keeps every version and refuses BREAKING "
            "changes against the previous lock unless --approved-by is given (exit 1)."
        ),
        epilog=(
            "Examples:\n"
            "  mcp-governance lock tools.json --server billing --server-version 2.4.0\n"
            "  mcp-governance lock tools.json --server billing --url http://governance:8000 --commit $GIT_SHA\n"
            '  mcp-governance lock --from-command "python server.py" --server billing --url http://127.0.0.1:8000\n'
            '  mcp-governance lock --from-command "npx -y @modelcontextprotocol/server-filesystem@2025.7.1 /srv"\n'
            "  mcp-governance lock --from-url https://mcp.example.com/mcp --token-env MCP_TOKEN --header 'X-Team: a'"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    lock.add_argument("surface", metavar="SURFACE", nargs="?",
                      help="the surface to lock (a file, or - for stdin); or use --from-command / --from-url")
    lock.add_argument("--server", metavar="NAME",
                      help="server name (default: the input's server, serverName or serverInfo.name)")
    lock.add_argument("--server-version", metavar="V", help="server version to record")
    lock.add_argument("-o", "--output", metavar="PATH", help="where to write; - for stdout")
    lock.add_argument("--lockfiles", metavar="DIR", default=default_lockfiles(),
                      help="lockfile directory for the default output path (default: $MCP_GOVERNANCE_LOCKFILES "
                           "or ./lockfiles)")
    lock.add_argument("--url", metavar="URL", help="record the lock in the governance service at URL")
    lock.add_argument("--token", metavar="T", help="bearer token for --url (default: $MCP_GOVERNANCE_TOKEN)")
    lock.add_argument("--approved-by", metavar="WHO", help="with --url: accept BREAKING changes, as WHO")
    lock.add_argument("--commit", metavar="SHA", help="with --url: the commit being locked (audit log)")
    lock.add_argument("--reason", metavar="TEXT", help="with --url: why (audit log)")
    add_input_format(lock)
    add_live_source(lock)
    lock.set_defaults(handler=cmd_lock)

    export = commands.add_parser(
        "export",
        help="print a lockfile as canonical JSON or TOML",
        description=(
            "Read a lockfile (TOML, or its JSON export), verify its digests and print it. The JSON export has "
            "sorted keys, 2-space indent, the same fields and digests, and schemas as JSON objects; every "
            "command reads it back."
        ),
        epilog="Example: mcp-governance export lockfiles/billing.lock.toml > billing.lock.json",
    )
    export.add_argument("lockfile", metavar="LOCKFILE", help="the lockfile (or - for stdin)")
    export.add_argument("--format", choices=("json", "toml"), default="json", help="output format (default: json)")
    export.add_argument("-o", "--output", metavar="PATH", default="-", help="where to write (default: stdout)")
    add_input_format(export)
    export.set_defaults(handler=cmd_export)

    live = commands.add_parser(
        "live",
        help="report the surface a server exposes now to a governance service, and print its drift",
        description=(
            "PUT a surface to /servers/<server>/live on a governance service (what an MCP server does at start "
            "with the SDK integration), then print whether it is in sync with the server's lock. Exit 2 when "
            "the service refuses it."
        ),
        epilog='Example: mcp-governance live --from-command "python server.py" --server billing '
               "--url http://127.0.0.1:8000",
    )
    live.add_argument("surface", metavar="SURFACE", nargs="?",
                      help="the live surface (a file, or - for stdin); or use --from-command / --from-url")
    live.add_argument("--server", metavar="NAME",
                      help="server name (default: the input's server, serverName or serverInfo.name)")
    live.add_argument("--url", metavar="URL", default=os.environ.get("MCP_GOVERNANCE_URL"),
                      help="the governance service (default: $MCP_GOVERNANCE_URL)")
    live.add_argument("--token", metavar="T", help="bearer token (default: $MCP_GOVERNANCE_TOKEN)")
    live.add_argument("--instance", metavar="ID",
                      help="which instance of the server this is (kept apart during a rollout; X-Instance-Id)")
    add_input_format(live)
    add_live_source(live)
    live.set_defaults(handler=cmd_live)
