"""Copy one store into another (``mcp-governance store export`` / ``import``): every version
with its audit record as it was (number, identities, timestamps, the exact lock text), the
live reports and the refused attempts. Idempotent: a version already in the target with the
same digest is skipped; one with another digest stops the copy (the stores have diverged)."""

from __future__ import annotations

from dataclasses import dataclass

from app.store.base import LockStore
from app.store.records import StoreError, UnknownVersion


class TransferConflict(StoreError):
    """The target already holds a different version under the same number."""


@dataclass
class Copied:
    servers: int = 0
    versions: int = 0
    skipped: int = 0
    live: int = 0
    refused: int = 0


def copy_store(source: LockStore, target: LockStore) -> Copied:
    counts = Copied()
    for server in source.servers():
        counts.servers += 1
        history = source.history(server)
        there = {record.version: record for record in target.history(server)}
        for record in history:
            existing = there.get(record.version)
            if existing is not None:
                if existing.integrity_digest != record.integrity_digest:
                    raise TransferConflict(f"{server}: version {record.version} differs in the target store "
                                           f"({existing.integrity_digest} there, {record.integrity_digest} here); "
                                           "nothing more was copied for it")
                counts.skipped += 1
                continue
            try:
                text = source.version(server, record.version).text
            except UnknownVersion:
                raise TransferConflict(f"{server}: version {record.version} is in the audit log but its lock "
                                       "text is missing in the source store") from None
            target.commit_version(record, text)
            counts.versions += 1
        for live in source.live_reports(server):
            target.save_live(live)
            counts.live += 1
        for attempt in reversed(source.refused(server)):
            target.save_refused(attempt)
            counts.refused += 1
    return counts
