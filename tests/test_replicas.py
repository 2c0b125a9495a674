"""Replicas: real ``mcp-governance serve`` processes on different ports over one PostgreSQL
schema. A lock through A is served by B at once; awareness on B (its hot path) follows a live
report accepted by A; 16 concurrent writers spread over both give versions 1..16 and 16 audit
lines; kill -9 of a replica in the middle of writes loses no acknowledged lock; a database
outage under load gives 503 problem+json (never a 500 or a hang), /readyz fails meanwhile, and
both replicas recover by themselves with nothing lost.

The outage is simulated inside the test database (the server is shared by other test
processes, so it is not restarted): connections to it are refused (``ALLOW_CONNECTIONS
false``) and every open one is terminated (``pg_terminate_backend``), which is what a
restart looks like from the service; then connections are allowed again."""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.helpers_service import V1, V2_BREAKING, digest_of, lock, numbered, serve_started
from tests.stores import PG_ADMIN_URL, database_url, fresh_schema_url

pytestmark = pytest.mark.postgres_store


@pytest.fixture
def store_backend() -> str:  # this module is PostgreSQL only: a reason to skip comes from pg_url
    return "pg"


@pytest.fixture
def pg_url() -> str:
    from tests.stores import pg_unavailable

    reason = pg_unavailable()
    if reason:
        pytest.skip(f"PostgreSQL replica tests skipped: {reason}")
    return fresh_schema_url()


