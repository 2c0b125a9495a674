"""Service settings: where the store is, who may do what, and the limits.

From a TOML file (``--config`` / ``MCP_GOVERNANCE_CONFIG``) and the environment::

    # mcp-governance.toml
    store = "postgresql://localhost/mcp"  # optional: the store (default: the lockfiles/ directory)
    policy = "policy.toml"            # optional: severity overrides and ignores (see app/policy.py)
    max_body_bytes = 16777216         # optional: request body limit (default 16 MiB)
    session_seconds = 28800           # optional: how long a dashboard sign-in lasts (default 8 hours)
    work_budget_seconds = 10          # optional: most CPU time one request may spend (validation, diff, rendering)
    instance_seconds = 3600           # optional: an instance's live report counts this long (default 1 hour)

    [[tokens]]
    name = "release-pipeline"         # shown in the audit log as "who" when the request names nobody
    sha256 = "9f86d081884c7d65..."    # sha256 hex of the bearer token; the token itself is never stored
    scopes = ["read", "lock"]         # read, report, lock, approve, admin (admin implies all)
    servers = ["billing", "pay-*"]    # optional server-name globs; default: every server

``MCP_GOVERNANCE_TOKENS`` may add tokens as a JSON list of the same objects; there (and only
there) an entry may carry the plain ``token`` instead of its ``sha256``, hashed at load.
``MCP_GOVERNANCE_SESSION_SECRET`` signs the dashboard's session cookies (every replica behind
one address needs the same one; ``serve`` makes one for its own workers when it is unset).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tomllib
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from app.names import full_match, is_server_name
from app.problems import InputError
from app.scopes import SCOPES

DEFAULT_MAX_BODY = 16 * 1024 * 1024
DEFAULT_SESSION_SECONDS = 8 * 3600
DEFAULT_WORK_BUDGET = 10.0
MIN_SESSION_SECRET = 32
_HEX64 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class TokenGrant:
    """What one bearer token may do."""

    name: str
    sha256: str
    scopes: frozenset[str]
    servers: tuple[str, ...] = ("*",)

    def allows(self, scope: str) -> bool:
        return "admin" in self.scopes or scope in self.scopes

    def covers(self, server: str) -> bool:
        """A glob covers only a valid server name, whole (``billing*`` never covers ``billing\n``)."""
        return is_server_name(server) and any(fnmatchcase(server, pattern) for pattern in self.servers)


@dataclass(frozen=True)
class Settings:
    lockfiles: Path = Path("lockfiles")
    store: str | None = None
    """A ``postgresql://`` URL (or a directory): where locks live; None: the ``lockfiles`` directory."""
    tokens: tuple[TokenGrant, ...] = ()
    max_body_bytes: int = DEFAULT_MAX_BODY
    policy: Path | None = None
    config_path: Path | None = None
    session_secret: str | None = None
    """Signs dashboard session cookies; None: a random one per process."""
    session_seconds: int = DEFAULT_SESSION_SECONDS
    work_budget_seconds: float | None = DEFAULT_WORK_BUDGET
    """The total work one request may do (:mod:`app.budget`); None: unbounded."""
    instance_seconds: int = 3600
    """How long an instance's live report counts as that instance's (then it expires)."""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def auth_enabled(self) -> bool:
        return bool(self.tokens)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _grant(entry: Any, where: str, allow_plain: bool) -> TokenGrant:
    if not isinstance(entry, dict):
        raise InputError("expected a table with name, sha256 and scopes", where)
    unknown = sorted(set(entry) - {"name", "sha256", "token", "scopes", "servers"})
    if unknown:
        raise InputError(f"unknown field {unknown[0]!r}", where)
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise InputError("missing name", where)
    digest = entry.get("sha256")
    if "token" in entry:
        if not allow_plain:
            raise InputError("plain tokens do not belong in a config file; store its sha256 instead", f"{where}.token")
        if not isinstance(entry["token"], str) or len(entry["token"]) < 16:
            raise InputError("a token must be a string of at least 16 characters", f"{where}.token")
        digest = hash_token(entry["token"])
    if not isinstance(digest, str) or not full_match(_HEX64, digest.lower()):
        raise InputError("missing or not a sha256 hex digest", f"{where}.sha256")
    scopes = entry.get("scopes")
    if not isinstance(scopes, list) or not scopes or not all(isinstance(s, str) for s in scopes):
        raise InputError(f"expected a non-empty list of scopes ({', '.join(SCOPES)})", f"{where}.scopes")
    bad = sorted(set(scopes) - set(SCOPES))
    if bad:
        raise InputError(f"unknown scope {bad[0]!r} (one of: {', '.join(SCOPES)})", f"{where}.scopes")
    servers = entry.get("servers", ["*"])
    if not isinstance(servers, list) or not servers or not all(isinstance(s, str) and s for s in servers):
        raise InputError("expected a non-empty list of server-name globs", f"{where}.servers")
    return TokenGrant(name, digest.lower(), frozenset(scopes), tuple(servers))


