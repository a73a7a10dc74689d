"""Database connections: run `?`-placeholder statements on SQLite (aiosqlite) or PostgreSQL (asyncpg).

Rows come back as plain dicts; vendor errors are mapped to core.errors types here, once.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import aiosqlite
import asyncpg

from adapters.store.dialect import POSTGRES, SQLITE, Dialect
from adapters.store.errors import StoreUnavailable, conversation_not_found, unstorable_text
from core.errors import InvalidInput, KbError
from core.messages import phrase

Row = dict[str, Any]
DEFAULT_BUSY_TIMEOUT = 10.0  # seconds a writer waits for another process before failing


class Database(ABC):
    """One SQL backend, or one open transaction on it."""

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect

    @abstractmethod
    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Run one statement written with `?` placeholders; returns its rows (RETURNING included)."""

    async def fetchrow(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        rows = await self.fetch(sql, params)
        return rows[0] if rows else None

    @abstractmethod
    def transaction(self) -> contextlib.AbstractAsyncContextManager[Database]:
        """A database handle whose statements run in one transaction (committed on success)."""

    @abstractmethod
    async def close(self) -> None: ...


class SqliteDatabase(Database):
    """One aiosqlite connection in autocommit mode; WAL journal, busy timeout, foreign keys on.

    Statements are serialised with an asyncio lock so that a transaction never picks up another task's
    statement; WAL lets other processes read while one writes.
    """

    def __init__(self, connection: aiosqlite.Connection, *, lock: asyncio.Lock | None) -> None:
        super().__init__(SQLITE)
        self._connection = connection
        self._lock = lock

    @classmethod
    async def connect(
        cls,
        path: str | Path,
        *,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
        on_connect: Callable[[aiosqlite.Connection], Awaitable[None]] | None = None,
        create_folder: bool = True,
    ) -> SqliteDatabase:
        """Open the file (creating its parent folder unless create_folder is False, when a missing folder is
        bad input); ":memory:" gives a private in-memory database."""
        if str(path) != ":memory:" and not create_folder and not Path(path).parent.is_dir():
            raise InvalidInput(
                phrase(
                    "error.sqlite_folder_missing", path=str(path), folder=str(Path(path).parent.absolute())
                )
            )
        try:
            if str(path) != ":memory:" and create_folder:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            # timeout= is the busy timeout from the very first statement (the WAL switch may wait too).
            connection = await aiosqlite.connect(str(path), isolation_level=None, timeout=busy_timeout)
        except (sqlite3.Error, OSError) as exc:
            raise StoreUnavailable(f"cannot open SQLite database {path}: {exc}") from exc
        connection.row_factory = sqlite3.Row
        database = cls(connection, lock=asyncio.Lock())
        try:
            await database.fetch(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
            await database._switch_to_wal(busy_timeout)
            for pragma in ("PRAGMA foreign_keys=ON", "PRAGMA synchronous=NORMAL"):
                await database.fetch(pragma)
            if on_connect is not None:
                await on_connect(connection)
        except BaseException:
            await connection.close()
            raise
        return database

    async def _switch_to_wal(self, busy_timeout: float) -> None:
        """Put the file in WAL mode, retrying while other connections hold it: SQLite answers a journal-mode
        change that races another opener with SQLITE_BUSY at once, without calling the busy handler."""
        deadline = time.monotonic() + busy_timeout
        pause = 0.01
        while True:
            try:
                await self.fetch("PRAGMA journal_mode=WAL")
                return
            except StoreUnavailable as exc:
                if "locked" not in str(exc) or time.monotonic() + pause > deadline:
                    raise
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.2)

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        async with self._lock if self._lock is not None else contextlib.nullcontext():
            try:
                rows = await self._connection.execute_fetchall(sql, tuple(params))
            except (sqlite3.Error, UnicodeError, OverflowError) as exc:
                raise _sqlite_error(exc) from exc
        return [dict(row) for row in rows]

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Database]:
        if self._lock is None:
            raise RuntimeError("nested transactions are not supported")
        async with self._lock:
            inner = SqliteDatabase(self._connection, lock=None)
            await inner.fetch("BEGIN IMMEDIATE")
            try:
                yield inner
                await inner.fetch("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    await self._connection.rollback()
                raise

    async def close(self) -> None:
        await self._connection.close()


class PostgresDatabase(Database):
    """An asyncpg pool (or, inside a transaction, one of its connections)."""

    def __init__(self, executor: asyncpg.Pool | asyncpg.Connection) -> None:
        super().__init__(POSTGRES)
        self._executor = executor

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        min_size: int = 1,
        max_size: int = 10,
        server_settings: Mapping[str, str] | None = None,
        connect_timeout: float = 10.0,
    ) -> PostgresDatabase:
        """A pool on the URL; query parameters such as ?search_path=... become server settings."""
        return cls(
            await create_pool(
                url,
                min_size=min_size,
                max_size=max_size,
                server_settings=server_settings,
                connect_timeout=connect_timeout,
            )
        )

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        try:
            rows = await self._executor.fetch(self.dialect.sql(sql), *params)
        except POSTGRES_ERRORS as exc:
            raise postgres_error(exc) from exc
        return [dict(row) for row in rows]

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Database]:
        if not isinstance(self._executor, asyncpg.Pool):
            raise RuntimeError("nested transactions are not supported")
        try:
            async with self._executor.acquire() as connection, connection.transaction():
                yield PostgresDatabase(connection)
        except POSTGRES_ERRORS as exc:
            raise postgres_error(exc) from exc

    async def close(self) -> None:
        if isinstance(self._executor, asyncpg.Pool):
            await close_pool(self._executor)


