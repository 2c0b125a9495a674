"""``store``: apply the PostgreSQL migrations, and move a store's contents to another store
(``export`` to a ``lockfiles/`` directory, ``import`` from one) keeping version numbers,
identities and timestamps."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from app.cli.common import EXIT_OK, CliError, default_lockfiles, progress

if TYPE_CHECKING:
    from app.store.base import LockStore


def _location(args: argparse.Namespace) -> str:
    return args.store or os.environ.get("MCP_GOVERNANCE_STORE") or args.lockfiles


def cmd_migrate(args: argparse.Namespace) -> int:
    from app.store.select import is_database_url, shown

    location = _location(args)
    if not is_database_url(location):
        raise CliError(f"--store: migrations are for a postgresql:// store, not {location!r} "
                       "(the directory store needs none)")
    try:
        import psycopg

        from app.store import pgschema
    except ImportError:
        raise CliError("the PostgreSQL store needs its driver: pip install 'mcp-governance[postgres]'") from None
    try:
        with psycopg.connect(location, autocommit=True, connect_timeout=5) as conn:
            applied = pgschema.migrate(conn)
            version = pgschema.applied(conn)
    except pgschema.SchemaError as exc:
        raise CliError(f"--store {shown(location)}: {exc}") from None
    except psycopg.Error as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise CliError(f"--store {shown(location)}: {first}") from None
    if applied:
        progress(f"mcp-governance: applied {', '.join(applied)}; schema version {version}")
    else:
        progress(f"mcp-governance: schema version {version} is current; nothing to apply")
    return EXIT_OK


def _open(location: str, role: str, create: bool = False) -> LockStore:
    from pathlib import Path

    from app.store import StoreError
    from app.store.select import is_database_url, open_store, shown

    if not is_database_url(location):
        path = Path(location)
        if create:
            path.mkdir(parents=True, exist_ok=True)
        elif not path.is_dir():
            raise CliError(f"{role} {location}: no such directory")
    try:
        return open_store(location, listen=False, max_size=2) if is_database_url(location) else open_store(location)
    except StoreError as exc:
        raise CliError(f"{role} {shown(location)}: {exc}") from None


def _copy(source_location: str, target_location: str, source_role: str, target_role: str) -> int:
    from app.store import StoreError
    from app.store.transfer import TransferConflict, copy_store

    source = _open(source_location, source_role)
    target = _open(target_location, target_role, create=True)
    try:
        counts = copy_store(source, target)
    except TransferConflict as exc:
        raise CliError(str(exc)) from None
    except StoreError as exc:
        raise CliError(f"{exc}") from None
    finally:
        source.close()
        target.close()
    progress(f"mcp-governance: {counts.servers} server(s), {counts.versions} version(s) copied "
             f"({counts.skipped} already there), {counts.live} live report(s), {counts.refused} refused attempt(s)")
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    return _copy(_location(args), args.directory, "--store", "DIR")


def cmd_import(args: argparse.Namespace) -> int:
    return _copy(args.directory, _location(args), "DIR", "--store")


def register(commands: argparse._SubParsersAction) -> None:
    store = commands.add_parser(
        "store",
        help="migrate a PostgreSQL store; export or import a store as a lockfiles/ directory",
        description=("The store is --store (a postgresql:// URL or a directory), else $MCP_GOVERNANCE_STORE, "
                     "else --lockfiles. export writes every server's versions, audit log, live reports and "
                     "refused attempts as a lockfiles/ directory (git can hold it); import loads one, keeping "
                     "version numbers, identities and timestamps. Re-running either skips what is there."),
        epilog="Example: mcp-governance store migrate --store postgresql://127.0.0.1/test",
    )
    actions = store.add_subparsers(dest="store_command", metavar="ACTION", required=True)

    def common(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--store", metavar="URL|DIR", default=None,
                            help="the store (default: $MCP_GOVERNANCE_STORE, else --lockfiles)")
        parser.add_argument("--lockfiles", metavar="DIR", default=default_lockfiles(),
                            help="the directory store when no --store is given (default: ./lockfiles)")

    migrate = actions.add_parser("migrate", help="apply the PostgreSQL schema migrations (a no-op when current)")
    common(migrate)
    migrate.set_defaults(handler=cmd_migrate)
    export = actions.add_parser("export", help="write the store as a lockfiles/ directory")
    export.add_argument("directory", metavar="DIR", help="the directory to write (created; may be a store already)")
    common(export)
    export.set_defaults(handler=cmd_export)
    load = actions.add_parser("import", help="load a lockfiles/ directory into the store")
    load.add_argument("directory", metavar="DIR", help="the lockfiles/ directory to read")
    common(load)
    load.set_defaults(handler=cmd_import)
