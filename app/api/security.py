"""Bearer tokens with scopes and server-name patterns.

Tokens are configured as sha256 hashes and compared in constant time; they are never
logged. With no tokens configured the service is open (and says so loudly at start).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from fastapi import Request

from app.api.problems import ApiError
from app.config import TokenGrant
from app.lockfile import check_server_name

BEARER = {"WWW-Authenticate": 'Bearer realm="mcp-governance"'}


@dataclass(frozen=True)
class Caller:
    """Who is calling: a token's grant, or nobody in particular when auth is off."""

    grant: TokenGrant | None

    @property
    def name(self) -> str | None:
        return self.grant.name if self.grant else None

    def allows(self, scope: str) -> bool:
        return self.grant is None or self.grant.allows(scope)

    def covers(self, server: str) -> bool:
        return self.grant is None or self.grant.covers(server)

    def check_server(self, server: str) -> None:
        check_server_name(server, "server")  # 422 for what can be no server (a glob covers names only)
        if not self.covers(server):
            raise ApiError(403, "forbidden_server", f"this token may not act on server {server!r}")


def _match(grants: tuple[TokenGrant, ...], token: str) -> TokenGrant | None:
    return grant_for_sha256(grants, hashlib.sha256(token.encode("utf-8")).hexdigest())


def grant_for_sha256(grants: tuple[TokenGrant, ...], sha256_hex: str) -> TokenGrant | None:
    """The grant of the token with this sha256 (what a browser session keeps instead of
    the token itself), or None."""
    presented = sha256_hex.encode()
    found = None
    for grant in grants:  # every grant is compared, so timing says nothing about which matched
        if hmac.compare_digest(presented, grant.sha256.encode()):
            found = grant
    return found


def caller_for(grants: tuple[TokenGrant, ...], authorization: str) -> Caller:
    """Who an ``Authorization`` header names (raises ApiError 401 when auth is on and it
    names nobody)."""
    if not grants:
        return Caller(None)
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(401, "unauthorized", "a bearer token is required", BEARER)
    grant = _match(grants, token.strip())
    if grant is None:
        raise ApiError(401, "unauthorized", "the bearer token is not valid", BEARER)
    return Caller(grant)


def permit(caller: Caller, scopes: tuple[str, ...], server: str | None) -> Caller:
    """The caller, when it holds one of ``scopes`` and may act on ``server`` (ApiError 403 otherwise)."""
    if not any(caller.allows(scope) for scope in scopes):
        raise ApiError(403, "forbidden_scope", f"this token lacks the {' or '.join(scopes)} scope")
    if server is not None:
        caller.check_server(server)
    return caller


def authenticate(request: Request) -> Caller:
    return caller_for(request.app.state.settings.tokens, request.headers.get("authorization", ""))


def require(*scopes: str) -> Callable[[Request], Awaitable[Caller]]:
    """A dependency: the caller must hold one of ``scopes`` (admin holds them all), and,
    when the route names a server in its path, be allowed on that server. Async: a hash
    and a comparison need no trip through the threadpool."""

    async def dependency(request: Request) -> Caller:
        return permit(authenticate(request), scopes, request.path_params.get("server"))

    dependency.__name__ = f"require_{'_'.join(scopes)}"
    return dependency
