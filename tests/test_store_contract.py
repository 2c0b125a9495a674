"""The store contract, on both stores (``[dir]`` and ``[pg]``): conditional commits, gapless
immutable versions, the exact lock bytes, concurrent writers, live reports and refused attempts
that survive a new store object, export and import between stores. And the PostgreSQL schema:
migrations from an empty database, re-run as a no-op, a schema the service does not know."""

from __future__ import annotations

import threading
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app import load_surface, write_surface
from app.store import LiveRecord, LockStore, UnknownVersion, VersionConflict, VersionRecord
from app.store.select import open_store
from app.store.transfer import TransferConflict, copy_store
from tests.stores import fresh_schema_url, open_for, opened

pytestmark = pytest.mark.usefixtures("store_backend")
STAMP = "2026-11-30T00:00:00Z"


def surface(description: str = "Fetch one invoice", server: str = "billing"):
    return load_surface({"tools": [{"name": "get_invoice", "description": description,
                                    "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}}}]},
                        server=server)


def record_for(store: LockStore, s, who: str = "ci", version: int | None = None) -> VersionRecord:
    history = store.history(s.server)
    last = history[-1] if history else None
    return VersionRecord(server=s.server, version=version or ((last.version + 1) if last else 1),
                         integrity_digest=s.integrity_digest, previous_digest=last.integrity_digest if last else None,
                         locked_at=STAMP, who=who)


def lock(store: LockStore, s, who: str = "ci") -> VersionRecord:
    while True:
        record = record_for(store, s, who)
        try:
            store.commit_version(record, write_surface(s, STAMP).encode())
        except VersionConflict:
            continue
        return record


def test_versions_are_numbered_immutable_and_keep_their_bytes(tmp_path: Path):
    store = open_for(tmp_path)
    assert store.current("billing") is None and store.servers() == []
    one, two = surface("v1"), surface("v2")
    lock(store, one)
    lock(store, two, who="alice")
    current = store.current("billing")
    assert current is not None and current.record.version == 2 and current.record.who == "alice"
    assert current.text == write_surface(two, STAMP).encode()
    assert [r.version for r in store.history("billing")] == [1, 2]
    assert store.version("billing", 1).text == write_surface(one, STAMP).encode()
    with pytest.raises(UnknownVersion):
        store.version("billing", 3)
    assert store.servers() == ["billing"]


def test_a_commit_that_does_not_follow_the_last_version_changes_nothing(tmp_path: Path):
    store = open_for(tmp_path)
    lock(store, surface("v1"))
    stale = record_for(store, surface("v2"), version=1)
    with pytest.raises(VersionConflict):
        store.commit_version(stale, write_surface(surface("v2"), STAMP).encode())
    ahead = record_for(store, surface("v3"), version=3)
    with pytest.raises(VersionConflict):
        store.commit_version(ahead, write_surface(surface("v3"), STAMP).encode())
    assert [r.version for r in store.history("billing")] == [1]
    assert store.current("billing").surface.integrity_digest == surface("v1").integrity_digest  # type: ignore[union-attr]


def test_16_concurrent_writers_of_one_server_get_versions_1_to_16(tmp_path: Path):
    stores = [open_for(tmp_path) for _ in range(4)]  # four store objects, as four processes would have
    errors: list[BaseException] = []

    def writer(index: int) -> None:
        try:
            lock(stores[index % 4], surface(f"v{index}"), who=f"w{index}")
        except BaseException as exc:  # noqa: BLE001  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    history = stores[0].history("billing")
    assert [r.version for r in history] == list(range(1, 17))
    assert sorted(r.who or "" for r in history) == sorted(f"w{i}" for i in range(16))
    for previous, record in pairwise(history):
        assert record.previous_digest == previous.integrity_digest


def test_two_servers_commit_independently(tmp_path: Path):
    store = open_for(tmp_path)
    lock(store, surface("a", server="alpha"))
    lock(store, surface("b", server="beta"))
    lock(store, surface("a2", server="alpha"))
    assert [r.version for r in store.history("alpha")] == [1, 2]
    assert [r.version for r in store.history("beta")] == [1]


def test_live_reports_and_refused_attempts_survive_a_new_store_object(tmp_path: Path):
    from app.store import RefusedAttempt

    store = open_for(tmp_path)
    record = LiveRecord(server="billing", reported_at=STAMP, live_digest="sha256:x",
                        surface_document={"note": "nul \u0000 and \u202e"},
                        lock_version=None, lock_digest=None, locked_at=None, result=None)
    store.save_live(record)
    attempt = RefusedAttempt(server="billing", id=RefusedAttempt.make_id("b", "d"), attempted_at=STAMP,
                             base_version=1, base_digest="b", integrity_digest="d", surface_document={})
    store.save_refused(attempt)
    again = open_for(tmp_path)
    assert again.live("billing") == record
    assert again.refused("billing") == [attempt]
    assert again.servers() == ["billing"]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(descriptions=st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=5, unique=True))
def test_export_then_import_keeps_every_version_byte_for_byte(tmp_path_factory: pytest.TempPathFactory,
                                                              descriptions: list[str]):
    with opened(tmp_path_factory.mktemp("source")) as source, opened(tmp_path_factory.mktemp("target")) as target:
        for index, text in enumerate(descriptions):
            lock(source, surface(text), who=f"person {index}")
        exported = tmp_path_factory.mktemp("exported")
        copy_store(source, open_store(exported))
        copy_store(open_store(exported), target)
        assert target.history("billing") == source.history("billing")
        for record in source.history("billing"):
            assert target.version("billing", record.version).text == source.version("billing", record.version).text
        assert (exported / "billing.lock.toml").read_bytes() == source.current("billing").text  # type: ignore[union-attr]
        assert copy_store(open_store(exported), target).versions == 0  # a re-run skips what is there


def test_import_refuses_a_store_that_has_diverged(tmp_path: Path):
    source = open_for(tmp_path / "a")
    lock(source, surface("one"))
    target = open_for(tmp_path / "b")
    lock(target, surface("other"))
    with pytest.raises(TransferConflict, match="version 1 differs"):
        copy_store(source, target)


# -- PostgreSQL only --------------------------------------------------------------------


@pytest.mark.postgres_store
def test_migrations_from_empty_and_a_rerun_is_a_noop():
    import psycopg

    from app.store import pgschema

    url = fresh_schema_url(migrate=False)
    with psycopg.connect(url, autocommit=True) as conn:
        assert pgschema.applied(conn) == 0
        assert pgschema.migrate(conn) == [m.name for m in pgschema.migrations()]
        tables = {row[0] for row in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")}
        assert {"servers", "versions", "live_reports", "refused_attempts", "schema_migrations"} <= tables
        assert pgschema.migrate(conn) == []
        assert pgschema.applied(conn) == pgschema.latest()


@pytest.mark.postgres_store
def test_a_service_refuses_a_schema_it_does_not_know():
    import psycopg

    from app.store import pgschema

    empty = fresh_schema_url(migrate=False)
    with pytest.raises(pgschema.SchemaError, match="store migrate"):
        open_store(empty, listen=False)
    newer = fresh_schema_url()
    with psycopg.connect(newer, autocommit=True) as conn:
        conn.execute("INSERT INTO schema_migrations (version, name) VALUES (%s, 'from the future')",
                     (pgschema.latest() + 1,))
    with pytest.raises(pgschema.SchemaError, match="newer"):
        open_store(newer, listen=False)


@pytest.mark.postgres_store
def test_closing_a_store_stops_its_listener_at_once(monkeypatch: pytest.MonkeyPatch):
    """close() wakes the LISTEN thread itself: with a poll far longer than close's join, the
    thread is gone when close returns (it used to wait out its poll, 0.5 s per store)."""
    import time

    from app.store import postgres

    monkeypatch.setattr(postgres, "LISTEN_POLL_SECONDS", 600.0)
    store = open_store(fresh_schema_url())
    assert isinstance(store, postgres.PostgresStore) and store._listener is not None
    deadline = time.monotonic() + 60
    while not store.listening() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert store.listening()
    store.close()
    assert not store._listener.is_alive()


@pytest.mark.postgres_store
def test_versions_are_append_only_in_the_database(tmp_path: Path):
    import psycopg

    store = open_for(tmp_path)
    lock(store, surface("v1"))
    for statement in ("UPDATE versions SET record = '{}'", "DELETE FROM versions", "TRUNCATE versions CASCADE"):
        with psycopg.connect(store.dsn, autocommit=True) as conn, pytest.raises(psycopg.Error, match="append-only"):
            conn.execute(statement)
    assert [r.version for r in store.history("billing")] == [1]


@pytest.mark.postgres_store
def test_the_cli_migrates_once_and_serve_refuses_an_unmigrated_database(tmp_path: Path):
    import subprocess
    import sys

    from tests.helpers_service import clean_env

    url = fresh_schema_url(migrate=False)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, timeout=60,
                              env=clean_env(), cwd=tmp_path, check=False)

    refused = run("serve", "--store", url, "--port", "1")
    assert refused.returncode == 2 and "store migrate" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and "Traceback" not in refused.stderr
    first = run("store", "migrate", "--store", url)
    assert first.returncode == 0 and "applied 0001_initial.sql" in first.stderr
    again = run("store", "migrate", "--store", url)
    assert again.returncode == 0 and "nothing to apply" in again.stderr


@pytest.mark.postgres_store
def test_store_export_and_import_through_the_cli(tmp_path: Path):
    import json
    import subprocess
    import sys

    from tests.helpers_service import clean_env

    source = open_for(tmp_path / "source")
    for index in range(3):
        lock(source, surface(f"v{index}"), who=f"person {index}")
    source.save_live(LiveRecord(server="billing", reported_at=STAMP, live_digest="sha256:x", surface_document={},
                                lock_version=3, lock_digest=None, locked_at=None, result=None, instance="blue"))
    target = open_for(tmp_path / "target")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "app", "store", *args], capture_output=True, text=True,
                              timeout=60, env=clean_env(), cwd=tmp_path, check=False)

    exported = tmp_path / "exported"
    done = run("export", str(exported), "--store", source.dsn)
    assert done.returncode == 0, done.stderr
    assert "3 version(s) copied" in done.stderr
    assert (exported / "billing.lock.toml").read_bytes() == source.current("billing").text  # type: ignore[union-attr]
    audit = [json.loads(line) for line in (exported / ".store" / "billing" / "audit.jsonl").read_text().splitlines()]
    assert [(r["version"], r["who"], r["locked_at"]) for r in audit] == [
        (i + 1, f"person {i}", STAMP) for i in range(3)]
    assert (exported / ".store" / "billing" / "instances" / "blue.json").exists()
    done = run("import", str(exported), "--store", target.dsn)
    assert done.returncode == 0, done.stderr
    assert target.history("billing") == source.history("billing")
    assert target.live("billing", "blue") == source.live("billing", "blue")
    again = run("import", str(exported), "--store", target.dsn)
    assert again.returncode == 0 and "0 version(s) copied (3 already there)" in again.stderr
    missing = run("import", str(tmp_path / "nowhere"), "--store", target.dsn)
    assert missing.returncode == 2 and "no such directory" in missing.stderr and "Traceback" not in missing.stderr
