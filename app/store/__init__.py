"""Where locks live: the interface (:class:`LockStore`) and the default directory store."""

from app.store.base import REFUSED_KEPT, LockStore
from app.store.filesystem import FileStore
from app.store.records import (
    CorruptLockfile,
    LiveRecord,
    RefusedAttempt,
    StoredLock,
    StoreError,
    StoreReadOnly,
    StoreUnavailable,
    UnknownVersion,
    VersionConflict,
    VersionRecord,
)

__all__ = [
    "REFUSED_KEPT",
    "CorruptLockfile",
    "FileStore",
    "LiveRecord",
    "LockStore",
    "RefusedAttempt",
    "StoreError",
    "StoreReadOnly",
    "StoreUnavailable",
    "StoredLock",
    "UnknownVersion",
    "VersionConflict",
    "VersionRecord",
]
