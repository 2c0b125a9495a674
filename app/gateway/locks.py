"""Where the gateway gets the lock and where it reports the live surface.

- :class:`LockfilesSource`: a lockfile directory (the service's own store layout); the live
  surface is reported into it as the service would record it.
- :class:`ServiceSource`: the governance service over HTTP, with the last lock it served
  cached on disk: when the service is slow or down the gateway serves from that copy. Its
  token goes only to the service (the ``Authorization`` header of its own HTTP client).

:class:`MemoryStore` holds the lock in memory for the gateway's own
:class:`app.service.Governance`, so the diff, the awareness, the validation error and the
unknown-tool answer are the service's functions, computed in-process.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from app.jsontypes import JSON
from app.model import Surface
from app.store.base import LockStore
from app.store.records import (
    LiveRecord,
    RefusedAttempt,
    StoredLock,
    StoreError,
    UnknownVersion,
    VersionRecord,
)

log = logging.getLogger("mcp_governance.gateway")

INSTANCE_HEADER = "X-Instance-Id"
"""The header that says which gateway process reports a live surface."""


class MemoryStore(LockStore):
    """One lock per server, in memory, and the live records computed against it."""

    def __init__(self) -> None:
        self._locks: dict[str, StoredLock] = {}
        self._live: dict[str, LiveRecord] = {}
        self._mutex = threading.RLock()

    def set_lock(self, server: str, lock: StoredLock | None) -> None:
        with self._mutex:
            if lock is None:
                self._locks.pop(server, None)
            else:
                self._locks[server] = lock

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._mutex:
            yield

    def servers(self) -> list[str]:
        return sorted({*self._locks, *self._live})

    def current(self, server: str) -> StoredLock | None:
        return self._locks.get(server)

    def history(self, server: str) -> list[VersionRecord]:
        lock = self._locks.get(server)
        return [lock.record] if lock is not None else []

    def version(self, server: str, number: int) -> StoredLock:
        lock = self._locks.get(server)
        if lock is None or lock.record.version != number:
            raise UnknownVersion(server, number)
        return lock

    def commit_version(self, record: VersionRecord, text: bytes, surface: Surface | None = None) -> None:
        raise StoreError("the gateway never locks: lock through the service or the CLI")

    def live(self, server: str, instance: str | None = None) -> LiveRecord | None:
        return self._live.get(server)

    def live_if_cached(self, server: str, instance: str | None = None) -> LiveRecord | None:
        return self._live.get(server)

    def live_reports(self, server: str) -> list[LiveRecord]:
        live = self._live.get(server)
        return [live] if live is not None else []

    def save_live(self, record: LiveRecord, expired_before: str | None = None) -> None:
        self._live[record.server] = record

    def save_refused(self, attempt: RefusedAttempt) -> None:
        return None

    def refused(self, server: str) -> list[RefusedAttempt]:
        return []

    def unready(self) -> str | None:
        return None


@dataclass(frozen=True)
class Fetched:
    lock: StoredLock | None
    """None: the server has no lock (or none could be had)."""
    origin: str
    """Where it came from, for the log: the directory, the service, or the disk cache."""


class SourceUnavailable(Exception):
    """Neither the source nor a cached copy could give a lock."""


class LockSource(Protocol):
    remote: bool
    """Whether answers may come from elsewhere (the service) within the budget."""

    def fetch(self, server: str) -> Fetched: ...

    def cached(self, server: str) -> Fetched | None: ...

    def report(self, server: str, wire: dict[str, JSON], surface: Surface) -> dict[str, JSON] | None: ...

    def validation_error(self, server: str, tool: str, arguments: Any, max_changes: int,
                         timeout: float) -> str | None: ...

    def close(self) -> None: ...


class LockfilesSource:
    remote = False

    def __init__(self, directory: Path) -> None:
        from app.store import FileStore

        self.directory = directory
        self.store = FileStore(directory)

    def fetch(self, server: str) -> Fetched:
        from app.store import CorruptLockfile

        try:
            return Fetched(self.store.current(server), str(self.directory))
        except CorruptLockfile as exc:
            raise SourceUnavailable(str(exc)) from None

    def cached(self, server: str) -> Fetched | None:
        return None

    def report(self, server: str, wire: dict[str, JSON], surface: Surface) -> dict[str, JSON] | None:
        from app.service import Governance

        try:
            record = Governance(self.store).report_live(server, surface)
        except (OSError, StoreError) as exc:
            log.warning("could not record the live surface of %s in %s: %s", server, self.directory, exc)
            return None
        return {"live_digest": record.live_digest, "lock_version": record.lock_version}

    def validation_error(self, server: str, tool: str, arguments: Any, max_changes: int,
                         timeout: float) -> str | None:
        return None  # computed locally, from the same lockfiles

    def close(self) -> None:
        return None


def _safe_name(server: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in server)


class ServiceSource:
    """The governance service, and the last lock it gave, cached under ``cache_dir``."""

    remote = True

    def __init__(self, url: str, token: str | None, cache_dir: Path, instance: str, timeout: float = 2.0) -> None:
        import httpx

        headers = {INSTANCE_HEADER: instance}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.url = url.rstrip("/")
        self.cache_dir = cache_dir
        self.timeout = timeout
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout)

    def _cache_path(self, server: str) -> Path:
        return self.cache_dir / f"{_safe_name(server)}.lock.json"

    @staticmethod
    def _parse(body: dict[str, JSON]) -> StoredLock:
        from app.lockfile import read_document, write_surface

        record = VersionRecord.from_json(body["record"])
        surface = read_document(body["lockfile"])
        return StoredLock(record, surface, write_surface(surface, surface.generated_at).encode("utf-8"))

    def cached(self, server: str) -> Fetched | None:
        path = self._cache_path(server)
        try:
            body = json.loads(path.read_text("utf-8"))
            return Fetched(self._parse(body) if body.get("record") else None, f"{path} (cached)")
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("the cached lock %s cannot be read: %s", path, exc)
            return None

    def fetch(self, server: str) -> Fetched:
        import httpx

        from app.problems import InputError
        from app.store.atomic import write_atomic

        try:
            response = self._http.get(f"/lockfiles/{server}")
        except httpx.HTTPError as exc:
            raise SourceUnavailable(f"cannot reach the governance service at {self.url}: {exc}") from None
        if response.status_code == 404:
            body: dict[str, JSON] = {"record": None}
        elif response.status_code == 200:
            try:
                body = response.json()
                self._parse(body)
            except (ValueError, KeyError, TypeError, InputError) as exc:
                raise SourceUnavailable(f"the governance service sent a lock that cannot be read: {exc}") from None
        else:
            raise SourceUnavailable(f"the governance service answered {response.status_code} for the lock of {server}")
        try:
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            write_atomic(self._cache_path(server), json.dumps(body).encode("utf-8"))
        except OSError as exc:
            log.warning("could not cache the lock of %s in %s: %s", server, self.cache_dir, exc)
        return Fetched(self._parse(body) if body.get("record") else None, self.url)

    def report(self, server: str, wire: dict[str, JSON], surface: Surface) -> dict[str, JSON] | None:
        import httpx

        try:
            response = self._http.put(f"/servers/{server}/live", json=wire)
        except httpx.HTTPError as exc:
            log.warning("governance service unavailable (live report of %s): %s", server, exc)
            return None
        if response.status_code >= 400:
            log.warning("governance service refused the live surface of %s: %s", server, response.text[:200])
            return None
        answer: dict[str, JSON] = response.json()
        return answer

    def validation_error(self, server: str, tool: str, arguments: Any, max_changes: int,
                         timeout: float) -> str | None:
        import httpx

        try:
            response = self._http.post(f"/servers/{server}/validation-error",
                                       json={"tool": tool, "arguments": arguments, "max": max_changes},
                                       timeout=timeout)
            answer = response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError, TypeError) as exc:
            log.info("no validation error from the governance service for %s/%s: %s", server, tool, exc)
            return None
        if not isinstance(answer, dict) or answer.get("valid") or not isinstance(answer.get("xml"), str):
            return None
        return answer["xml"] or None

    def close(self) -> None:
        self._http.close()


__all__ = ["INSTANCE_HEADER", "Fetched", "LockSource", "LockfilesSource", "MemoryStore", "ServiceSource",
           "SourceUnavailable"]
