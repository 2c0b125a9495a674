"""The store behind the API over time: a restart keeps locks and live results; a lockfile
committed by hand is adopted (or reported corrupt, never served); 16 concurrent writers
(threads, and real uvicorn worker processes) get contiguous versions and a consistent
audit log; a writer killed with SIGKILL mid-write leaves every acknowledged version
intact; a worker waiting for the store lock keeps answering."""

from __future__ import annotations

import fcntl
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

import app.service
from app import load_surface, write_surface
from app.store import FileStore
from tests.helpers_service import (
    TOKENS,
    V1,
    V1_SAFE,
    V2_BREAKING,
    api,
    assert_problem,
    bearer,
    clean_env,
    digest_of,
    lock,
    make_app,
    metric,
    numbered,
    read_json_lines,
    serve_process,
    uvicorn_thread,
)

STAMP = "2026-01-01T00:00:00Z"


def hand_written(value: dict, server: str = "billing") -> str:
    return write_surface(load_surface(value, server=server), STAMP)


# -- restart ----------------------------------------------------------------------------


def test_a_restart_keeps_locks_versions_and_live_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = tmp_path / "lockfiles"
    with api(root) as before:
        lock(before, V1, reason="first")
        lock(before, V2_BREAKING, approved_by="alice")
        before.put("/servers/billing/live", json=V1)
        section = before.get("/servers/billing/awareness", params={"tool": "get_invoice"}).text
        board = before.get("/dashboard").json()["servers"]
        history = before.get("/lockfiles/billing/versions").json()
        toml = before.get("/lockfiles/billing", headers={"Accept": "application/toml"}).content

    def refuse(*args, **kwargs):
        raise AssertionError("a restart must not diff again: the live result is kept")

    monkeypatch.setattr(app.service, "diff", refuse)
    with api(root) as after:
        assert after.get("/lockfiles/billing/versions").json() == history
        assert after.get("/lockfiles/billing", headers={"Accept": "application/toml"}).content == toml
        assert after.get("/dashboard").json()["servers"] == board
        assert board[0]["status"] == "drifted" and board[0]["maxSeverity"] is not None
        assert after.get("/servers/billing/awareness", params={"tool": "get_invoice"}).text == section
        assert after.post("/servers/billing/validation-error", json={
            "tool": "get_invoice", "arguments": {"id": 7}}).json()["valid"] is False
    monkeypatch.undo()
    with api(root) as again:  # and it still locks, idempotently
        assert lock(again, V2_BREAKING).status_code == 200
        assert lock(again, V1_SAFE, approved_by="bob").json()["version"] == 3


# -- lockfiles committed by hand --------------------------------------------------------


def test_a_lockfile_committed_by_hand_becomes_current_and_updates_the_live_drift(tmp_path: Path):
    root = tmp_path / "lockfiles"
    with api(root) as client:
        lock(client, V1)
        client.put("/servers/billing/live", json=V2_BREAKING)
        (root / "billing.lock.toml").write_text(hand_written(V2_BREAKING), encoding="utf-8")
        (root / "payments.lock.toml").write_text(hand_written(V1, "payments"), encoding="utf-8")
        # Picked up by whatever reads it first, the version routes included.
        first = client.get("/lockfiles/payments/versions/1", headers={"Accept": "application/toml"})
        assert first.status_code == 200 and first.text == hand_written(V1, "payments")
        assert [v["version"] for v in client.get("/lockfiles/billing/versions").json()] == [1, 2]
        current = client.get("/lockfiles/billing").json()["record"]
        assert (current["version"], current["source"]) == (2, "directory")
        assert current["integrity_digest"] == digest_of(V2_BREAKING)
        assert current["previous_digest"] == digest_of(V1) and current["locked_at"] == STAMP
        assert current["summary"]["BREAKING"] >= 1 and current["max_severity"] == "BREAKING"
        payments = client.get("/lockfiles/payments/versions").json()
        # A first version has no diff summary, whether locked by the API or committed by hand.
        assert [(v["version"], v["source"], v["summary"], v["max_severity"]) for v in payments] == [
            (1, "directory", {}, None)]
        assert client.get("/lockfiles/billing/versions").json()[0]["summary"] == {}
        rows = [row["server"] for row in client.get("/lockfiles").json()]
        assert rows == ["billing", "payments"]
        # The hand-committed lock is the base for the next one (idempotent against it).
        assert lock(client, V2_BREAKING).status_code == 200
    with api(root) as restarted:  # the start reconciles the live result with it
        row = restarted.get("/dashboard/servers/billing").json()["server"]
        assert (row["status"], row["version"], row["maxSeverity"]) == ("in-sync", 2, None)
        assert restarted.get("/servers/billing/awareness", params={"tool": "get_invoice"}).status_code == 204


