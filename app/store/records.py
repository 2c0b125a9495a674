"""What the store keeps: numbered lock versions with their audit facts, the last live
surface a server reported with its diff against the current lock, and the lock attempts
it refused (so they can be approved later)."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field

from app.jsontypes import JSON
from app.model import Surface


@dataclass(frozen=True)
class VersionRecord:
    """One accepted lock: an audit-log line."""

    server: str
    version: int
    integrity_digest: str
    previous_digest: str | None
    locked_at: str
    who: str | None = None
    commit: str | None = None
    reason: str | None = None
    approved_by: str | None = None
    server_version: str | None = None
    summary: dict[str, int] = field(default_factory=dict)
    """Deltas by severity against the previous version (empty for version 1)."""
    max_severity: str | None = None
    source: str = "api"
    """``api`` (POST /lock or the CLI) or ``directory`` (a lockfile committed by hand)."""

    def to_json(self) -> dict[str, JSON]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, JSON]) -> VersionRecord:
        known = set(cls.__dataclass_fields__)
        return cls(**{key: value for key, value in data.items() if key in known})


@dataclass(frozen=True)
class StoredLock:
    """A lock version: its record, the verified surface and the exact TOML bytes."""

    record: VersionRecord
    surface: Surface
    text: bytes


@dataclass(frozen=True)
class LiveRecord:
    """The live surface a server reported, and its diff against the lock of that moment."""

    server: str
    reported_at: str
    live_digest: str
    surface_document: dict[str, JSON]
    """The live surface as a lock document (JSON export shape), so a restart can rebuild it."""
    lock_version: int | None
    lock_digest: str | None
    locked_at: str | None
    result: dict[str, JSON] | None
    """``DiffResult.to_json()`` of lock -> live; None when the server has no lock."""
    instance: str | None = None
    """The instance that reported it (``X-Instance-Id``); None: one that did not name itself."""

    def to_json(self) -> dict[str, JSON]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, JSON]) -> LiveRecord:
        known = set(cls.__dataclass_fields__)
        return cls(**{key: value for key, value in data.items() if key in known})


@dataclass(frozen=True)
class RefusedAttempt:
    """A lock the service refused (409: BREAKING changes without approval), kept so that a
    caller with the ``approve`` scope can look at it and approve it later.

    ``id`` is derived from the lock it was refused against and the surface it asked for, so
    a pipeline retrying the same release replaces its attempt instead of adding one."""

    server: str
    id: str
    attempted_at: str
    base_version: int
    base_digest: str
    integrity_digest: str
    surface_document: dict[str, JSON]
    """The surface asked for, as a lock document (JSON export shape)."""
    who: str | None = None
    commit: str | None = None
    reason: str | None = None
    server_version: str | None = None
    summary: dict[str, int] = field(default_factory=dict)
    """Deltas by severity against the base version."""

    @staticmethod
    def make_id(base_digest: str, integrity_digest: str) -> str:
        return hashlib.sha256(f"{base_digest}|{integrity_digest}".encode()).hexdigest()[:16]

    def to_json(self) -> dict[str, JSON]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, JSON]) -> RefusedAttempt:
        known = set(cls.__dataclass_fields__)
        return cls(**{key: value for key, value in data.items() if key in known})


class StoreError(Exception):
    """A store problem that is not bad input (I/O, corruption)."""


class CorruptLockfile(StoreError):
    """The current lockfile on disk does not read or its digests do not match: not served."""

    def __init__(self, server: str, problem: str) -> None:
        super().__init__(f"{server}: the current lockfile is corrupt ({problem})")
        self.server = server
        self.problem = problem


def verified_lock_surface(server: str, text: bytes, where: str) -> Surface:
    """The surface a stored lock text reads back as, for ``server``: every store reads its
    locks through this one check (the text verifies and names its server)."""
    from app.ingest.load import surface_from_bytes
    from app.problems import InputError

    try:
        surface = surface_from_bytes(text, "lockfile", where)
    except InputError as exc:
        raise CorruptLockfile(server, str(exc)) from None
    if surface.server != server:
        raise CorruptLockfile(server, f"{where} names server {surface.server!r}")
    return surface


class UnknownVersion(StoreError):
    def __init__(self, server: str, version: int) -> None:
        super().__init__(f"{server}: no version {version}")
        self.server = server
        self.version = version


class VersionConflict(StoreError):
    """A conditional commit lost a race: the server's last version is no longer the one
    the new version follows. The service reads again and retries (or answers 412)."""

    def __init__(self, server: str, expected: int, found: int) -> None:
        super().__init__(f"{server}: version {expected + 1} follows {found}, not {expected}")
        self.server = server
        self.expected = expected
        self.found = found


class StoreUnavailable(StoreError):
    """The store cannot serve this request now (database unreachable, disk full, read-only):
    the API answers 503 and the request may be retried."""

    code = "store_unavailable"


class StoreReadOnly(StoreUnavailable):
    """The store serves reads but takes no writes."""

    code = "store_read_only"
