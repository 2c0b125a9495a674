"""The store interface the service is written against.

Two implementations: the ``lockfiles/`` directory (:mod:`app.store.filesystem`, the embedded
default) and PostgreSQL (:mod:`app.store.postgres`, for replicas). Concurrency is per server:
there is no store-wide lock. Reads never wait for a writer. A new version is a conditional
commit (:meth:`LockStore.commit_version`): it lands only when the server's last version is
still the one it follows, else :class:`~app.store.records.VersionConflict` and the service
reads again. Two writers of one server are serialised by the store (a file lock per server,
a row lock in the database), never by a lock of the calling process.
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Iterator

from app.model import Surface
from app.store.records import LiveRecord, RefusedAttempt, StoredLock, VersionRecord

REFUSED_KEPT = 20
"""Refused attempts kept per server: enough for the releases waiting on a review, bounded
because each one holds a whole surface."""


class LockStore(ABC):
    read_only: bool = False
    """True when the store takes no writes (writes raise StoreReadOnly: 503)."""

    def startup(self) -> None:  # noqa: B027 - optional hook
        """Called once before serving: clean what a killed writer left (never blocks on a writer
        of another process for long, never parses every lock)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections and threads."""

    @abstractmethod
    def servers(self) -> list[str]:
        """Every server with a lock, a history or a live report, sorted."""

    @abstractmethod
    def current(self, server: str) -> StoredLock | None:
        """The current lock, verified; None when the server has none.
        Raises CorruptLockfile when the stored lock does not verify."""

    @abstractmethod
    def history(self, server: str) -> list[VersionRecord]:
        """Every accepted version, oldest first (the audit log)."""

    @abstractmethod
    def version(self, server: str, number: int) -> StoredLock:
        """One accepted version. Raises UnknownVersion."""

    @abstractmethod
    def commit_version(self, record: VersionRecord, text: bytes, surface: Surface | None = None) -> None:
        """Make ``text`` the new current lock, numbered ``record.version``, if and only if the
        server's last version is ``record.version - 1`` (0: none); else raise VersionConflict
        and change nothing. Durable when it returns. ``surface``, when given, is what ``text``
        reads back as: a store may keep it instead of parsing the text again."""

    @abstractmethod
    def live(self, server: str, instance: str | None = None) -> LiveRecord | None:
        """The last live surface the server reported (any instance), with its diff; with
        ``instance``, the last one that instance reported."""

    @abstractmethod
    def live_reports(self, server: str) -> list[LiveRecord]:
        """Every kept live report of the server, one per instance (and one for reports that
        named no instance), oldest first."""

    @abstractmethod
    def live_if_cached(self, server: str, instance: str | None = None) -> LiveRecord | None:
        """The live record when it is already in memory and still current; None when only
        :meth:`live` can tell (reading it is I/O the awareness hot path does not do)."""

    @abstractmethod
    def save_live(self, record: LiveRecord, expired_before: str | None = None) -> None:
        """Keep a live report (durably: a restart keeps it), as its instance's last report and
        as the server's last report. ``expired_before`` (a stamp as ``utc_now`` writes it):
        delete, in the same write, every other named instance's report older than it (the
        instances not heard from: hidden once expired, gone at the server's next report)."""

    @abstractmethod
    def save_refused(self, attempt: RefusedAttempt) -> None:
        """Keep a refused lock attempt, replacing the one with the same ``id``; keep at most
        :data:`REFUSED_KEPT` per server (the newest)."""

    @abstractmethod
    def refused(self, server: str) -> list[RefusedAttempt]:
        """The server's kept refused attempts, newest first (whether still approvable is
        the service's question: it compares each attempt's base with the last version)."""

    @contextlib.contextmanager
    def snapshot(self, servers: list[str]) -> Iterator[None]:
        """Reads of these servers in this thread may share one look at the store (a page of the
        dashboard: one query on a database instead of several per server)."""
        yield

    def change_key(self, server: str) -> object:
        """A cheap value that changes whenever the server's lock or live report changes (None:
        unknown, treat as changed). The service's reconcile skips servers whose key is unchanged."""
        return None

    def change_keys(self) -> dict[str, object]:
        """:meth:`change_key` of every server at once (one query on a database)."""
        return {server: self.change_key(server) for server in self.servers()}

    @abstractmethod
    def unready(self) -> str | None:
        """None when the store can be read and written now; else one line saying why not
        (unreachable, read-only, full): /readyz answers 503 with it."""

    def ready(self) -> bool:
        return self.unready() is None