@pytest.mark.parametrize("tamper", ["edited description", "other server", "not TOML", "5,000-digit number",
                                    "schema JSON broken"])
def test_a_lockfile_that_does_not_verify_is_reported_corrupt_and_never_served(tmp_path: Path, tamper: str):
    root = tmp_path / "lockfiles"
    with api(root) as client:
        lock(client, V1)
        lock(client, V1, server="payments")
        path = root / "billing.lock.toml"
        good = path.read_text(encoding="utf-8")
        bad = {
            "edited description": good.replace("Fetch one invoice", "Fetch every invoice"),
            "other server": hand_written(V1, "payments"),
            "not TOML": "this is [not toml",
            "5,000-digit number": good.replace('"type": "string"', '"maxLength": ' + "9" * 5000, 1),
            "schema JSON broken": good.replace('"type": "string"', '"type": "string",,', 1),
        }[tamper]
        assert bad != good
        path.write_text(bad, encoding="utf-8")
        problem = assert_problem(client.get("/lockfiles/billing"), 409, "lockfile_corrupt")
        assert problem["server"] == "billing"
        assert_problem(client.get("/lockfiles/billing", headers={"Accept": "application/toml"}), 409,
                       "lockfile_corrupt")
        assert_problem(client.post("/check", json={"server": "billing", "surface": V1}), 409, "lockfile_corrupt")
        rows = {row["server"]: row for row in client.get("/lockfiles").json()}
        assert rows["billing"]["status"] == "corrupt" and rows["billing"]["integrity_digest"] is None
        assert rows["payments"]["status"] == "locked"  # the others are still served
        assert client.get("/dashboard/servers/billing").json()["server"]["status"] == "corrupt"
        assert [v["version"] for v in client.get("/lockfiles/billing/versions").json()] == [1]  # not adopted
        assert client.get("/healthz").status_code == 200
        # Locking again replaces it.
        assert lock(client, V1).status_code == 201
        assert client.get("/lockfiles/billing").json()["record"]["version"] == 2


def test_an_unreadable_lockfile_is_reported_and_the_service_still_starts(tmp_path: Path):
    root = tmp_path / "lockfiles"
    with api(root) as client:
        lock(client, V1)
    (root / "weird.lock.toml").mkdir()  # a name the store reads, but no file
    (root / "empty.lock.toml").write_bytes(b"")
    with api(root) as client:  # the start reconciles every server: none may stop it
        rows = {row["server"]: row["status"] for row in client.get("/lockfiles").json()}
        assert rows == {"billing": "locked", "empty": "corrupt", "weird": "corrupt"}
        assert "cannot read" in assert_problem(client.get("/lockfiles/weird"), 409, "lockfile_corrupt")["detail"]
        assert client.get("/dashboard").status_code == 200
        assert lock(client, V1_SAFE).status_code == 201


# -- concurrent writers -----------------------------------------------------------------


def assert_consistent_store(root: Path, server: str, count: int, digests: set[str] | None = None) -> None:
    """Versions 1..count, each audit record chained to the one before, each version
    file verified with its digest, the current lock the last version."""
    store = FileStore(root)
    history = store.history(server)
    assert [record.version for record in history] == list(range(1, count + 1))
    assert history[0].previous_digest is None
    for previous, record in itertools.pairwise(history):
        assert record.previous_digest == previous.integrity_digest
    for record in history:
        assert store.version(server, record.version).surface.integrity_digest == record.integrity_digest
    current = store.current(server)
    assert current.record == history[-1]
    assert current.text == store.version(server, count).text
    lines = read_json_lines(root / ".store" / server / "audit.jsonl")
    assert len(lines) == count
    if digests is not None:
        assert {record.integrity_digest for record in history} == digests
    assert not (root / ".store" / server / "pending.json").exists()


def test_16_concurrent_lock_writers_in_threads_get_contiguous_versions(tmp_path: Path):
    root = tmp_path / "lockfiles"
    apps = [make_app(root) for _ in range(4)]  # four app instances (as four workers would) on one directory
    results: list[tuple[int, dict]] = []
    barrier = threading.Barrier(16)

    def writer(index: int) -> None:
        with TestClient(apps[index % 4]) as client:
            barrier.wait()
            response = lock(client, numbered(index), approved_by="ci")
            results.append((response.status_code, response.json()))

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert [status for status, _ in results] == [201] * 16
    assert sorted(body["version"] for _, body in results) == list(range(1, 17))
    assert_consistent_store(root, "billing", 16, {digest_of(numbered(i)) for i in range(16)})


