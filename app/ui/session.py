"""Browser sessions for the dashboard: a signed, expiring, HttpOnly cookie.

A bearer token cannot be sent by a browser, so the dashboard asks for it once and keeps a
session instead. The cookie never holds the token: it holds the token's sha256 (what the
config already stores), matched against the configured grants on every request with the
API's own check (:func:`app.api.security.grant_for_sha256`), so removing a token from the
config ends its sessions. The cookie is signed with HMAC-SHA256 and carries its expiry;
``SameSite=Strict`` keeps other sites from sending it, and every state-changing form also
carries a CSRF token derived from the session's random id.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass

COOKIE = "mcpg_session"
PATH = "/ui"


@dataclass(frozen=True)
class Session:
    sid: str
    """Random per sign-in (and per anonymous visit): the CSRF token is derived from it."""
    expires: int
    """Unix time after which the cookie is refused."""
    token_sha256: str | None = None
    """The signed-in token's sha256; None before sign-in (or when auth is off)."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Sessions:
    """Makes, signs and checks session cookies with one secret."""

    def __init__(self, secret: str | bytes, seconds: int) -> None:
        key = secret.encode("utf-8") if isinstance(secret, str) else secret
        # Separate keys for the two uses, so a CSRF token is never a valid signature.
        self._sign_key = hmac.new(key, b"mcp-governance session", hashlib.sha256).digest()
        self._csrf_key = hmac.new(key, b"mcp-governance csrf", hashlib.sha256).digest()
        self.seconds = seconds

    def new(self, token_sha256: str | None = None, now: float | None = None) -> Session:
        return Session(secrets.token_urlsafe(18), int(now if now is not None else time.time()) + self.seconds,
                       token_sha256)

    def dumps(self, session: Session) -> str:
        payload = _b64(json.dumps({"s": session.sid, "e": session.expires, "t": session.token_sha256},
                                  separators=(",", ":")).encode("utf-8"))
        return f"{payload}.{self._signature(payload)}"

    def loads(self, value: str | None, now: float | None = None) -> Session | None:
        """The session a cookie holds, or None when it is missing, forged, malformed or expired."""
        if not value or not value.isascii() or value.count(".") != 1:
            return None  # a cookie this class wrote is ASCII: anything else is forged
        payload, signature = value.split(".")
        if not hmac.compare_digest(signature.encode("utf-8"), self._signature(payload).encode("ascii")):
            return None
        try:
            data = json.loads(_unb64(payload))
            session = Session(str(data["s"]), int(data["e"]), data["t"] if isinstance(data["t"], str) else None)
        except (ValueError, KeyError, TypeError):
            return None
        if session.expires <= (now if now is not None else time.time()):
            return None
        return session

    def csrf(self, session: Session) -> str:
        return hmac.new(self._csrf_key, session.sid.encode("utf-8"), hashlib.sha256).hexdigest()

    def csrf_ok(self, session: Session | None, presented: str | None) -> bool:
        return (session is not None and bool(presented) and str(presented).isascii()
                and hmac.compare_digest(self.csrf(session).encode("ascii"), str(presented).encode("ascii")))

    def _signature(self, payload: str) -> str:
        return _b64(hmac.new(self._sign_key, payload.encode("utf-8"), hashlib.sha256).digest())