def load_settings(
    lockfiles: str | Path | None = None,
    config: str | Path | None = None,
    environ: dict[str, str] | None = None,
    store: str | None = None,
) -> Settings:
    """Settings from arguments, then the environment, then the config file."""
    env = os.environ if environ is None else environ
    lockfiles = lockfiles or env.get("MCP_GOVERNANCE_LOCKFILES") or "lockfiles"
    config = config or env.get("MCP_GOVERNANCE_CONFIG") or None
    data: dict[str, Any] = {}
    config_path = Path(config) if config else None
    if config_path is not None:
        where = str(config_path)
        try:
            data = tomllib.loads(config_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError("no such file", where) from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"invalid TOML: {exc}", where) from None
        unknown = sorted(set(data) - {"tokens", "max_body_bytes", "policy", "session_seconds", "store",
                                      "work_budget_seconds", "instance_seconds"})
        if unknown:
            raise InputError(f"unknown field {unknown[0]!r}", where)
    tokens = [_grant(entry, f"{config_path}: tokens[{i}]", allow_plain=False)
              for i, entry in enumerate(data.get("tokens", []))]
    raw_env_tokens = env.get("MCP_GOVERNANCE_TOKENS")
    if raw_env_tokens:
        try:
            entries = json.loads(raw_env_tokens)
        except ValueError:
            raise InputError("expected a JSON list of token objects", "MCP_GOVERNANCE_TOKENS") from None
        if not isinstance(entries, list):
            raise InputError("expected a JSON list of token objects", "MCP_GOVERNANCE_TOKENS")
        tokens += [_grant(entry, f"MCP_GOVERNANCE_TOKENS[{i}]", allow_plain=True) for i, entry in enumerate(entries)]
    max_body = env.get("MCP_GOVERNANCE_MAX_BODY_BYTES") or data.get("max_body_bytes", DEFAULT_MAX_BODY)
    try:
        max_body = int(max_body)
        if max_body <= 0:
            raise ValueError
    except (TypeError, ValueError):
        raise InputError("must be a positive number of bytes", "max_body_bytes") from None
    session_seconds = env.get("MCP_GOVERNANCE_SESSION_SECONDS") or data.get("session_seconds",
                                                                            DEFAULT_SESSION_SECONDS)
    try:
        session_seconds = int(session_seconds)
        if session_seconds <= 0:
            raise ValueError
    except (TypeError, ValueError):
        raise InputError("must be a positive number of seconds", "session_seconds") from None
    work_budget = env.get("MCP_GOVERNANCE_WORK_BUDGET_SECONDS") or data.get("work_budget_seconds",
                                                                            DEFAULT_WORK_BUDGET)
    try:
        work_budget = float(work_budget)
        if not 0 < work_budget < 86400:
            raise ValueError
    except (TypeError, ValueError):
        raise InputError("must be a positive number of seconds", "work_budget_seconds") from None
    session_secret = env.get("MCP_GOVERNANCE_SESSION_SECRET") or None
    if session_secret is not None and len(session_secret) < MIN_SESSION_SECRET:
        raise InputError(f"must be at least {MIN_SESSION_SECRET} characters", "MCP_GOVERNANCE_SESSION_SECRET")
    instance_seconds = env.get("MCP_GOVERNANCE_INSTANCE_SECONDS") or data.get("instance_seconds", 3600)
    try:
        instance_seconds = int(instance_seconds)
        if instance_seconds <= 0:
            raise ValueError
    except (TypeError, ValueError):
        raise InputError("must be a positive number of seconds", "instance_seconds") from None
    store = store or env.get("MCP_GOVERNANCE_STORE") or data.get("store") or None
    if store is not None and not isinstance(store, str):
        raise InputError("expected a postgresql:// URL or a directory", f"{config_path}: store")
    policy = data.get("policy")
    policy_path = None
    if policy is not None:
        if not isinstance(policy, str):
            raise InputError("expected a path", f"{config_path}: policy")
        policy_path = (config_path.parent / policy) if config_path else Path(policy)
    return Settings(
        lockfiles=Path(lockfiles),
        store=store,
        instance_seconds=instance_seconds,
        tokens=tuple(tokens),
        max_body_bytes=max_body,
        policy=policy_path,
        config_path=config_path,
        session_secret=session_secret,
        session_seconds=session_seconds,
        work_budget_seconds=work_budget,
    )
