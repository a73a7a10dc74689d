"""ConversationStore on SQLite (the default) or PostgreSQL, chosen by database URL.

Both backends share one implementation (adapters.store.conversation_store.SqlConversationStore); this
module opens them: SQLite as one file in WAL mode, PostgreSQL through an asyncpg pool, each migrated to
the current schema at open (adapters.store.schema).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

import aiosqlite

from adapters.store.conversation_store import SqlConversationStore
from adapters.store.database import DEFAULT_BUSY_TIMEOUT, Database, PostgresDatabase, SqliteDatabase
from adapters.store.schema import MIGRATIONS, Migration, migrate
from core.errors import InvalidInput
from core.messages import phrase

__all__ = ["PostgresConversationStore", "SqlConversationStore", "SqliteConversationStore", "open_store"]

StoreT = TypeVar("StoreT", bound=SqlConversationStore)


class SqliteConversationStore(SqlConversationStore):
    """The store in one SQLite file (WAL mode, busy timeout), migrated at open."""

    @classmethod
    async def open(
        cls,
        path: str | Path,
        *,
        migrations: Sequence[Migration] = MIGRATIONS,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
        on_connect: Callable[[aiosqlite.Connection], Awaitable[None]] | None = None,
        create_folder: bool = True,
    ) -> SqliteConversationStore:
        """Open or create the file (and its folder, unless create_folder is False); on_connect may add
        pragmas or tracing hooks."""
        database = await SqliteDatabase.connect(
            path, busy_timeout=busy_timeout, on_connect=on_connect, create_folder=create_folder
        )
        return await _migrated(cls, database, migrations)


class PostgresConversationStore(SqlConversationStore):
    """The store in a PostgreSQL database through an asyncpg pool, migrated at open."""

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        migrations: Sequence[Migration] = MIGRATIONS,
        min_size: int = 1,
        max_size: int = 10,
        server_settings: Mapping[str, str] | None = None,
    ) -> PostgresConversationStore:
        """Connect to postgresql://...; server_settings (or URL query parameters) e.g. set search_path."""
        database = await PostgresDatabase.connect(
            url, min_size=min_size, max_size=max_size, server_settings=server_settings
        )
        return await _migrated(cls, database, migrations)


async def open_store(url: str, *, migrations: Sequence[Migration] = MIGRATIONS) -> SqlConversationStore:
    """The store for a database URL: sqlite:///relative/path, sqlite:////absolute/path, sqlite:///:memory:,
    or postgresql://user@host:port/db. Raises InvalidInput for another scheme or a SQLite file whose folder
    does not exist (a typo must not create a new empty store), StoreUnavailable when the database cannot be
    opened."""
    scheme, _, rest = url.strip().partition("://")
    scheme = scheme.lower().split("+", 1)[0]
    if scheme == "sqlite":
        if not rest.startswith("/") or len(rest) < 2:
            raise InvalidInput(phrase("error.sqlite_without_path"))
        return await SqliteConversationStore.open(rest[1:], migrations=migrations, create_folder=False)
    if scheme in {"postgresql", "postgres"}:
        return await PostgresConversationStore.open(f"postgresql://{rest}", migrations=migrations)
    if not scheme:
        raise InvalidInput(phrase("error.database_url_without_scheme"))
    raise InvalidInput(phrase("error.unsupported_database_url", scheme=scheme))


async def _migrated(cls: type[StoreT], database: Database, migrations: Sequence[Migration]) -> StoreT:
    try:
        await migrate(database, migrations)
    except BaseException:
        await database.close()
        raise
    return cls(database)