POSTGRES_ERRORS = (
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
    OSError,
    TimeoutError,
    UnicodeError,
    OverflowError,
)


async def create_pool(
    url: str,
    *,
    min_size: int,
    max_size: int,
    server_settings: Mapping[str, str] | None = None,
    connect_timeout: float = 10.0,
) -> asyncpg.Pool:
    """An asyncpg pool; a failure names the host, never the password."""
    try:
        return await asyncpg.create_pool(
            url,
            min_size=min_size,
            max_size=max_size,
            server_settings=dict(server_settings) if server_settings else None,
            timeout=connect_timeout,
        )
    except (*POSTGRES_ERRORS, ValueError) as exc:
        raise StoreUnavailable(f"cannot connect to PostgreSQL at {_safe_location(url)}: {exc}") from exc


async def close_pool(pool: asyncpg.Pool, *, grace: float = 5.0) -> None:
    """Close gracefully, or terminate the connections still in use after `grace` seconds."""
    try:
        await asyncio.wait_for(pool.close(), grace)
    except TimeoutError:
        pool.terminate()


def postgres_error(exc: BaseException) -> KbError:
    """The core error for an asyncpg / connection failure."""
    if isinstance(exc, asyncpg.ForeignKeyViolationError):
        return conversation_not_found(str(exc))
    if isinstance(exc, asyncpg.DataError | UnicodeError | OverflowError):
        return unstorable_text(str(exc))
    if isinstance(exc, asyncpg.IntegrityConstraintViolationError):
        return InvalidInput(phrase("error.constraint_violated"), detail=str(exc))
    return StoreUnavailable(f"{type(exc).__name__}: {exc}")


def _sqlite_error(exc: BaseException) -> KbError:
    message = str(exc)
    if isinstance(exc, sqlite3.IntegrityError) and "FOREIGN KEY" in message:
        return conversation_not_found(message)
    if isinstance(exc, UnicodeError | OverflowError):
        return unstorable_text(message)
    if isinstance(exc, sqlite3.IntegrityError):
        return InvalidInput(phrase("error.constraint_violated"), detail=message)
    return StoreUnavailable(f"{type(exc).__name__}: {message}")


def _safe_location(url: str) -> str:
    """host:port/database of a URL, without credentials."""
    rest = url.split("://", 1)[-1]
    return rest.rsplit("@", 1)[-1].split("?", 1)[0]