@contextlib.contextmanager
def replica(url: str, log: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A ``serve`` replica over the database ``url``, ready when /readyz says so."""
    with serve_started(["--store", url, "--log-level", "warning", "--no-access-log"], log,
                       ready="/readyz") as started:
        yield started


@pytest.fixture
def two(pg_url: str, tmp_path: Path) -> Iterator[tuple[httpx.Client, httpx.Client]]:
    with replica(pg_url, tmp_path / "a.log") as (a, _), replica(pg_url, tmp_path / "b.log") as (b, _), \
            httpx.Client(base_url=a, timeout=10) as ca, httpx.Client(base_url=b, timeout=10) as cb:
        yield ca, cb


def test_a_lock_through_a_is_served_by_b_at_once(two: tuple[httpx.Client, httpx.Client]):
    a, b = two
    assert lock(a, V1).status_code == 201
    served = b.get("/lockfiles/billing", headers={"Accept": "application/toml"})
    assert served.status_code == 200 and served.headers["etag"] == f'"{digest_of(V1)}"'
    assert served.content == a.get("/lockfiles/billing", headers={"Accept": "application/toml"}).content
    assert lock(b, V1).status_code == 200  # idempotent on the other replica
    assert lock(b, V2_BREAKING).status_code == 409  # and the approval rule is the same
    assert lock(a, V1, headers={"If-Match": '"sha256:stale"'}).status_code == 412


@pytest.mark.slow  # the dev profile keeps the first lock and the 16 writers; this runs in the ci profile
def test_awareness_on_b_follows_a_live_report_accepted_by_a(two: tuple[httpx.Client, httpx.Client]):
    a, b = two
    assert lock(a, V1).status_code == 201
    assert b.put("/servers/billing/live", json=V1).status_code == 200
    url = "/servers/billing/awareness"
    for _ in range(3):  # warm B's cache: the hot path answers
        quiet = b.get(url, params={"tool": "get_invoice"})
    assert quiet.status_code == 204 and quiet.headers.get("x-awareness-path") == "hot"
    assert a.put("/servers/billing/live", json=V2_BREAKING).status_code == 200
    accepted = time.monotonic()
    while True:
        answer = b.get(url, params={"tool": "get_invoice"})
        if answer.status_code == 200:
            break
        # A liveness bound, not a speed claim: NOTIFY arrives in milliseconds; only a cache
        # that waited for a poll or an expiry would still serve the old report after 10 s.
        assert time.monotonic() - accepted < 10.0, "B kept serving the old live report"
        time.sleep(0.005)
    assert "<contract_awareness>" in answer.text and "currency" in answer.text
    again = b.get(url, params={"tool": "get_invoice"})
    assert again.text == answer.text and again.headers.get("x-awareness-path") == "hot"


def _history(client: httpx.Client, server: str = "billing") -> list[dict[str, object]]:
    response = client.get(f"/lockfiles/{server}/versions")
    assert response.status_code == 200, response.text
    return response.json()


def test_16_concurrent_writers_over_both_replicas_get_versions_1_to_16(two: tuple[httpx.Client, httpx.Client]):
    a, b = two
    statuses: list[int] = []
    barrier = threading.Barrier(16)

    def writer(index: int) -> None:
        client = a if index % 2 else b
        barrier.wait()
        statuses.append(lock(client, numbered(index), commit=f"writer {index}").status_code)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert statuses == [201] * 16
    history = _history(b)
    assert [record["version"] for record in history] == list(range(1, 17))
    assert sorted(str(record["commit"]) for record in history) == sorted(f"writer {i}" for i in range(16))
    assert len({record["integrity_digest"] for record in history}) == 16
    assert _history(a) == history


@pytest.mark.slow  # the dev profile keeps the first lock and the 16 writers; this runs in the ci profile
def test_kill_9_of_a_replica_mid_writes_loses_no_acknowledged_lock(pg_url: str, tmp_path: Path):
    with replica(pg_url, tmp_path / "a.log") as (a_url, _), replica(pg_url, tmp_path / "c.log") as (c_url, victim):
        acknowledged: list[str] = []
        stop = threading.Event()

        def writer(offset: int) -> None:
            with httpx.Client(base_url=c_url, timeout=10) as client:
                index = offset
                while not stop.is_set():
                    index += 4
                    try:
                        response = lock(client, numbered(index), server="killed")
                    except httpx.HTTPError:
                        return  # the replica is gone
                    if response.status_code == 201:
                        acknowledged.append(response.json()["integrity_digest"])

        threads = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 20
        while len(acknowledged) < 12 and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(10)
        stop.set()
        for thread in threads:
            thread.join(15)
        assert len(acknowledged) >= 12
        with httpx.Client(base_url=a_url, timeout=10) as a:
            history = _history(a, "killed")
            assert [record["version"] for record in history] == list(range(1, len(history) + 1))
            assert set(acknowledged) <= {record["integrity_digest"] for record in history}
            assert lock(a, numbered(10_001), server="killed").json()["version"] == len(history) + 1


def _database_name() -> str:
    return database_url().rsplit("/", 1)[1]


def _outage(allowed: bool) -> None:
    import psycopg

    name = _database_name()
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS {"true" if allowed else "false"}')
        if not allowed:
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s "
                         "AND pid <> pg_backend_pid()", (name,))


@pytest.mark.slow  # the dev profile keeps the first lock and the 16 writers; this runs in the ci profile
def test_a_database_outage_under_load_is_503_then_recovers_with_nothing_lost(
        two: tuple[httpx.Client, httpx.Client]):
    a, b = two
    assert lock(a, V1).status_code == 201
    assert a.put("/servers/billing/live", json=V2_BREAKING).status_code == 200
    answers: list[tuple[str, int, str]] = []
    acknowledged: list[str] = []
    stop = threading.Event()

    def load(client: httpx.Client, offset: int) -> None:
        index = offset
        while not stop.is_set():
            index += 2
            surface = numbered(index)
            for method, call in (
                ("lock", functools.partial(lock, client, surface, server="load")),
                ("read", lambda: client.get("/lockfiles/billing")),
                ("dashboard", lambda: client.get("/dashboard")),
                ("live", lambda: client.put("/servers/billing/live", json=V2_BREAKING)),
            ):
                started = time.monotonic()
                response = call()
                assert time.monotonic() - started < 15, f"{method} hung"
                answers.append((method, response.status_code, response.headers.get("content-type", "")))
                if method == "lock" and response.status_code == 201:
                    acknowledged.append(response.json()["integrity_digest"])

    threads = [threading.Thread(target=load, args=(client, i)) for i, client in enumerate((a, b))]
    for thread in threads:
        thread.start()
    try:
        time.sleep(0.5)
        _outage(allowed=False)
        down_since = time.monotonic()
        while time.monotonic() - down_since < 3.0:
            _outage(allowed=False)  # also whatever reconnected in between
            time.sleep(0.3)
        assert a.get("/readyz").status_code == 503 and b.get("/readyz").status_code == 503
        outage_answers = len(answers)
    finally:
        _outage(allowed=True)
    deadline = time.monotonic() + 15
    while not (a.get("/readyz").status_code == 200 and b.get("/readyz").status_code == 200):
        assert time.monotonic() < deadline, "a replica did not recover by itself"
        time.sleep(0.1)
    time.sleep(1.0)
    stop.set()
    for thread in threads:
        thread.join(30)
    statuses = {status for _, status, _ in answers}
    assert 503 in statuses, "the outage was never seen"
    assert statuses <= {200, 201, 204, 503}, sorted(statuses)
    assert all(kind.startswith("application/problem+json") for _, status, kind in answers if status == 503)
    assert any(status in (200, 201) for _, status, _ in answers[outage_answers:]), "no success after recovery"
    history = _history(b, "load")
    assert [record["version"] for record in history] == list(range(1, len(history) + 1))
    assert set(acknowledged) <= {record["integrity_digest"] for record in history}
    assert b.get("/servers/billing/awareness", params={"tool": "get_invoice"}).status_code == 200
