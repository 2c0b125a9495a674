"""The directory store: numbered immutable versions, an append-only audit log, crash
recovery, and lockfiles committed by hand."""

from __future__ import annotations

import json
import threading
from itertools import pairwise
from pathlib import Path

import pytest

from app import load_surface, write_surface
from app.store import CorruptLockfile, FileStore, UnknownVersion, VersionConflict, VersionRecord
from app.store.atomic import write_atomic

STAMP = "2026-11-30T00:00:00Z"


def surface(description: str = "Fetch one invoice", server: str = "billing"):
    return load_surface({"tools": [{"name": "get_invoice", "description": description,
                                    "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}}}]},
                        server=server)


def lock(store: FileStore, s, who: str = "ci") -> VersionRecord:
    """Commit ``s`` as the next version, reading again when another writer got there first."""
    while True:
        history = store.history(s.server)
        last = history[-1] if history else None
        record = VersionRecord(server=s.server, version=(last.version + 1) if last else 1,
                               integrity_digest=s.integrity_digest,
                               previous_digest=last.integrity_digest if last else None,
                               locked_at=STAMP, who=who)
        try:
            store.commit_version(record, write_surface(s, STAMP).encode())
        except VersionConflict:
            continue
        return record


def test_versions_history_and_current(tmp_path: Path):
    store = FileStore(tmp_path)
    assert store.current("billing") is None
    one, two = surface("v1"), surface("v2")
    lock(store, one)
    lock(store, two, who="alice")
    current = store.current("billing")
    assert current.record.version == 2 and current.record.who == "alice"
    assert current.surface.integrity_digest == two.integrity_digest
    assert (tmp_path / "billing.lock.toml").read_bytes() == current.text
    assert [r.version for r in store.history("billing")] == [1, 2]
    assert store.history("billing")[1].previous_digest == one.integrity_digest
    assert store.version("billing", 1).surface.integrity_digest == one.integrity_digest
    with pytest.raises(UnknownVersion):
        store.version("billing", 3)
    assert store.servers() == ["billing"]


def test_a_lockfile_committed_by_hand_is_adopted(tmp_path: Path):
    store = FileStore(tmp_path, summarize=lambda prev, new: ({"COSMETIC": 1}, "COSMETIC"))
    lock(store, surface("v1"))
    store.current("billing")
    (tmp_path / "billing.lock.toml").write_text(write_surface(surface("hand edit via re-lock"), STAMP))
    current = store.current("billing")
    assert current.record.version == 2
    assert current.record.source == "directory"
    assert current.record.summary == {"COSMETIC": 1}
    assert store.version("billing", 2).text == current.text
    # A brand-new server committed by hand becomes version 1.
    (tmp_path / "payments.lock.toml").write_text(write_surface(surface(server="payments"), STAMP))
    assert store.current("payments").record.version == 1
    assert store.servers() == ["billing", "payments"]


def test_a_hand_edited_lockfile_is_corrupt_and_not_served(tmp_path: Path):
    store = FileStore(tmp_path)
    lock(store, surface("v1"))
    path = tmp_path / "billing.lock.toml"
    path.write_text(path.read_text().replace('description = "v1"', 'description = "sneaky"'))
    with pytest.raises(CorruptLockfile, match="digest"):
        store.current("billing")
    assert [r.version for r in store.history("billing")] == [1]  # not adopted


def test_a_lockfile_for_another_server_is_corrupt(tmp_path: Path):
    store = FileStore(tmp_path)
    (tmp_path / "billing.lock.toml").write_text(write_surface(surface(server="payments"), STAMP))
    with pytest.raises(CorruptLockfile, match="names server 'payments'"):
        store.current("billing")


def _crash_after(store: FileStore, s, step: str) -> VersionRecord:
    """Replay append_version up to a step, as if the writer were killed there."""
    history = store.history(s.server)
    last = history[-1]
    record = VersionRecord(server=s.server, version=last.version + 1, integrity_digest=s.integrity_digest,
                           previous_digest=last.integrity_digest, locked_at=STAMP, who="killed")
    text = write_surface(s, STAMP).encode()
    write_atomic(store._version_path(s.server, record.version), text)
    write_atomic(store._pending(s.server), json.dumps(record.to_json()).encode())
    if step == "audit":
        store._append_audit(record)
    return record


def test_crash_after_the_commit_point_is_finished(tmp_path: Path):
    store = FileStore(tmp_path)
    lock(store, surface("v1"))
    _crash_after(store, surface("v2"), "audit")
    current = store.current("billing")
    assert current.record.version == 2
    assert current.surface.integrity_digest == surface("v2").integrity_digest
    assert not store._pending("billing").exists()


def test_crash_before_the_commit_point_is_discarded(tmp_path: Path):
    store = FileStore(tmp_path)
    lock(store, surface("v1"))
    _crash_after(store, surface("v2"), "version")
    current = store.current("billing")
    assert current.record.version == 1
    assert not store._version_path("billing", 2).exists()
    assert lock(store, surface("v3")).version == 2


def test_a_torn_audit_line_is_ignored_and_never_glued(tmp_path: Path):
    store = FileStore(tmp_path)
    lock(store, surface("v1"))
    with store._audit("billing").open("ab") as handle:
        handle.write(b'{"server": "billing", "vers')
    assert [r.version for r in store.history("billing")] == [1]
    lock(store, surface("v2"))
    assert [r.version for r in store.history("billing")] == [1, 2]


def test_concurrent_writers_get_contiguous_versions(tmp_path: Path):
    store = FileStore(tmp_path)
    errors: list[BaseException] = []

    def writer(index: int) -> None:
        try:
            lock(FileStore(tmp_path), surface(f"v{index}"), who=f"w{index}")
        except BaseException as exc:  # noqa: BLE001  # pragma: no cover - any failure in a thread is reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    history = store.history("billing")
    assert [r.version for r in history] == list(range(1, 17))
    for previous, record in pairwise(history):
        assert record.previous_digest == previous.integrity_digest
    assert store.current("billing").record.version == 16


def test_live_reports_survive_a_new_store_object(tmp_path: Path):
    from app.store import LiveRecord

    store = FileStore(tmp_path)
    record = LiveRecord(server="billing", reported_at=STAMP, live_digest="sha256:x", surface_document={},
                        lock_version=None, lock_digest=None, locked_at=None, result=None)
    store.save_live(record)
    assert FileStore(tmp_path).live("billing") == record
    assert store.servers() == ["billing"]


def test_ready(tmp_path: Path):
    assert FileStore(tmp_path).ready()
    (tmp_path / "file.txt").write_text("not a directory")
    assert not FileStore(tmp_path / "file.txt" / "sub").ready()
