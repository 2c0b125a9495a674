"""``serve``: run the governance service with uvicorn."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from app.cli.common import EXIT_OK, CliError, default_lockfiles, progress
from app.scopes import SCOPES


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from app.config import load_settings
    from app.store import StoreError
    from app.store.select import is_database_url, open_store, shown

    settings = load_settings(args.lockfiles, args.config, store=args.store)  # fail fast, with the place named
    if settings.store:
        os.environ["MCP_GOVERNANCE_STORE"] = settings.store
    if is_database_url(settings.store):
        try:  # a service never runs against a database schema it does not know
            open_store(str(settings.store), listen=False, min_size=0, max_size=1).close()
        except StoreError as exc:
            raise CliError(f"--store {shown(str(settings.store))}: {exc}") from None
    else:
        Path(settings.store or settings.lockfiles).mkdir(parents=True, exist_ok=True)
    os.environ["MCP_GOVERNANCE_LOCKFILES"] = str(settings.lockfiles)
    if settings.config_path is not None:
        os.environ["MCP_GOVERNANCE_CONFIG"] = str(settings.config_path)
    if not settings.session_secret:
        # Every worker must sign and check dashboard sessions with the same key.
        import secrets

        os.environ["MCP_GOVERNANCE_SESSION_SECRET"] = secrets.token_urlsafe(48)
    metrics_dir = None
    if args.workers > 1 and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        import tempfile

        metrics_dir = tempfile.mkdtemp(prefix="mcp-governance-metrics-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
    auth = f"{len(settings.tokens)} token(s)" if settings.auth_enabled else "auth OFF (no tokens configured)"
    progress(f"mcp-governance: serving {shown(settings.store or settings.lockfiles)} on http://{args.host}:{args.port} "
             f"({args.workers} worker(s), {auth})")
    try:
        uvicorn.run("app.api:app_from_environment", factory=True, host=args.host, port=args.port,
                    workers=args.workers, log_level=args.log_level, access_log=args.access_log)
    finally:
        if metrics_dir is not None:  # ours, made above: the workers' metric files go with it
            import shutil

            shutil.rmtree(metrics_dir, ignore_errors=True)
            os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
    return EXIT_OK


def cmd_token(args: argparse.Namespace) -> int:
    """A new random token, printed once, and the config entry that stores only its hash."""
    import json
    import secrets

    from app.config import hash_token

    scopes = [scope.strip() for scope in args.scopes.split(",") if scope.strip()]
    unknown = sorted(set(scopes) - set(SCOPES))
    if unknown or not scopes:
        raise CliError(f"--scopes: unknown scope {unknown[0]!r} (one of: {', '.join(SCOPES)})" if unknown
                       else "--scopes: give at least one scope")
    token = secrets.token_urlsafe(32)
    servers = [pattern.strip() for pattern in args.servers.split(",") if pattern.strip()]
    print(f"token (shown once; give it to the client as its bearer token): {token}", file=sys.stderr)
    # JSON strings and arrays of strings are valid TOML values.
    print(f"[[tokens]]\nname = {json.dumps(args.name)}\nsha256 = {json.dumps(hash_token(token))}\n"
          f"scopes = {json.dumps(scopes)}\nservers = {json.dumps(servers)}")
    return EXIT_OK


def register(commands: argparse._SubParsersAction) -> None:
    serve = commands.add_parser(
        "serve",
        help="run the governance service (HTTP API)",
        description=(
            "Run the HTTP API on the lockfile store. OpenAPI at /docs and /openapi.json. Without tokens in the "
            "config (or MCP_GOVERNANCE_TOKENS) the service is open, and says so at start."
        ),
        epilog="Example: mcp-governance serve --lockfiles lockfiles --config mcp-governance.toml --workers 4",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    serve.add_argument("--lockfiles", metavar="DIR", default=default_lockfiles(),
                       help="the lockfile store (default: $MCP_GOVERNANCE_LOCKFILES or ./lockfiles)")
    serve.add_argument("--store", metavar="URL|DIR", default=None,
                       help="the store: a postgresql:// URL (replicas share it) or a directory "
                            "(default: $MCP_GOVERNANCE_STORE, the config's store, or --lockfiles)")
    serve.add_argument("--config", metavar="FILE", default=os.environ.get("MCP_GOVERNANCE_CONFIG"),
                       help="config TOML: tokens, policy, body limit (default: $MCP_GOVERNANCE_CONFIG)")
    serve.add_argument("--workers", type=int, default=1, metavar="N", help="worker processes (default: 1)")
    serve.add_argument("--log-level", default="info", choices=("critical", "error", "warning", "info", "debug"),
                       help="log level (default: info)")
    serve.add_argument("--access-log", action=argparse.BooleanOptionalAction, default=True,
                       help="log every request (default: on)")
    serve.set_defaults(handler=cmd_serve)

    token = commands.add_parser(
        "token",
        help="create a bearer token and print its config entry",
        description=("Create a random bearer token. The token goes to stderr, once; the [[tokens]] entry for the "
                     "config file (which keeps only the token's sha256) goes to stdout."),
        epilog="Example: mcp-governance token --name release --scopes read,lock >> mcp-governance.toml",
    )
    token.add_argument("--name", required=True, help="who the token belongs to (shown in the audit log)")
    token.add_argument("--scopes", required=True, help=f"comma-separated: {', '.join(SCOPES)}")
    token.add_argument("--servers", default="*", help="comma-separated server-name globs (default: *)")
    token.set_defaults(handler=cmd_token)
