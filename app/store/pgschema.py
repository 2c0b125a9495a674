"""The PostgreSQL store's schema: versioned SQL migrations (``app/store/migrations/NNNN_*.sql``),
applied in order by ``mcp-governance store migrate``, each in its own transaction, recorded in
``schema_migrations``. A service checks the schema at start and refuses one it does not know."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING

from app.store.records import StoreError

if TYPE_CHECKING:
    import psycopg

MIGRATION_FILE = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
MIGRATE_LOCK = 0x6D6370676F76  # pg_advisory_xact_lock key: one migrator at a time ("mcpgov")


class SchemaError(StoreError):
    """The database's schema is not the one this service knows (one line, for the operator)."""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


def migrations() -> list[Migration]:
    found = []
    for entry in resources.files("app.store").joinpath("migrations").iterdir():
        match = MIGRATION_FILE.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), entry.name, entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    if [m.version for m in found] != list(range(1, len(found) + 1)):
        raise SchemaError("the packaged migrations are not numbered 0001, 0002, ... without gaps")
    return found


def latest() -> int:
    return migrations()[-1].version


def applied(conn: psycopg.Connection) -> int:
    """The schema version of the database (0: no mcp-governance schema)."""
    row = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()
    if not row or not row[0]:
        return 0
    version = conn.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()
    return int(version[0]) if version else 0


def migrate(conn: psycopg.Connection) -> list[str]:
    """Apply every migration the database lacks; the names applied (none: a no-op)."""
    done: list[str] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATE_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations ("
                     "version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())")
        have = applied(conn)
        if have > latest():
            raise SchemaError(f"the database schema is version {have}, newer than this mcp-governance knows "
                              f"({latest()}): upgrade mcp-governance")
        for migration in migrations():
            if migration.version <= have:
                continue
            with conn.transaction():
                conn.execute(migration.sql.encode("utf-8"))
                conn.execute("INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                             (migration.version, migration.name))
            done.append(migration.name)
    return done


def check(conn: psycopg.Connection) -> None:
    """Raise SchemaError unless the database is at exactly the schema this service knows."""
    have, want = applied(conn), latest()
    if have == 0:
        raise SchemaError("the database has no mcp-governance schema: run `mcp-governance store migrate --store URL`")
    if have < want:
        raise SchemaError(f"the database schema is version {have}, this mcp-governance needs {want}: "
                          "run `mcp-governance store migrate --store URL`")
    if have > want:
        raise SchemaError(f"the database schema is version {have}, newer than this mcp-governance knows "
                          f"({want}): upgrade mcp-governance")
