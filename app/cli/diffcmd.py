"""``diff``, ``check`` and ``awareness``: ContractDiff on the command line, for CI gates."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from app.cli.common import (
    EXIT_GATE,
    EXIT_OK,
    CliError,
    add_gate,
    add_input_format,
    add_live_source,
    default_lockfiles,
    gate_of,
    progress,
    read_input,
    read_source,
    service_token,
    write_output,
)
from app.diff.report_formats import FORMATS

if TYPE_CHECKING:
    from app.diff.model import DiffResult
    from app.policy import Policy


def _policy(args: argparse.Namespace) -> Policy | None:
    """The --policy file; its per-server sections apply by the diff's server name."""
    if not getattr(args, "policy", None):
        return None
    from app.policy import load_policy

    return load_policy(Path(args.policy))


def _report(args: argparse.Namespace, result: DiffResult, source: str | None) -> int:
    from app.diff.reports import render_report

    gate = gate_of(args.fail_on)
    write_output(render_report(result, args.format, gate=gate, source=source), args.output)
    if getattr(args, "policy_obj", None) is not None:
        for ignore in args.policy_obj.expired():
            progress(f"note: {ignore.where}: expired on {ignore.expires} and no longer applies ({ignore.reason})")
    failed = result.fails(gate)
    summary = ", ".join(f"{count} {severity}" for severity, count in result.summary.items())
    progress(f"{result.server or 'surface'}: {summary}; gate {args.fail_on}: {'FAIL' if failed else 'pass'}")
    return EXIT_GATE if failed else EXIT_OK


def cmd_diff(args: argparse.Namespace) -> int:
    from app.diff.engine import diff

    before = read_input(args.before, args.input_format, args.server)
    # The report names the server of BEFORE (the lock), never what a live server calls itself.
    after, where = read_source(args, args.after, "AFTER", input_format=args.input_format,
                               server=args.server or before.server)
    args.policy_obj = _policy(args)
    result = diff(before, after, args.policy_obj)
    return _report(args, result, None if where in ("-", "--from-command", "--from-url") else where)


def cmd_awareness(args: argparse.Namespace) -> int:
    from app.awareness import render_awareness
    from app.diff.engine import diff

    before = read_input(args.before, args.input_format)
    after = read_input(args.after, args.input_format)
    result = diff(before, after, _policy(args))
    section = render_awareness(result, args.tool, args.action, args.max)
    if section:
        write_output(section + "\n", "-")
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    surface, where = read_source(args, args.surface, input_format=args.input_format, server=args.server)
    server = surface.server
    if server is None:
        raise CliError(f"{where}: no server name in the input; pass --server NAME")
    from app.diff.engine import diff
    from app.lockfile import lock_document

    if args.url:
        from mcp_governance.client import GovernanceClient, GovernanceError

        with GovernanceClient(args.url, service_token(args)) as client:
            try:
                text, failed = client.diff(server, lock_document(surface), fmt=args.format, fail_on=args.fail_on)
            except GovernanceError as exc:
                raise CliError(f"{args.url}: {exc}") from None
        write_output(text, args.output)
        progress(f"{server}: gate {args.fail_on}: {'FAIL' if failed else 'pass'}")
        return EXIT_GATE if failed else EXIT_OK
    from app.store import CorruptLockfile, FileStore

    store = FileStore(Path(args.lockfiles))
    try:
        current = store.current(server)
    except CorruptLockfile as exc:
        raise CliError(str(exc)) from None
    if current is None:
        raise CliError(f"{args.lockfiles}: no lock for server {server!r} (run mcp-governance lock first)")
    args.policy_obj = _policy(args)
    result = diff(current.surface, surface, args.policy_obj)
    return _report(args, result, None if where in ("-", "--from-command", "--from-url") else where)


def _add_report_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=FORMATS, default="text",
                        help="report format: text (changelog, default), json, markdown (PR comment), sarif, "
                             "junit, github (workflow annotations)")
    add_gate(parser)
    parser.add_argument("--policy", metavar="FILE", help="policy TOML: severity overrides and ignores")
    parser.add_argument("-o", "--output", metavar="FILE", default="-", help="where to write the report (default: "
                                                                            "stdout)")
    add_input_format(parser)


