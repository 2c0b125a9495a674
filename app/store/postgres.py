"""The PostgreSQL store: the same promises as the directory store, shared by any number of
replicas (``--store postgresql://...``).

- A new version is one transaction: the server's row is locked (``SELECT ... FOR UPDATE``),
  the commit lands only if its ``last_version`` is the one the new version follows (else
  VersionConflict: the service reads again), the version row is inserted (immutable: a
  trigger refuses UPDATE, DELETE and TRUNCATE), the row's ``seq`` grows and a NOTIFY names
  the server and that seq. Two servers never wait on each other; two writers of one server
  are serialised by the database, not by this process.
- Each replica caches current locks (parsed) and live reports in memory. A read through
  :meth:`current` or :meth:`live` checks its entry with one small query (the server's
  ``last_version`` / ``live_seq``): a lock or report accepted by any replica is served by every
  other one at once, and a lock text is parsed once per version. The awareness hot path
  (:meth:`live_if_cached`) does not query: its entries are dropped when a NOTIFY for the server
  arrives on a dedicated LISTEN connection (milliseconds after the commit). While that
  connection is down nothing is served from memory; when it comes back the cache starts empty,
  so a notification missed meanwhile cannot leave a stale entry; an entry read with an older
  counter than one already notified is never kept.
- The database unreachable, or the connection lost during a request, is StoreUnavailable
  (503); ``unready`` says so and clears by itself when the database is back.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool, PoolTimeout

from app.lockfile import check_server_name
from app.model import Surface
from app.store import pgschema
from app.store.base import REFUSED_KEPT, LockStore
from app.store.records import (
    CorruptLockfile,
    LiveRecord,
    RefusedAttempt,
    StoredLock,
    StoreUnavailable,
    UnknownVersion,
    VersionConflict,
    VersionRecord,
    verified_lock_surface,
)

log = logging.getLogger("mcp_governance.store")

STATEMENT_TIMEOUT_MS = 10_000
"""No request waits on the database longer than this (then 503), never a hang."""
CONNECT_TIMEOUT = 3
LISTEN_POLL_SECONDS = 5.0
"""How often an idle listener looks at ``_closed`` by itself (a safety net: :meth:`close`
wakes it at once with a notification on its own stop channel)."""
APPLICATION_NAME = "mcp-governance"
POOL_WAIT = 5.0


@dataclass(frozen=True)
class _Entry:
    seq: int
    epoch: int
    value: Any


class PostgresStore(LockStore):
    def __init__(self, dsn: str, summarize: Any = None, *, min_size: int = 1, max_size: int = 8,
                 listen: bool = True, check_schema: bool = True) -> None:
        self.dsn = dsn
        self._closed = False
        self._cache: dict[tuple[str, str], _Entry] = {}
        self._seen: dict[tuple[str, str], int] = {}
        self._cache_lock = threading.Lock()
        self._local = threading.local()
        self._epoch = 0
        self._listening = False
        try:
            with psycopg.connect(dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT) as conn:
                if check_schema:
                    pgschema.check(conn)
                row = conn.execute("SELECT current_schema()").fetchone()
        except psycopg.Error as exc:
            raise StoreUnavailable(f"cannot reach the database: {_one_line(exc)}") from None
        self.channel = f"mcp_governance_{row[0] if row else 'public'}"
        self._stop_channel = f"mcp_governance_stop_{uuid.uuid4().hex[:16]}"  # this store's own
        self.pool = ConnectionPool(dsn, min_size=min_size, max_size=max_size, timeout=POOL_WAIT, open=True,
                                   kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT,
                                           "application_name": APPLICATION_NAME},
                                   configure=_configure, name="mcp-governance")
        self._listener: threading.Thread | None = None
        if listen:
            self._listener = threading.Thread(target=self._listen_forever, name="mcp-governance-listen", daemon=True)
            self._listener.start()

    # -- connections ------------------------------------------------------------------

    @contextlib.contextmanager
    def _conn(self) -> Iterator[psycopg.Connection]:
        """A pooled connection; any loss of the database is StoreUnavailable (503)."""
        try:
            with self.pool.connection() as conn:
                yield conn
        except PoolTimeout:
            raise StoreUnavailable("the database is unreachable (no connection within "
                                   f"{POOL_WAIT:g} s)") from None
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            raise StoreUnavailable(f"the database connection failed: {_one_line(exc)}") from None
        except psycopg.errors.QueryCanceled:
            raise StoreUnavailable("the database did not answer in time") from None

    def close(self) -> None:
        """Stop the listener at once (a notification on its own channel wakes it) and the pool."""
        self._closed = True
        if self._listener is not None and self._listener.is_alive():
            with contextlib.suppress(psycopg.Error, PoolTimeout), self.pool.connection(timeout=1) as conn:
                conn.execute("SELECT pg_notify(%s, '')", (self._stop_channel,))
        self.pool.close()
        if self._listener is not None:
            self._listener.join(3)

    def unready(self) -> str | None:
        try:
            with self._conn() as conn:
                conn.execute("SELECT 1")
        except StoreUnavailable as exc:
            return str(exc)
        return None

    # -- the cache and its invalidation --------------------------------------------------

    def _cached(self, server: str, kind: str) -> _Entry | None:
        entry = self._cache.get((server, kind))
        if entry is None or not self._listening or entry.epoch != self._epoch:
            return None
        return entry

    def _keep(self, server: str, kind: str, seq: int, epoch: int, value: Any) -> None:
        """Cache a value read at ``seq`` unless a newer change was already notified."""
        with self._cache_lock:
            if epoch == self._epoch and seq < self._seen.get((server, kind.split("/", 1)[0]), 0):
                return  # a newer change was notified meanwhile
            entry = self._cache.get((server, kind))
            if entry is None or entry.epoch != epoch or entry.seq <= seq:
                self._cache[(server, kind)] = _Entry(seq, epoch, value)

    def _notified(self, payload: str) -> None:
        kind, _, rest = payload.partition(":")
        seq_text, _, server = rest.partition(":")
        try:
            seq = int(seq_text)
        except ValueError:
            return
        with self._cache_lock:
            key = (server, kind)
            self._seen[key] = max(self._seen.get(key, 0), seq)
            stale = [other for other in self._cache if other[0] == server and other[1].startswith("live")] \
                if kind == "live" else [key]
            for other in stale:
                entry = self._cache.get(other)
                if entry is not None and entry.seq < seq:
                    del self._cache[other]

    def _listen_forever(self) -> None:
        while not self._closed:
            try:
                with psycopg.connect(self.dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT,
                                     application_name=f"{APPLICATION_NAME} listen") as conn:
                    conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
                    conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self._stop_channel)))
                    with self._cache_lock:  # anything cached before may have missed a notification
                        self._epoch += 1
                        self._cache.clear()
                        self._seen.clear()
                        self._listening = True
                    while not self._closed:
                        for note in conn.notifies(timeout=LISTEN_POLL_SECONDS):
                            if note.channel == self._stop_channel:
                                break
                            self._notified(note.payload)
            except psycopg.Error as exc:
                if not self._closed:
                    log.warning("the cache invalidation connection failed (%s); reading through", _one_line(exc))
            finally:
                with self._cache_lock:
                    self._listening = False
                    self._cache.clear()
            if not self._closed:
                time.sleep(0.5)

    def listening(self) -> bool:
        """Whether cache invalidation is live (tests wait for it)."""
        return self._listening

    # -- reading --------------------------------------------------------------------

    @contextlib.contextmanager
    def snapshot(self, servers: list[str]) -> Iterator[None]:
        """One query for the counters and the instance reports of a page of servers; reads in
        this thread then check their cached entries against it instead of asking each time."""
        with self._conn() as conn:
            rows = conn.execute("SELECT name, last_version, live_seq FROM servers WHERE name = ANY(%s)",
                                (servers,)).fetchall()
            reports = conn.execute("SELECT server, record FROM live_reports WHERE server = ANY(%s) "
                                   "ORDER BY reported_at, seq", (servers,)).fetchall()
        found: dict[str, tuple[int, int, list[LiveRecord]]] = {name: (last, live, []) for name, last, live in rows}
        for server, record in reports:
            found[server][2].append(LiveRecord.from_json(json.loads(record)))
        self._local.snapshot = found
        try:
            yield
        finally:
            self._local.snapshot = None

    def _counters(self, server: str) -> tuple[int, int, list[LiveRecord]] | None:
        snap = getattr(self._local, "snapshot", None)
        return snap.get(server, (0, 0, [])) if snap is not None else None

    def servers(self) -> list[str]:
        with self._conn() as conn:
            rows = conn.execute("SELECT name FROM servers s WHERE last_version > 0 OR EXISTS "
                                "(SELECT 1 FROM live_reports l WHERE l.server = s.name) ORDER BY name").fetchall()
        return [row[0] for row in rows]

    def change_key(self, server: str) -> object:
        return self.change_keys().get(server)

    def change_keys(self) -> dict[str, object]:
        with self._conn() as conn:
            rows = conn.execute("SELECT name, last_version, live_seq FROM servers").fetchall()
        return {name: (version, live) for name, version, live in rows}

    def current(self, server: str) -> StoredLock | None:
        """One small read (the server's last version) checks the cached copy: a lock accepted
        by any replica is served at once; the lock text is fetched and parsed only when new."""
        epoch = self._epoch
        counters = self._counters(server)
        if counters is not None:
            entry = self._cache.get((server, "lock"))
            if counters[0] == 0:
                return None
            if entry is not None and entry.seq == counters[0]:
                if isinstance(entry.value, CorruptLockfile):
                    raise entry.value
                return entry.value
        with self._conn() as conn:
            row = conn.execute("SELECT last_version FROM servers WHERE name = %s", (server,)).fetchone()
            last = int(row[0]) if row else 0
            entry = self._cache.get((server, "lock"))
            if entry is not None and entry.seq == last:
                value = entry.value
            elif last == 0:
                value = None
            else:
                found = conn.execute("SELECT record, lock_text FROM versions WHERE server = %s AND version = %s",
                                     (server, last)).fetchone()
                value = None
                if found is not None:
                    try:
                        value = _stored(server, json.loads(found[0]), bytes(found[1]))
                    except CorruptLockfile as exc:
                        value = exc
                self._keep(server, "lock", last, epoch, value)
        if isinstance(value, CorruptLockfile):
            raise value
        return value

    def history(self, server: str) -> list[VersionRecord]:
        with self._conn() as conn:
            rows = conn.execute("SELECT record FROM versions WHERE server = %s ORDER BY version", (server,)).fetchall()
        return [VersionRecord.from_json(json.loads(row[0])) for row in rows]

    def version(self, server: str, number: int) -> StoredLock:
        with self._conn() as conn:
            row = conn.execute("SELECT record, lock_text FROM versions WHERE server = %s AND version = %s",
                               (server, number)).fetchone()
        if row is None:
            raise UnknownVersion(server, number)
        return _stored(server, json.loads(row[0]), bytes(row[1]))

    def live(self, server: str, instance: str | None = None) -> LiveRecord | None:
        """Checked like :meth:`current`, with the server's live-report counter."""
        kind = f"live/{instance}" if instance else "live"
        epoch = self._epoch
        counters = self._counters(server)
        if counters is not None:
            if counters[1] == 0:
                return None
            entry = self._cache.get((server, kind))
            if entry is not None and entry.seq == counters[1]:
                return entry.value
        with self._conn() as conn:
            row = conn.execute("SELECT live_seq FROM servers WHERE name = %s", (server,)).fetchone()
            if row is None or row[0] == 0:
                return None
            seq = int(row[0])
            entry = self._cache.get((server, kind))
            if entry is not None and entry.seq == seq:
                return entry.value
            if instance:
                found = conn.execute("SELECT s.live_seq, l.record FROM servers s, live_reports l WHERE s.name = %s "
                                     "AND l.server = s.name AND l.instance = %s", (server, instance)).fetchone()
            else:
                found = conn.execute("SELECT s.live_seq, l.record FROM servers s, live_reports l WHERE s.name = %s "
                                     "AND l.server = s.name ORDER BY l.reported_at DESC, l.seq DESC LIMIT 1",
                                     (server,)).fetchone()
        value = LiveRecord.from_json(json.loads(found[1])) if found is not None else None
        self._keep(server, kind, int(found[0]) if found is not None else seq, epoch, value)
        return value

    def live_if_cached(self, server: str, instance: str | None = None) -> LiveRecord | None:
        entry = self._cached(server, f"live/{instance}" if instance else "live")
        return entry.value if entry is not None else None

    def live_reports(self, server: str) -> list[LiveRecord]:
        counters = self._counters(server)
        if counters is not None:
            return list(counters[2])
        with self._conn() as conn:
            rows = conn.execute("SELECT record FROM live_reports WHERE server = %s ORDER BY reported_at, seq",
                                (server,)).fetchall()
        return [LiveRecord.from_json(json.loads(row[0])) for row in rows]

    def refused(self, server: str) -> list[RefusedAttempt]:
        with self._conn() as conn:
            rows = conn.execute("SELECT record FROM refused_attempts WHERE server = %s "
                                "ORDER BY attempted_at DESC, id DESC", (server,)).fetchall()
        return [RefusedAttempt.from_json(json.loads(row[0])) for row in rows]

    # -- writing --------------------------------------------------------------------

    def _bump(self, conn: psycopg.Connection, server: str, kind: str, last_version: int | None = None) -> int:
        """Count the change and NOTIFY every replica (delivered when the transaction commits)."""
        if kind == "lock":
            row = conn.execute("UPDATE servers SET seq = seq + 1, last_version = %s WHERE name = %s "
                               "RETURNING last_version", (last_version, server)).fetchone()
        elif kind == "live":
            row = conn.execute("UPDATE servers SET seq = seq + 1, live_seq = live_seq + 1 WHERE name = %s "
                               "RETURNING live_seq", (server,)).fetchone()
        else:
            row = conn.execute("UPDATE servers SET seq = seq + 1 WHERE name = %s RETURNING seq", (server,)).fetchone()
        assert row is not None
        conn.execute("SELECT pg_notify(%s, %s)", (self.channel, f"{kind}:{row[0]}:{server}"))
        return int(row[0])

    def commit_version(self, record: VersionRecord, text: bytes, surface: Surface | None = None) -> None:
        server = check_server_name(record.server, "server")
        epoch = self._epoch
        with self._conn() as conn, conn.transaction():
            conn.execute("INSERT INTO servers (name) VALUES (%s) ON CONFLICT DO NOTHING", (server,))
            row = conn.execute("SELECT last_version FROM servers WHERE name = %s FOR UPDATE", (server,)).fetchone()
            last = int(row[0]) if row else 0
            if record.version != last + 1:
                raise VersionConflict(server, record.version - 1, last)
            conn.execute("INSERT INTO versions (server, version, integrity_digest, record, lock_text) "
                         "VALUES (%s, %s, %s, %s, %s)",
                         (server, record.version, record.integrity_digest, _dumps(record.to_json()), text))
            seq = self._bump(conn, server, "lock", record.version)
        if surface is not None:
            self._keep(server, "lock", seq, epoch, StoredLock(record, surface, text))

    def import_version(self, record: VersionRecord, text: bytes) -> None:
        """Load an exported version as it was (its number, identities, timestamps)."""
        self.commit_version(record, text)

    def save_live(self, record: LiveRecord, expired_before: str | None = None) -> None:
        server = check_server_name(record.server, "server")
        instance = record.instance or ""
        epoch = self._epoch
        with self._conn() as conn, conn.transaction():
            conn.execute("INSERT INTO servers (name) VALUES (%s) ON CONFLICT DO NOTHING", (server,))
            conn.execute("SELECT 1 FROM servers WHERE name = %s FOR UPDATE", (server,))
            seq = self._bump(conn, server, "live")
            conn.execute("INSERT INTO live_reports (server, instance, reported_at, record, seq) "
                         "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (server, instance) DO UPDATE SET "
                         "reported_at = excluded.reported_at, record = excluded.record, seq = excluded.seq",
                         (server, instance, record.reported_at, _dumps(record.to_json()), seq))
            if expired_before is not None:  # instances not heard from: deleted, not only hidden
                conn.execute("DELETE FROM live_reports WHERE server = %s AND instance NOT IN ('', %s) "
                             "AND reported_at < %s", (server, instance, expired_before))
        self._keep(server, "live", seq, epoch, record)  # the server's last report, whichever instance
        if instance:
            self._keep(server, f"live/{instance}", seq, epoch, record)

    def save_refused(self, attempt: RefusedAttempt) -> None:
        server = check_server_name(attempt.server, "server")
        with self._conn() as conn, conn.transaction():
            conn.execute("INSERT INTO servers (name) VALUES (%s) ON CONFLICT DO NOTHING", (server,))
            conn.execute("SELECT 1 FROM servers WHERE name = %s FOR UPDATE", (server,))
            conn.execute("INSERT INTO refused_attempts (server, id, attempted_at, record) VALUES (%s, %s, %s, %s) "
                         "ON CONFLICT (server, id) DO UPDATE SET attempted_at = excluded.attempted_at, "
                         "record = excluded.record",
                         (server, attempt.id, attempt.attempted_at, _dumps(attempt.to_json())))
            conn.execute("DELETE FROM refused_attempts WHERE server = %s AND id NOT IN (SELECT id FROM "
                         "refused_attempts WHERE server = %s ORDER BY attempted_at DESC, id DESC LIMIT %s)",
                         (server, server, REFUSED_KEPT))
            self._bump(conn, server, "refused")


def _configure(conn: psycopg.Connection) -> None:
    conn.execute(f"SET statement_timeout = {STATEMENT_TIMEOUT_MS}")
    conn.execute(f"SET lock_timeout = {STATEMENT_TIMEOUT_MS}")


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _stored(server: str, record: dict[str, Any], text: bytes) -> StoredLock:
    version = VersionRecord.from_json(record)
    where = f"{server} version {version.version}"
    surface = verified_lock_surface(server, text, where)
    if surface.integrity_digest != version.integrity_digest:
        raise CorruptLockfile(server, f"{where}: the lock text does not have the recorded digest")
    return StoredLock(version, surface, text)


__all__ = ["PostgresStore"]
