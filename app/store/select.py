"""Which store a location names: a ``postgresql://`` URL is the PostgreSQL store (needs the
``postgres`` extra), anything else the ``lockfiles/`` directory store (the default)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.store.base import LockStore
from app.store.filesystem import FileStore, Summarize
from app.store.records import StoreError

DATABASE_SCHEMES = ("postgresql://", "postgres://")


def is_database_url(location: str | Path | None) -> bool:
    return isinstance(location, str) and location.startswith(DATABASE_SCHEMES)


def open_store(location: str | Path, summarize: Summarize | None = None, **options: Any) -> LockStore:
    """The store at ``location``. ``options`` go to the PostgreSQL store (listen, check_schema,
    max_size). Raises StoreError (one line) when the database cannot be used."""
    if is_database_url(location):
        try:
            from app.store.postgres import PostgresStore
        except ImportError:
            raise StoreError("a postgresql:// store needs the PostgreSQL driver: "
                             "pip install 'mcp-governance[postgres]'") from None
        return PostgresStore(str(location), summarize, **options)
    return FileStore(location, summarize)


def shown(location: str | Path) -> str:
    """A store location for logs and messages: a database URL without its password."""
    text = str(location)
    if not is_database_url(text):
        return text
    scheme, _, rest = text.partition("://")
    credentials, at, host = rest.rpartition("@")
    if not at:
        return text
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user}@{host}" if user else f"{scheme}://{host}"
