"""Both stores for the store and API tests: the ``lockfiles/`` directory and a real PostgreSQL.

A module listed in :data:`BOTH_STORES` runs each of its tests twice, ``[dir]`` and ``[pg]``
(``pytest_generate_tests`` in conftest calls :func:`parametrize`). Under ``[pg]``, every app the
helpers build over a directory ``root`` uses a PostgreSQL schema of its own instead, one per
``root`` (a restart over the same ``root`` finds the same data), inside one database created
for this pytest process (so xdist workers never share one) and dropped at its end.

Without a reachable PostgreSQL the ``[pg]`` cases are skipped and the reason printed (``-rs``).
``MCP_GOVERNANCE_TEST_PG`` names another server (default: the local one, trust auth).
A test that reads or writes the directory's files itself is marked ``directory_store`` and
runs on the directory only.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

PG_ADMIN_URL = os.environ.get("MCP_GOVERNANCE_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
BOTH_STORES = {"test_store_contract", "test_api", "test_api_auth", "test_service_refused", "test_api_input",
               "test_api_hotpath", "test_instances", "test_pagination", "test_transfer", "test_lock_roundtrip"}
"""Modules whose tests run on both stores."""

_backend: list[str] = ["dir"]
_database: list[str] = []
_schemas: dict[str, str] = {}


@functools.cache
def pg_unavailable() -> str | None:
    """Why PostgreSQL tests cannot run here (None: they can)."""
    try:
        import psycopg
    except ImportError:
        return "psycopg is not installed (pip install -e '.[test]')"
    try:
        with psycopg.connect(PG_ADMIN_URL, connect_timeout=2) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return f"no PostgreSQL at {PG_ADMIN_URL} ({first})"
    return None


def _with_database(url: str, database: str) -> str:
    base, _, _ = url.rpartition("/")
    return f"{base}/{database}"


def database_url() -> str:
    """The URL of this process's test database, created on first use."""
    if not _database:
        import psycopg

        name = f"mcpg_test_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        _database.append(name)
    return _with_database(PG_ADMIN_URL, _database[0])


def drop_database() -> None:
    if not _database:
        return
    import psycopg

    with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{_database.pop()}" WITH (FORCE)')


def fresh_schema_url(key: str | None = None, migrate: bool = True) -> str:
    """A URL whose connections use a schema of their own (``key`` names it again later)."""
    import psycopg

    from app.store import pgschema

    key = key or uuid.uuid4().hex
    if key in _schemas:
        return _schemas[key]
    schema = "s_" + hashlib.sha256(key.encode()).hexdigest()[:20]
    with psycopg.connect(database_url(), autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    url = f"{database_url()}?options={quote(f'-csearch_path={schema}')}"
    if migrate:
        with psycopg.connect(url, autocommit=True) as conn:
            pgschema.migrate(conn)
    _schemas[key] = url
    return url


def backend() -> str:
    return _backend[0]


def location_for(root: Path) -> str | Path:
    """Where an app over ``root`` keeps its data under the current backend."""
    if _backend[0] == "pg":
        return fresh_schema_url(str(root.resolve()))
    return root


def open_for(root: Path, **options: object):  # type: ignore[no-untyped-def]
    """A store over ``root`` under the current backend (closed when the test ends)."""
    from app.service import summarizer
    from app.store.select import open_store

    if _backend[0] == "pg":  # store-level tests need no cache invalidation: few connections, none idle
        options = {"listen": False, "min_size": 0, "max_size": 2, **options}
    store = open_store(location_for(root), summarize=summarizer(None), **options)
    _opened.append(store)
    return store


_opened: list = []  # type: ignore[type-arg]


@contextlib.contextmanager
def opened(root: Path, **options: object) -> Iterator:  # type: ignore[type-arg]
    """:func:`open_for`, closed on leaving the block: a hypothesis example that opens stores
    closes them itself (a PostgreSQL store holds a pooled connection and a LISTEN one; twenty
    examples' worth left open until the test's end ran the server out of connections)."""
    store = open_for(root, **options)
    try:
        yield store
    finally:
        _opened.remove(store)
        store.close()


def corrupt(root: Path, server: str, old: str, new: str) -> None:
    """Damage the current lock of ``server`` behind the service's back (a hand edit of the
    file; in the database, an UPDATE with the append-only trigger disabled, then the NOTIFY a
    replica would see)."""
    if _backend[0] != "pg":
        path = root / f"{server}.lock.toml"
        path.write_text(path.read_text().replace(old, new))
        return
    import time

    import psycopg

    url = location_for(root)
    with psycopg.connect(str(url), autocommit=True) as conn, conn.transaction():
        schema = conn.execute("SELECT current_schema()").fetchone()[0]  # type: ignore[index]
        conn.execute("ALTER TABLE versions DISABLE TRIGGER versions_append_only")
        conn.execute("UPDATE versions SET lock_text = convert_to(replace(convert_from(lock_text, 'UTF8'), %s, %s), "
                     "'UTF8') WHERE server = %s", (old, new, server))
        conn.execute("ALTER TABLE versions ENABLE TRIGGER versions_append_only")
        seq = conn.execute("UPDATE servers SET seq = seq + 1 WHERE name = %s RETURNING seq", (server,)).fetchone()
        conn.execute("SELECT pg_notify(%s, %s)", (f"mcp_governance_{schema}", f"lock:{seq[0]}:{server}"))  # type: ignore[index]
    time.sleep(0.3)  # the replica's LISTEN connection drops its cached copy


def parametrize(metafunc: pytest.Metafunc) -> None:
    module = metafunc.module.__name__.rsplit(".", 1)[-1]
    if module not in BOTH_STORES or "store_backend" not in metafunc.fixturenames:
        return
    kinds = (["dir"] if metafunc.definition.get_closest_marker("directory_store")
             else ["pg"] if metafunc.definition.get_closest_marker("postgres_store") else ["dir", "pg"])
    metafunc.parametrize("store_backend", kinds, indirect=True)


@pytest.fixture
def store_backend(request: pytest.FixtureRequest) -> Iterator[str]:
    """``dir`` or ``pg`` (see the module docstring); autouse through conftest."""
    kind = getattr(request, "param", "dir")
    if kind == "pg":
        reason = pg_unavailable()
        if reason is not None:
            pytest.skip(f"PostgreSQL store tests skipped: {reason}")
    _backend[0] = kind
    try:
        yield kind
    finally:
        _backend[0] = "dir"
        while _opened:
            with contextlib.suppress(Exception):  # closing must not hide the test's own failure
                _opened.pop().close()


@pytest.fixture
def store_location(store_backend: str, tmp_path: Path) -> str | Path:
    """A fresh, empty store of the current backend."""
    return location_for(tmp_path / "lockfiles")


@pytest.fixture(scope="session", autouse=True)
def _drop_test_database() -> Iterator[None]:
    yield
    with contextlib.suppress(Exception):  # never fail a run on cleanup; the name is unique anyway
        drop_database()