def test_16_concurrent_writers_against_real_uvicorn_workers(tmp_path: Path):
    """``python -m app serve --workers 2``: two processes on one directory, tokens from the
    environment, 16 threads locking at once. Also: no token in the server's log."""
    root = tmp_path / "lockfiles"
    root.mkdir()
    log = tmp_path / "serve.log"
    env = clean_env(MCP_GOVERNANCE_TOKENS=json.dumps([
        {"name": "pipeline", "token": TOKENS["approver"], "scopes": ["read", "lock", "approve", "report"]}]))
    with serve_process(root, log, workers=2, env=env) as url:
        barrier = threading.Barrier(16)
        results: list[tuple[int, dict]] = []

        def writer(index: int) -> None:
            with httpx.Client(base_url=url, headers=bearer("approver"), timeout=30) as http:
                barrier.wait()
                response = lock(http, numbered(index))
                results.append((response.status_code, response.json()))

        threads = [threading.Thread(target=writer, args=(i,)) for i in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert [status for status, _ in results] == [201] * 16, results
        assert sorted(body["version"] for _, body in results) == list(range(1, 17))
        with httpx.Client(base_url=url, timeout=10) as http:
            assert http.get("/lockfiles/billing").status_code == 401
            assert http.get("/lockfiles/billing", headers={"Authorization": "Bearer wrong-token-0123456789"}
                            ).status_code == 401
            served = http.get("/lockfiles/billing/versions", headers=bearer("approver")).json()
            assert [v["version"] for v in served] == list(range(1, 17))
            assert {v["who"] for v in served} == {"pipeline"}
            metrics = http.get("/metrics", headers=bearer("approver")).text
            assert metric(metrics, "mcp_governance_locks_total", outcome="created") == 16  # both workers
    assert_consistent_store(root, "billing", 16, {digest_of(numbered(i)) for i in range(16)})
    text = log.read_text(errors="replace")
    assert "Uvicorn running" in text and "AUTH IS OFF" not in text and 'POST /lock' in text
    assert TOKENS["approver"] not in text and "wrong-token-0123456789" not in text


def test_a_worker_waiting_for_a_server_lock_still_answers_reads_and_other_servers(tmp_path: Path):
    """Another process holds the write lock of one server: a lock of that server waits for
    it, while the same worker keeps serving /healthz, awareness, reads of that server and
    locks of any other server (the lock is per server; reads take none)."""
    root = tmp_path / "lockfiles"
    with uvicorn_thread(make_app(root)) as url, httpx.Client(base_url=url, timeout=5) as http:
        lock(http, V1)
        lock(http, V1, server="payments")
        http.put("/servers/billing/live", json=V2_BREAKING)
        fd = os.open(root / ".store" / "payments" / "lock", os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # as another worker mid-write would
            waiting: list[int] = []
            writer = threading.Thread(target=lambda: waiting.append(
                lock(http, V1_SAFE, server="payments").status_code))
            writer.start()
            time.sleep(0.3)
            assert writer.is_alive() and not waiting  # the lock waits ...
            fast = httpx.Client(base_url=url, timeout=2.0)
            assert fast.get("/healthz").status_code == 200  # ... the worker does not
            assert fast.get("/servers/billing/awareness", params={"tool": "get_invoice"}).status_code == 200
            assert fast.get("/lockfiles/payments").status_code == 200
            assert lock(fast, V1_SAFE).status_code == 201  # another server does not wait
            fast.close()
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        writer.join(10)
        assert waiting == [201]


# -- a writer killed with SIGKILL ---------------------------------------------------------

WRITER = r'''
import os, signal, sys, tempfile
from app import load_surface
from app.service import Governance, LockRequest, summarizer
from app.store import FileStore
import app.store.filesystem as filesystem

root, first, kill_at = sys.argv[1], int(sys.argv[2]), sys.argv[3]
gov = Governance(FileStore(root, summarize=summarizer(None)))
acked = 0


def die():
    os.kill(os.getpid(), signal.SIGKILL)


def step_name(path):
    if path.name == "pending.json":
        return "pending"
    return "version" if path.parent.name == "versions" else "current"


def hooked(name, real):
    # kill_at "<step>:<when>" applies from the second lock on (the first is acknowledged);
    # "torn" leaves half the bytes where a crash could: a temp file, or the audit log's end.
    def step(path, data):
        armed = acked >= 1
        if armed and kill_at == f"{name}:before":
            die()
        if armed and kill_at == f"{name}:torn":
            if name == "audit":
                fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            else:
                fd, _ = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            os.write(fd, data[: len(data) // 2])
            die()
        real(path, data)
        if armed and kill_at == f"{name}:after":
            die()
    return step


real_write, real_append = filesystem.write_atomic, filesystem.append_durable
filesystem.write_atomic = lambda path, data: hooked(step_name(path), real_write)(path, data)
filesystem.append_durable = lambda path, data: hooked("audit", real_append)(path, data)

index = first
while True:
    surface = load_surface({"tools": [{"name": "t", "description": f"revision {index}",
                                       "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}}}]},
                           server="billing")
    outcome = gov.lock("billing", surface, LockRequest(who="writer", approved_by="ci"))
    print("ACK", outcome.record.version, outcome.record.integrity_digest, flush=True)
    acked += 1
    index += 1
'''


def run_writer(script: Path, root: Path, first: int, kill_at: str, acks: dict[int, str]) -> None:
    """Start the writer; with ``random``, SIGKILL it a random moment after a few ACKs;
    otherwise it kills itself at the hooked step. Collect every ACK it printed."""
    process = subprocess.Popen([sys.executable, str(script), str(root), str(first), kill_at],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env())
    assert process.stdout is not None
    try:
        if kill_at == "random":
            wanted = random.randint(2, 6)
            while wanted:
                line = process.stdout.readline()
                assert line.startswith("ACK"), (line, process.stderr.read() if process.poll() is not None else "")
                _, version, digest = line.split()
                acks[int(version)] = digest
                wanted -= 1
            time.sleep(random.uniform(0, 0.02))
            process.send_signal(signal.SIGKILL)
        rest, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == -signal.SIGKILL, err
    for line in rest.splitlines():
        _, version, digest = line.split()
        acks[int(version)] = digest


def assert_survived(root: Path, acks: dict[int, str]) -> int:
    """A fresh store reads; every acknowledged version is there with its digest; the
    current lock verifies and is the last version; returns the number of versions."""
    store = FileStore(root)
    current = store.current("billing")
    history = store.history("billing")
    versions = [record.version for record in history]
    assert versions == list(range(1, len(versions) + 1))
    for version, digest in acks.items():
        assert store.version("billing", version).surface.integrity_digest == digest
        assert history[version - 1].integrity_digest == digest
    assert current is not None and current.record == history[-1]
    assert current.surface.integrity_digest == history[-1].integrity_digest
    assert not (root / ".store" / "billing" / "pending.json").exists()
    for previous, record in itertools.pairwise(history):
        assert record.previous_digest == previous.integrity_digest
    return len(versions)


def test_a_writer_killed_at_random_moments_leaves_every_acknowledged_version(tmp_path: Path):
    root = tmp_path / "lockfiles"
    script = tmp_path / "writer.py"
    script.write_text(WRITER, encoding="utf-8")
    acks: dict[int, str] = {}
    for round_ in range(5):
        run_writer(script, root, round_ * 1000, "random", acks)
        count = assert_survived(root, acks)
        assert count >= max(acks)
    with api(root) as client:  # the API reads it and a new lock still works
        served = client.get("/lockfiles/billing").json()["record"]
        assert served["version"] == count
        created = lock(client, numbered(99_999), approved_by="ci")
        assert created.status_code == 201 and created.json()["version"] == count + 1
    assert_survived(root, acks)


@pytest.mark.parametrize("kill_at", [
    "version:before", "version:torn", "version:after", "pending:torn", "pending:after", "audit:before",
    "audit:torn", "audit:after", "current:before", "current:torn", "current:after",
])
def test_a_writer_killed_at_each_step_of_a_write_leaves_a_readable_store(tmp_path: Path, kill_at: str):
    """Killed during its second lock at the named step: the first lock (acknowledged)
    is intact; the second is there in full if its audit line landed, else not at all."""
    root = tmp_path / "lockfiles"
    script = tmp_path / "writer.py"
    script.write_text(WRITER, encoding="utf-8")
    acks: dict[int, str] = {}
    run_writer(script, root, 0, kill_at, acks)
    assert list(acks) == [1]
    count = assert_survived(root, acks)
    committed = kill_at in ("audit:after", "current:before", "current:torn", "current:after")
    assert count == (2 if committed else 1)
    store = FileStore(root)
    if committed:
        assert store.current("billing").surface.integrity_digest == digest_of(
            {"tools": [{"name": "t", "description": "revision 1",
                        "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}}}]})
    with api(root) as client:
        assert client.get("/lockfiles/billing").json()["record"]["version"] == count
        assert lock(client, numbered(7), approved_by="ci").json()["version"] == count + 1
    assert_survived(root, acks)