def register(commands: argparse._SubParsersAction) -> None:
    diff_parser = commands.add_parser(
        "diff",
        help="classify every change between two surfaces (a CI gate)",
        description=(
            "Compare a known-good surface (BEFORE, usually a lockfile) with a new one (AFTER, e.g. a tools/list "
            "dump) and classify every change BREAKING / RISKY / SAFE / COSMETIC by what it does to a model that "
            "learned the old contract. Either side may be any input format. Exit 1 when a change at or above "
            "--fail-on remains after the policy, 0 otherwise, 2 on bad input."
        ),
        epilog=(
            "Examples:\n"
            "  mcp-governance diff lockfiles/billing.lock.toml tools.json\n"
            "  mcp-governance diff old.json new.json --format sarif -o contractdiff.sarif --fail-on RISKY\n"
            '  mcp-governance diff lockfiles/billing.lock.toml --from-command "python server.py"'
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    diff_parser.add_argument("before", metavar="BEFORE", help="the known-good surface (or - for stdin)")
    diff_parser.add_argument("after", metavar="AFTER", nargs="?",
                             help="the new or live surface (or - for stdin); or use --from-command / --from-url")
    diff_parser.add_argument("--server", metavar="NAME",
                             help="the server both sides belong to (default: BEFORE's server; the report names it)")
    _add_report_options(diff_parser)
    add_live_source(diff_parser, "AFTER")
    diff_parser.set_defaults(handler=cmd_diff)

    check = commands.add_parser(
        "check",
        help="check a surface against a server's current lock (a CI gate)",
        description=(
            "Diff a surface against the server's current lock, from a lockfile directory (--lockfiles) or a "
            "governance service (--url). Exit 1 when a change at or above --fail-on remains, 0 otherwise."
        ),
        epilog="Example: mcp-governance check tools.json --server billing --lockfiles lockfiles --format github",
    )
    check.add_argument("surface", metavar="SURFACE", nargs="?",
                       help="the surface to check (or - for stdin); or use --from-command / --from-url")
    check.add_argument("--server", metavar="NAME",
                       help="the server whose lock to check against (default: the input's own name)")
    where = check.add_mutually_exclusive_group()
    where.add_argument("--url", metavar="URL", help="the governance service holding the lock")
    where.add_argument("--lockfiles", metavar="DIR", default=default_lockfiles(),
                       help="lockfile directory holding the lock (default: $MCP_GOVERNANCE_LOCKFILES or ./lockfiles)")
    check.add_argument("--token", metavar="T", help="bearer token for --url (default: $MCP_GOVERNANCE_TOKEN)")
    _add_report_options(check)
    add_live_source(check)
    check.set_defaults(handler=cmd_check)

    awareness = commands.add_parser(
        "awareness",
        help="print the <contract_awareness> section a model would get for one tool",
        description=(
            "Diff BEFORE and AFTER and print the bounded <contract_awareness> section for one tool (and action): "
            "its BREAKING and RISKY changes. Prints nothing when nothing is relevant; exits 0 either way."
        ),
        epilog="Example: mcp-governance awareness lockfiles/billing.lock.toml tools.json --tool billing --action "
               "get_invoice",
    )
    awareness.add_argument("before", metavar="BEFORE", help="the known-good surface")
    awareness.add_argument("after", metavar="AFTER", help="the new or live surface")
    awareness.add_argument("--tool", required=True, metavar="T", help="the tool (or tool.action)")
    awareness.add_argument("--action", metavar="A", help="the action of a grouped tool")
    awareness.add_argument("--max", type=int, default=5, choices=range(1, 21), metavar="N",
                           help="at most N changes (1-20, default 5)")
    awareness.add_argument("--policy", metavar="FILE", help="policy TOML: severity overrides and ignores")
    add_input_format(awareness)
    awareness.set_defaults(handler=cmd_awareness)
