"""Where locks live: the interface (:class:`LockStore`) and the default directory store."""

from app.store.base import LockStore
from app.store.filesystem import FileStore
from app.store.records import CorruptLockfile, LiveRecord, StoredLock, StoreError, UnknownVersion, VersionRecord

__all__ = [
    "CorruptLockfile",
    "FileStore",
    "LiveRecord",
    "LockStore",
    "StoreError",
    "StoredLock",
    "UnknownVersion",
    "VersionRecord",
]
