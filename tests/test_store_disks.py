"""Read-only and full disks (issue 9, item 7): reads never take a write lock, a read-only
store serves reads and answers writes 503, readiness says when the store cannot write,
temp files a killed writer left are removed at the next start, and ``serve --workers N``
leaves no metrics directory behind.

The read-only and full-disk cases use a real read-only bind mount and a small tmpfs; they
need root (mount) and are skipped, with the reason, where mounting is not allowed."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app import load_surface, write_surface
from app.store import FileStore, VersionRecord
from app.store.atomic import write_atomic
from tests.helpers_service import V1, V1_SAFE, api, assert_problem, clean_env, lock, serve_process

STAMP = "2026-11-30T00:00:00Z"


def _mount(*args: str) -> str | None:
    """Run mount; the reason it failed, or None."""
    try:
        done = subprocess.run(["mount", *args], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    return None if done.returncode == 0 else (done.stderr.strip() or f"mount exited {done.returncode}")


def _umount(path: Path) -> None:
    subprocess.run(["umount", str(path)], capture_output=True, timeout=10, check=False)


@pytest.fixture
def read_only_store(tmp_path: Path) -> Iterator[Path]:
    """A store with a lock, a live report and a write killed after its commit point, then
    bind-mounted read-only."""
    source = tmp_path / "source"
    with api(source) as client:
        assert lock(client, V1).status_code == 201
        assert client.put("/servers/billing/live", json=V1_SAFE).status_code == 200
    store = FileStore(source)
    last = store.history("billing")[-1]
    safe = load_surface(V1_SAFE, server="billing")
    record = VersionRecord(server="billing", version=2, integrity_digest=safe.integrity_digest,
                           previous_digest=last.integrity_digest, locked_at=STAMP, who="killed")
    write_atomic(store._version_path("billing", 2), write_surface(safe, STAMP).encode())
    write_atomic(store._pending("billing"), json.dumps(record.to_json()).encode())
    store._append_audit(record)  # killed after the commit point: version 2 is acknowledged
    mounted = tmp_path / "ro"
    mounted.mkdir()
    problem = _mount("--bind", str(source), str(mounted))
    if problem is None:
        problem = _mount("-o", "remount,bind,ro", str(mounted))
        if problem is not None:
            _umount(mounted)
    if problem is not None:
        pytest.skip(f"cannot make a read-only bind mount here: {problem}")
    try:
        yield mounted
    finally:
        _umount(mounted)


def test_a_read_only_store_starts_serves_reads_and_answers_writes_503(read_only_store: Path):
    store = FileStore(read_only_store)
    assert store.read_only
    # The acknowledged version 2 is served although the write was never finished on disk.
    assert store.current("billing").record.version == 2
    with api(read_only_store) as client:
        assert client.get("/lockfiles/billing").json()["record"]["version"] == 2
        assert [v["version"] for v in client.get("/lockfiles/billing/versions").json()] == [1, 2]
        assert client.get("/dashboard").status_code == 200
        # The live report equals version 2: diffed against it (in memory), nothing to say.
        assert client.get("/servers/billing/awareness", params={"tool": "get_invoice"}).status_code == 204
        body = assert_problem(lock(client, V1), 503, "store_read_only")
        assert "read-only" in body["detail"]
        assert_problem(client.put("/servers/billing/live", json=V1), 503, "store_read_only")
        ready = assert_problem(client.get("/readyz"), 503, "store_unavailable")
        assert "read-only" in ready["detail"]


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A store on a 1 MiB tmpfs, with a lock, then filled to the last byte."""
    mounted = tmp_path / "small"
    mounted.mkdir()
    problem = _mount("-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mounted))
    if problem is not None:
        pytest.skip(f"cannot mount a small tmpfs here: {problem}")
    try:
        root = mounted / "lockfiles"
        with api(root) as client:
            assert lock(client, V1).status_code == 201
        fd = os.open(mounted / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 512):
                pass
        except OSError:
            pass  # full
        finally:
            os.close(fd)
        yield root
    finally:
        _umount(mounted)


def test_a_full_disk_is_not_ready_and_a_write_is_503_not_500(full_disk: Path):
    with api(full_disk) as client:
        body = assert_problem(client.get("/readyz"), 503, "store_unavailable")
        assert "cannot be written" in body["detail"]
        assert client.get("/lockfiles/billing").status_code == 200  # reads still work
        assert_problem(lock(client, V1_SAFE), 503)
        assert client.get("/lockfiles/billing").json()["record"]["version"] == 1  # nothing half-written


def test_reads_never_wait_for_a_write_lock(tmp_path: Path):
    """Every write lock held by another process: a fresh process's uncached reads still answer."""
    with api(tmp_path) as client:
        assert lock(client, V1).status_code == 201
        assert client.put("/servers/billing/live", json=V1_SAFE).status_code == 200
    held = []
    for path in (tmp_path / ".store" / "lock", tmp_path / ".store" / "billing" / "lock"):
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        held.append(fd)
    answers: list[object] = []

    def read() -> None:
        store = FileStore(tmp_path)
        answers.extend([store.current("billing").record.version, [r.version for r in store.history("billing")],
                        store.live("billing") is not None, store.version("billing", 1).record.version])

    try:
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(5)
        assert not reader.is_alive(), "an uncached read waited for a write lock"
        assert answers == [1, [1], True, 1]
    finally:
        for fd in held:
            os.close(fd)


def test_temp_files_a_killed_writer_left_are_removed_at_the_next_start(tmp_path: Path):
    with api(tmp_path) as client:
        assert lock(client, V1).status_code == 201
    left = [tmp_path / ".billing.lock.toml.k1ll3d.tmp", tmp_path / ".store" / "billing" / ".live.json.abc.tmp",
            tmp_path / ".store" / "billing" / "versions" / ".000002.lock.toml.xyz.tmp"]
    for path in left:
        path.write_bytes(b"half a write")
    kept = tmp_path / "notes.tmp"  # not a temp file of ours
    kept.write_text("mine")
    with api(tmp_path) as client:
        assert client.get("/readyz").status_code == 200
        assert [path for path in left if path.exists()] == []
        assert kept.exists()
        assert client.get("/lockfiles/billing").json()["record"]["version"] == 1


def test_serve_with_workers_leaves_no_metrics_directory(tmp_path: Path):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    root = tmp_path / "lockfiles"
    root.mkdir()
    with serve_process(root, tmp_path / "serve.log", workers=2, env=clean_env(TMPDIR=str(scratch))) as url:
        assert httpx.get(f"{url}/metrics", timeout=5).status_code == 200
        assert [p.name for p in scratch.iterdir() if p.name.startswith("mcp-governance-metrics-")]
    assert [p.name for p in scratch.iterdir() if p.name.startswith("mcp-governance-metrics-")] == []
