"""The default store: the ``lockfiles/`` directory, embedded, nothing to install.

Layout::

    lockfiles/<server>.lock.toml              current lock (git-diffable; may be committed by hand)
    lockfiles/.store/lock                     the write lock (flock)
    lockfiles/.store/<server>/audit.jsonl     append-only audit log, one VersionRecord per line
    lockfiles/.store/<server>/versions/000001.lock.toml   every accepted version, immutable
    lockfiles/.store/<server>/pending.json     a lock in flight (present only during a write)
    lockfiles/.store/<server>/live.json       the last live report and its diff
    lockfiles/.store/<server>/refused/<id>.json   a refused (409) lock attempt awaiting approval

A lock is written in this order, under an exclusive ``flock``: the version file, the
pending marker, the audit line (the commit point), the current file, then the marker is
removed. Every step is a temp file + fsync + rename (or an fsync'd append), so kill -9 at
any point leaves either the old lock or the new one, never half a file; the next reader
finishes or discards what the marker names. A current file that matches no recorded
version was committed by hand: it is verified and adopted as the next version, or, when
its digests do not match its content, reported as corrupt and not served.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from app.ingest.load import surface_from_bytes
from app.lockfile import check_server_name, utc_now
from app.model import Surface
from app.names import is_server_name
from app.problems import InputError
from app.store.atomic import append_durable, write_atomic
from app.store.base import REFUSED_KEPT, LockStore
from app.store.records import CorruptLockfile, LiveRecord, RefusedAttempt, StoredLock, UnknownVersion, VersionRecord

Summarize = Callable[[Surface | None, Surface], tuple[dict[str, int], str | None]]
"""(previous surface, new surface) -> (counts by severity, max severity): the diff
summary recorded for a version adopted from the directory."""

STATE_DIR = ".store"
SUFFIX = ".lock.toml"


_V = TypeVar("_V")


@dataclass(frozen=True)
class _Cached(Generic[_V]):
    key: tuple[object, ...]
    value: _V


def _stat_key(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


class FileStore(LockStore):
    def __init__(self, root: str | Path, summarize: Summarize | None = None) -> None:
        self.root = Path(root)
        self.state = self.root / STATE_DIR
        self._summarize = summarize
        self._local = threading.local()
        # Per server, valid while the files' stat key is unchanged.
        self._current_cache: dict[str, _Cached[StoredLock | CorruptLockfile | None]] = {}
        self._history_cache: dict[str, _Cached[tuple[VersionRecord, ...]]] = {}
        self._live_cache: dict[str, _Cached[LiveRecord | None]] = {}
        self._cache_lock = threading.Lock()

    # -- paths ---------------------------------------------------------------------

    def current_path(self, server: str) -> Path:
        return self.root / f"{_safe(server)}{SUFFIX}"

    def _dir(self, server: str) -> Path:
        return self.state / _safe(server)

    def _audit(self, server: str) -> Path:
        return self._dir(server) / "audit.jsonl"

    def _version_path(self, server: str, number: int) -> Path:
        return self._dir(server) / "versions" / f"{number:06d}{SUFFIX}"

    def _shown(self, path: Path) -> str:
        """A store path as problem details show it: relative to the store, so an error
        never tells a client where the service keeps its files."""
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return path.name

    def _pending(self, server: str) -> Path:
        return self._dir(server) / "pending.json"

    def _live_path(self, server: str) -> Path:
        return self._dir(server) / "live.json"

    def _refused_dir(self, server: str) -> Path:
        return self._dir(server) / "refused"

    # -- locking -------------------------------------------------------------------

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        depth = getattr(self._local, "depth", 0)
        if depth:
            self._local.depth = depth + 1
            try:
                yield
            finally:
                self._local.depth -= 1
            return
        self.state.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.state / "lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._local.depth = 1
            try:
                yield
            finally:
                self._local.depth = 0
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    # -- reading -------------------------------------------------------------------

    def servers(self) -> list[str]:
        names: set[str] = set()
        if self.root.is_dir():
            for path in self.root.glob(f"*{SUFFIX}"):
                name = path.name[: -len(SUFFIX)]
                if is_server_name(name):
                    names.add(name)
        if self.state.is_dir():
            for path in self.state.iterdir():
                if path.is_dir() and is_server_name(path.name) and (
                    (path / "audit.jsonl").exists() or (path / "live.json").exists()
                ):
                    names.add(path.name)
        return sorted(names)

    def _current_key(self, server: str) -> tuple[object, ...]:
        return (_stat_key(self.current_path(server)), _stat_key(self._audit(server)),
                self._pending(server).exists())

    def current(self, server: str) -> StoredLock | None:
        key = self._current_key(server)
        cached = self._current_cache.get(server)
        if cached is not None and cached.key == key:
            if isinstance(cached.value, CorruptLockfile):
                raise cached.value
            return cached.value
        with self.exclusive():
            try:
                value: StoredLock | CorruptLockfile | None = self._recover(server)
            except CorruptLockfile as exc:
                value = exc
            key = self._current_key(server)
        with self._cache_lock:
            self._current_cache[server] = _Cached(key, value)
        if isinstance(value, CorruptLockfile):
            raise value
        return value

    def history(self, server: str) -> list[VersionRecord]:
        path = self._audit(server)
        key = (_stat_key(path),)
        cached = self._history_cache.get(server)
        if cached is not None and cached.key == key:
            return list(cached.value)
        records = _read_audit(path)
        with self._cache_lock:
            self._history_cache[server] = _Cached(key, tuple(records))
        return records

    def version(self, server: str, number: int) -> StoredLock:
        records = {record.version: record for record in self.history(server)}
        record = records.get(number)
        if record is None:
            raise UnknownVersion(server, number)
        path = self._version_path(server, number)
        try:
            text = path.read_bytes()
        except FileNotFoundError:
            raise UnknownVersion(server, number) from None
        return StoredLock(record, _verified(server, text, self._shown(path)), text)

    def live(self, server: str) -> LiveRecord | None:
        path = self._live_path(server)
        key = (_stat_key(path),)
        cached = self._live_cache.get(server)
        if cached is not None and cached.key == key:
            return cached.value
        try:
            record: LiveRecord | None = LiveRecord.from_json(json.loads(path.read_bytes()))
        except FileNotFoundError:
            record = None
        with self._cache_lock:
            self._live_cache[server] = _Cached(key, record)
        return record

    def live_if_cached(self, server: str) -> LiveRecord | None:
        path = self._live_path(server)
        cached = self._live_cache.get(server)
        if cached is None or cached.value is None or cached.key != (_stat_key(path),):
            return None
        return cached.value

    def refused(self, server: str) -> list[RefusedAttempt]:
        return [attempt for _, attempt in self._refused_files(server)]

    def _refused_files(self, server: str) -> list[tuple[Path, RefusedAttempt]]:
        """The kept attempts with their files, newest first."""
        directory = self._refused_dir(server)
        if not directory.is_dir():
            return []
        found: list[tuple[Path, RefusedAttempt]] = []
        for path in directory.glob("*.json"):
            try:
                found.append((path, RefusedAttempt.from_json(json.loads(path.read_bytes()))))
            except (OSError, ValueError, TypeError):
                continue  # removed while listing, or not ours: never acknowledged as an attempt
        return sorted(found, key=lambda item: (item[1].attempted_at, item[1].id), reverse=True)

    def ready(self) -> bool:
        try:
            self.state.mkdir(parents=True, exist_ok=True)
        except OSError:
            return False
        return os.access(self.root, os.R_OK | os.W_OK | os.X_OK) and os.access(self.state, os.W_OK)

    # -- writing -------------------------------------------------------------------

    def append_version(self, record: VersionRecord, text: bytes, surface: Surface | None = None) -> None:
        server = record.server
        with self.exclusive():
            write_atomic(self._version_path(server, record.version), text)
            write_atomic(self._pending(server), json.dumps(record.to_json()).encode())
            self._append_audit(record)
            write_atomic(self.current_path(server), text)
            self._pending(server).unlink(missing_ok=True)
            if surface is not None:
                # What we just wrote needs no re-reading: cache it under the files' new stat.
                with self._cache_lock:
                    self._current_cache[server] = _Cached(self._current_key(server),
                                                          StoredLock(record, surface, text))

    def save_live(self, record: LiveRecord) -> None:
        data = json.dumps(record.to_json(), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        write_atomic(self._live_path(record.server), data)

    def save_refused(self, attempt: RefusedAttempt) -> None:
        with self.exclusive():
            data = json.dumps(attempt.to_json(), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            write_atomic(self._refused_dir(attempt.server) / f"{_safe_id(attempt.id)}.json", data)
            for path, _ in self._refused_files(attempt.server)[REFUSED_KEPT:]:
                path.unlink(missing_ok=True)

    def _append_audit(self, record: VersionRecord) -> None:
        path = self._audit(record.server)
        line = json.dumps(record.to_json(), ensure_ascii=False, sort_keys=True).encode("utf-8")
        if path.exists() and path.stat().st_size:
            with path.open("rb") as handle:
                handle.seek(-1, os.SEEK_END)
                if handle.read(1) != b"\n":
                    line = b"\n" + line  # a torn line from a crash stays its own (ignored) line
        append_durable(path, line)

    # -- recovery (under the lock) -------------------------------------------------

    def _recover(self, server: str) -> StoredLock | None:
        pending = self._pending(server)
        if pending.exists():
            self._finish_pending(server, pending)
        records = _read_audit(self._audit(server))
        last = records[-1] if records else None
        path = self.current_path(server)
        try:
            text = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:  # a directory, no permission...: reported, never a crash at start
            raise CorruptLockfile(server, f"{self._shown(path)}: cannot read ({exc.strerror})") from None
        surface = _verified(server, text, self._shown(path))
        if last is not None and last.integrity_digest == surface.integrity_digest:
            return StoredLock(last, surface, text)
        return self._adopt(server, surface, text, last)

    def _finish_pending(self, server: str, pending: Path) -> None:
        """A writer died mid-lock: finish it if its audit line landed, else drop it."""
        try:
            intent = VersionRecord.from_json(json.loads(pending.read_bytes()))
        except (ValueError, TypeError):
            pending.unlink(missing_ok=True)
            return
        committed = any(r.version == intent.version and r.integrity_digest == intent.integrity_digest
                        for r in _read_audit(self._audit(server)))
        version_file = self._version_path(server, intent.version)
        if committed and version_file.exists():
            write_atomic(self.current_path(server), version_file.read_bytes())
        elif not committed:
            version_file.unlink(missing_ok=True)
        pending.unlink(missing_ok=True)

    def _adopt(self, server: str, surface: Surface, text: bytes, last: VersionRecord | None) -> StoredLock:
        """A lockfile committed into the directory by hand becomes the next version."""
        previous = None
        if last is not None:
            try:
                previous = self.version(server, last.version).surface
            except (UnknownVersion, CorruptLockfile):
                previous = None
        summary, max_severity = self._summarize(previous, surface) if self._summarize else ({}, None)
        record = VersionRecord(
            server=server,
            version=(last.version + 1) if last else 1,
            integrity_digest=surface.integrity_digest,
            previous_digest=last.integrity_digest if last else None,
            locked_at=surface.generated_at or utc_now(),
            who="lockfiles directory",
            reason="lockfile committed to the directory by hand",
            server_version=surface.server_version,
            summary=summary,
            max_severity=max_severity,
            source="directory",
        )
        write_atomic(self._version_path(server, record.version), text)
        self._append_audit(record)
        return StoredLock(record, surface, text)


def _safe(server: str) -> str:
    """A server name is a file name, never a path (checked again here, whoever calls)."""
    return check_server_name(server, "server")


def _safe_id(attempt_id: str) -> str:
    """An attempt id is a file name (hex, as the service makes them), never a path."""
    if not attempt_id or not all(ch in "0123456789abcdef" for ch in attempt_id):
        raise ValueError(f"not an attempt id: {attempt_id!r}")
    return attempt_id


def _read_audit(path: Path) -> list[VersionRecord]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    records: list[VersionRecord] = []
    for line in raw.splitlines():
        try:
            records.append(VersionRecord.from_json(json.loads(line)))
        except (ValueError, TypeError):
            continue  # a torn line from a crashed append: never acknowledged
    return records


def _verified(server: str, text: bytes, where: str) -> Surface:
    try:
        surface = surface_from_bytes(text, "lockfile", where)
    except InputError as exc:
        raise CorruptLockfile(server, str(exc)) from None
    if surface.server != server:
        raise CorruptLockfile(server, f"{where} names server {surface.server!r}")
    return surface
