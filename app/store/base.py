"""The store interface the service is written against.

The default implementation is the ``lockfiles/`` directory (:mod:`app.store.filesystem`);
a PostgreSQL store can implement the same methods later without the API changing.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import AbstractContextManager

from app.model import Surface
from app.store.records import LiveRecord, RefusedAttempt, StoredLock, VersionRecord

REFUSED_KEPT = 20
"""Refused attempts kept per server: enough for the releases waiting on a review, bounded
because each one holds a whole surface."""


class LockStore(ABC):
    @abstractmethod
    def exclusive(self) -> AbstractContextManager[None]:
        """Hold the store's write lock (across threads and processes). Re-entrant in a thread."""

    @abstractmethod
    def servers(self) -> list[str]:
        """Every server with a lock, a history or a live report, sorted."""

    @abstractmethod
    def current(self, server: str) -> StoredLock | None:
        """The current lock, verified; None when the server has none.
        Raises CorruptLockfile when the file on disk does not verify."""

    @abstractmethod
    def history(self, server: str) -> list[VersionRecord]:
        """Every accepted version, oldest first (the audit log)."""

    @abstractmethod
    def version(self, server: str, number: int) -> StoredLock:
        """One accepted version. Raises UnknownVersion."""

    @abstractmethod
    def append_version(self, record: VersionRecord, text: bytes, surface: Surface | None = None) -> None:
        """Make ``text`` the new current lock, numbered ``record.version``. Call under
        :meth:`exclusive`; durable when it returns. ``surface``, when given, is what
        ``text`` reads back as: a store may keep it instead of reading the file again."""

    @abstractmethod
    def live(self, server: str) -> LiveRecord | None:
        """The last live surface the server reported, with its diff."""

    @abstractmethod
    def live_if_cached(self, server: str) -> LiveRecord | None:
        """The live record when it is already in memory and still current; None when only
        :meth:`live` can tell (reading it is I/O the awareness hot path does not do)."""

    @abstractmethod
    def save_live(self, record: LiveRecord) -> None:
        """Keep a live report (durably: a restart keeps it)."""

    @abstractmethod
    def save_refused(self, attempt: RefusedAttempt) -> None:
        """Keep a refused lock attempt, replacing the one with the same ``id``; keep at most
        :data:`REFUSED_KEPT` per server (the newest). Call under :meth:`exclusive`."""

    @abstractmethod
    def refused(self, server: str) -> list[RefusedAttempt]:
        """The server's kept refused attempts, newest first (whether still approvable is
        the service's question: it compares each attempt's base with the last version)."""

    @abstractmethod
    def ready(self) -> bool:
        """Whether the store can be read and written."""
