"""The default store: the ``lockfiles/`` directory, embedded, nothing to install.

Layout::

    lockfiles/<server>.lock.toml              current lock (git-diffable; may be committed by hand)
    lockfiles/.store/<server>/lock            the server's write lock (flock)
    lockfiles/.store/<server>/audit.jsonl     append-only audit log, one VersionRecord per line
    lockfiles/.store/<server>/versions/000001.lock.toml   every accepted version, immutable
    lockfiles/.store/<server>/pending.json     a lock in flight (present only during a write)
    lockfiles/.store/<server>/live.json       the last live report and its diff (any instance)
    lockfiles/.store/<server>/instances/<id>.json   the last live report of one instance
    lockfiles/.store/<server>/refused/<id>.json   a refused (409) lock attempt awaiting approval

A lock is written in this order, under the server's ``flock`` (two servers never wait on
each other): the version file, the pending marker, the audit line (the commit point), the
current file, then the marker is removed. Every step is a temp file + fsync + rename (or an
fsync'd append), so kill -9 at any point leaves either the old lock or the new one, never
half a file; the next reader finishes or discards what the marker names. Temp files a
killed writer left are removed at the next start.

Reads take no lock: a consistent state (no marker, the current file is the last audited
version) is read as it is; only a state in the middle of a write, or a current file that
matches no recorded version (committed by hand: verified and adopted as the next version,
or, when its digests do not match its content, reported as corrupt and not served), takes
the server's lock to finish it. On a read-only directory nothing is finished on disk: the
same answer is computed in memory, reads are served and writes raise StoreReadOnly.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from app.lockfile import check_server_name, utc_now
from app.model import Surface
from app.names import is_server_name
from app.store.atomic import append_durable, write_atomic
from app.store.base import REFUSED_KEPT, LockStore
from app.store.records import (
    CorruptLockfile,
    LiveRecord,
    RefusedAttempt,
    StoredLock,
    StoreReadOnly,
    StoreUnavailable,
    UnknownVersion,
    VersionConflict,
    VersionRecord,
    verified_lock_surface,
)

log = logging.getLogger("mcp_governance.store")

Summarize = Callable[[Surface | None, Surface], tuple[dict[str, int], str | None]]
"""(previous surface, new surface) -> (counts by severity, max severity): the diff
summary recorded for a version adopted from the directory."""

STATE_DIR = ".store"
SUFFIX = ".lock.toml"
TMP_SUFFIX = ".tmp"
"""write_atomic's temp files: ``.<name>.<random>.tmp`` beside the file they replace."""
READY_PROBE_SECONDS = 1.0


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
    def __init__(self, root: str | Path, summarize: Summarize | None = None, read_only: bool | None = None) -> None:
        self.root = Path(root)
        self.state = self.root / STATE_DIR
        self._summarize = summarize
        self.read_only = _cannot_write(self.root) if read_only is None else read_only
        # Per server, valid while the files' stat key is unchanged.
        self._current_cache: dict[str, _Cached[StoredLock | CorruptLockfile | None]] = {}
        self._history_cache: dict[str, _Cached[tuple[VersionRecord, ...]]] = {}
        self._live_cache: dict[tuple[str, str | None], _Cached[LiveRecord | None]] = {}
        self._cache_lock = threading.Lock()
        self._probe: tuple[float, str | None] = (0.0, None)

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

    def _live_path(self, server: str, instance: str | None = None) -> Path:
        if instance:
            return self._dir(server) / "instances" / f"{check_server_name(instance, 'instance')}.json"
        return self._dir(server) / "live.json"

    def _refused_dir(self, server: str) -> Path:
        return self._dir(server) / "refused"

    # -- locking -------------------------------------------------------------------

    @contextmanager
    def writing(self, server: str) -> Iterator[None]:
        """Hold ``server``'s write lock (a flock on its own file: other servers never wait).
        Raises StoreReadOnly on a read-only store, StoreUnavailable when the lock file
        cannot be made (disk full)."""
        if self.read_only:
            raise StoreReadOnly("the lockfile store is read-only: it serves reads and takes no writes")
        with _io_errors():
            directory = self._dir(server)
            directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(directory / "lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                with _io_errors():
                    yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    # -- start ---------------------------------------------------------------------

    def startup(self) -> None:
        """Remove the temp files a writer killed mid-write left behind (each server's under its
        lock, so a live writer of another process keeps its own). Parses nothing."""
        if self.read_only or not self.root.is_dir():
            return
        found: dict[str, list[Path]] = {}
        for path in _temp_files(self.root):
            name = path.name[1:].split(SUFFIX, 1)[0]
            found.setdefault(name, []).append(path)
        if self.state.is_dir():
            for entry in os.scandir(self.state):
                if entry.is_dir() and is_server_name(entry.name):
                    directory = Path(entry.path)
                    temps = [*_temp_files(directory), *_temp_files(directory / "versions"),
                             *_temp_files(directory / "refused"), *_temp_files(directory / "instances")]
                    if temps:
                        found.setdefault(entry.name, []).extend(temps)
        for server, paths in found.items():
            if not is_server_name(server):
                continue
            try:
                with self.writing(server):
                    for path in paths:
                        path.unlink(missing_ok=True)
            except StoreUnavailable:
                log.warning("could not remove the temp files of %s", server)
            else:
                log.info("removed %d temp file(s) a killed writer left for %s", len(paths), server)

    # -- reading (no lock) -----------------------------------------------------------

    def servers(self) -> list[str]:
        names: set[str] = set()
        if self.root.is_dir():
            for entry in os.scandir(self.root):
                if entry.name.endswith(SUFFIX):
                    name = entry.name[: -len(SUFFIX)]
                    if is_server_name(name):
                        names.add(name)
        if self.state.is_dir():
            for entry in os.scandir(self.state):
                if entry.name not in names and is_server_name(entry.name) and entry.is_dir() and (
                    os.path.exists(os.path.join(entry.path, "audit.jsonl"))
                    or os.path.exists(os.path.join(entry.path, "live.json"))
                ):
                    names.add(entry.name)
        return sorted(names)

    def _current_key(self, server: str) -> tuple[object, ...]:
        return (_stat_key(self.current_path(server)), _stat_key(self._audit(server)),
                self._pending(server).exists())

    def change_key(self, server: str) -> object:
        return (self._current_key(server), _stat_key(self._live_path(server)))

    def current(self, server: str) -> StoredLock | None:
        key = self._current_key(server)
        cached = self._current_cache.get(server)
        if cached is not None and cached.key == key:
            if isinstance(cached.value, CorruptLockfile):
                raise cached.value
            return cached.value
        try:
            value: StoredLock | CorruptLockfile | None = self._read_current(server)
        except CorruptLockfile as exc:
            value = exc
        key = self._current_key(server)
        with self._cache_lock:
            self._current_cache[server] = _Cached(key, value)
        if isinstance(value, CorruptLockfile):
            raise value
        return value

    def _read_current(self, server: str) -> StoredLock | None:
        """The current lock without the write lock when the files are consistent; the
        server's lock (or, read-only, an answer computed in memory) when they are not."""
        if not self._pending(server).exists():
            lock, found, _ = self._as_recorded(server)
            if found is None or lock is not None:
                return lock
        if self.read_only:
            return self._recover_in_memory(server)
        with self.writing(server):
            return self._recover(server)

    def _read_verified(self, server: str) -> tuple[bytes, Surface] | None:
        path = self.current_path(server)
        try:
            text = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:  # a directory, no permission...: reported, never a crash at start
            raise CorruptLockfile(server, f"{self._shown(path)}: cannot read ({exc.strerror})") from None
        return text, verified_lock_surface(server, text, self._shown(path))

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
        return StoredLock(record, verified_lock_surface(server, text, self._shown(path)), text)

    def live(self, server: str, instance: str | None = None) -> LiveRecord | None:
        path = self._live_path(server, instance)
        key = (_stat_key(path),)
        cached = self._live_cache.get((server, instance))
        if cached is not None and cached.key == key:
            return cached.value
        try:
            record: LiveRecord | None = LiveRecord.from_json(json.loads(path.read_bytes()))
        except FileNotFoundError:
            record = None
        with self._cache_lock:
            self._live_cache[(server, instance)] = _Cached(key, record)
        return record

    def live_if_cached(self, server: str, instance: str | None = None) -> LiveRecord | None:
        path = self._live_path(server, instance)
        cached = self._live_cache.get((server, instance))
        if cached is None or cached.value is None or cached.key != (_stat_key(path),):
            return None
        return cached.value

    def live_reports(self, server: str) -> list[LiveRecord]:
        found: list[LiveRecord] = []
        latest = self.live(server)
        if latest is not None and not latest.instance:
            found.append(latest)
        directory = self._dir(server) / "instances"
        if directory.is_dir():
            for entry in os.scandir(directory):
                if entry.name.endswith(".json") and not entry.name.startswith("."):
                    with contextlib.suppress(ValueError, OSError):  # never half a record: renamed into place
                        record = self.live(server, entry.name[: -len(".json")])
                        if record is not None:
                            found.append(record)
        return sorted(found, key=lambda record: (record.reported_at, record.instance or ""))

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

    def unready(self) -> str | None:
        """Read-only, unreadable, or a write that fails (a full disk): a probe file is written
        and renamed at most once a second."""
        if self.read_only:
            return "the lockfile store is read-only: reads are served, writes are refused"
        at, problem = self._probe
        now = time.monotonic()
        if now - at < READY_PROBE_SECONDS:
            return problem
        try:
            write_atomic(self.state / "ready-probe", str(time.time()).encode())
            problem = None if os.access(self.root, os.R_OK | os.X_OK) else "the lockfile store cannot be read"
        except OSError as exc:
            problem = f"the lockfile store cannot be written ({exc.strerror or type(exc).__name__})"
        self._probe = (now, problem)
        return problem

    # -- writing (under the server's lock) -------------------------------------------

    def commit_version(self, record: VersionRecord, text: bytes, surface: Surface | None = None) -> None:
        server = record.server
        with self.writing(server):
            self._settle(server)  # a pending write or a hand-committed file moves the last version
            records = _read_audit(self._audit(server))
            last = records[-1].version if records else 0
            if record.version != last + 1:
                raise VersionConflict(server, record.version - 1, last)
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

    def save_live(self, record: LiveRecord, expired_before: str | None = None) -> None:
        data = json.dumps(record.to_json(), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        with self.writing(record.server):
            if expired_before is not None:
                self._prune_instances(record.server, expired_before, keep=record.instance)
            if record.instance:
                write_atomic(self._live_path(record.server, record.instance), data)
            latest = self.live(record.server)
            if latest is None or latest.reported_at <= record.reported_at:
                write_atomic(self._live_path(record.server), data)  # the server's newest report

    def _prune_instances(self, server: str, expired_before: str, keep: str | None) -> None:
        """Delete the instance reports older than ``expired_before`` (under the server's lock)."""
        for record in self.live_reports(server):
            if record.instance and record.instance != keep and record.reported_at < expired_before:
                self._live_path(server, record.instance).unlink(missing_ok=True)
                with self._cache_lock:
                    self._live_cache.pop((server, record.instance), None)

    def save_refused(self, attempt: RefusedAttempt) -> None:
        with self.writing(attempt.server):
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

    # -- recovery ------------------------------------------------------------------

    def _recover(self, server: str) -> StoredLock | None:
        """Finish or discard a write in flight and adopt a hand-committed file (under the
        server's lock)."""
        pending = self._pending(server)
        if pending.exists():
            self._finish_pending(server, pending)
        lock, found, last = self._as_recorded(server)
        if found is None or lock is not None:
            return lock
        text, surface = found
        return self._adopt(server, surface, text, last)

    def _as_recorded(
        self, server: str,
    ) -> tuple[StoredLock | None, tuple[bytes, Surface] | None, VersionRecord | None]:
        """The current lockfile (text and surface, verified), the audit log's last record, and
        the stored lock when the two agree (None when the file was hand-edited or is new)."""
        records = _read_audit(self._audit(server))
        last = records[-1] if records else None
        found = self._read_verified(server)
        if found is None or last is None or last.integrity_digest != found[1].integrity_digest:
            return None, found, last
        return StoredLock(last, found[1], found[0]), found, last

    def _settle(self, server: str) -> None:
        """Before a commit (under the lock): finish a write in flight, adopt a hand-committed
        file; a corrupt current file is replaced by the commit. Parses only a changed file."""
        pending = self._pending(server)
        if pending.exists():
            self._finish_pending(server, pending)
        cached = self._current_cache.get(server)
        if cached is not None and cached.key == self._current_key(server):
            return
        with contextlib.suppress(CorruptLockfile):
            self._recover(server)

    def _recover_in_memory(self, server: str) -> StoredLock | None:
        """What :meth:`_recover` would make current, computed without writing (read-only store)."""
        records = _read_audit(self._audit(server))
        last = records[-1] if records else None
        intent = _read_intent(self._pending(server))
        if intent is not None and last is not None and (last.version, last.integrity_digest) == (
                intent.version, intent.integrity_digest):
            path = self._version_path(server, last.version)
            try:
                text = path.read_bytes()
            except FileNotFoundError:
                text = b""
            if text:
                return StoredLock(last, verified_lock_surface(server, text, self._shown(path)), text)
        found = self._read_verified(server)
        if found is None:
            return None
        text, surface = found
        if last is not None and last.integrity_digest == surface.integrity_digest:
            return StoredLock(last, surface, text)
        return StoredLock(self._adopted_record(server, surface, last), surface, text)

    def _finish_pending(self, server: str, pending: Path) -> None:
        """A writer died mid-lock: finish it if its audit line landed, else drop it."""
        intent = _read_intent(pending)
        if intent is None:
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

    def _adopted_record(self, server: str, surface: Surface, last: VersionRecord | None) -> VersionRecord:
        previous = None
        if last is not None:
            try:
                previous = self.version(server, last.version).surface
            except (UnknownVersion, CorruptLockfile):
                previous = None
        summary, max_severity = self._summarize(previous, surface) if self._summarize else ({}, None)
        return VersionRecord(
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

    def _adopt(self, server: str, surface: Surface, text: bytes, last: VersionRecord | None) -> StoredLock:
        """A lockfile committed into the directory by hand becomes the next version."""
        record = self._adopted_record(server, surface, last)
        write_atomic(self._version_path(server, record.version), text)
        self._append_audit(record)
        return StoredLock(record, surface, text)


@contextmanager
def _io_errors() -> Iterator[None]:
    """A write the disk refuses is the store being unavailable (503), not a crash."""
    try:
        yield
    except OSError as exc:
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise StoreReadOnly(f"the lockfile store cannot be written ({exc.strerror})") from exc
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO):
            raise StoreUnavailable(f"the lockfile store cannot be written ({exc.strerror})") from exc
        raise


def _cannot_write(root: Path) -> bool:
    """A directory (or its state directory) this process may not write: a read-only mount,
    or permissions. A missing root is writable once created."""
    state = root / STATE_DIR
    for path in (state, root):
        if path.exists():
            return not os.access(path, os.W_OK | os.X_OK)
    return False


def _temp_files(directory: Path) -> list[Path]:
    try:
        return [Path(entry.path) for entry in os.scandir(directory)
                if entry.name.startswith(".") and entry.name.endswith(TMP_SUFFIX) and entry.is_file()]
    except (FileNotFoundError, NotADirectoryError):
        return []


def _read_intent(pending: Path) -> VersionRecord | None:
    try:
        return VersionRecord.from_json(json.loads(pending.read_bytes()))
    except FileNotFoundError:
        return None
    except (ValueError, TypeError):
        return None


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
