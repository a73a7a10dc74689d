"""The dataset writer lock of several machines: a PostgreSQL advisory lock per dataset, on its own connection.

Used when Chroma is a server (KB_CHROMA_URL) and the conversation store is PostgreSQL: writers on
different machines share no disk and no kernel, so no lock file can keep them apart, but they share the
database. The lock is session-level (pg_try_advisory_lock) on a connection opened for the hold and
closed after it; if the writer dies its connection drops and PostgreSQL releases the lock at once,
the same guarantee flock gives on one machine (adapters.knowledge.locks.file_lock). Keys are derived
like adapters.store.pg_lock's, in their own namespace.

The holder's record is where pg_stat_activity shows it to a waiter (found through pg_locks): the lock's
own statement carries it as a comment, ``SELECT pg_try_advisory_lock($1) /* kb-writer {json} */``, and
it stays the session's last query while the lock is held (nothing else runs on that connection);
the connection's application_name, "kb-writer <pid> <since> <host>", is the fallback for a waiter of
another role, who sees no query text. (application_name alone would not do: PostgreSQL keeps 63
ASCII bytes of it, and a dataset named 法规 would read "??".)
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg

from adapters.knowledge.locks.holder import LockHolder, OnWait, take_in_turn
from adapters.store.database import POSTGRES_ERRORS, postgres_error

NAMESPACE = "kb-dataset-writer"
RECORD_PREFIX = "kb-writer"
CONNECT_TIMEOUT = 10.0
_HOLDER_SQL = """
SELECT a.application_name, a.query
FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
  AND l.classid = $1::bigint::oid AND l.objid = $2::bigint::oid
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
"""


def lock_key(dataset: str) -> int:
    """The signed 64-bit advisory lock key of a dataset (stable across processes and machines)."""
    digest = hashlib.blake2b(f"{NAMESPACE}\0{dataset}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def _key_halves(key: int) -> tuple[int, int]:
    """pg_locks' classid and objid of a bigint advisory key (its high and low 32 bits)."""
    unsigned = key & 0xFFFFFFFFFFFFFFFF
    return unsigned >> 32, unsigned & 0xFFFFFFFF


def application_name(holder: LockHolder) -> str:
    """The ASCII part of a holder's record: the connection's application_name."""
    host = holder.host.encode("ascii", "replace").decode("ascii")
    return f"{RECORD_PREFIX} {holder.pid} {int(holder.since)} {host}"


def lock_statement(holder: LockHolder) -> str:
    """The statement that takes the lock, with the holder's record as a comment (see the module docstring)."""
    record = holder.to_json().replace("*/", "*\\/")  # a JSON escape: the comment cannot be closed early
    return f"SELECT pg_try_advisory_lock($1) /* {RECORD_PREFIX} {record} */"


def parse_record(application: str | None, query: str | None) -> LockHolder | None:
    """The holder named by its lock statement, else by its application_name; None when neither is a writer's."""
    text = query or ""
    start = text.find(f"/* {RECORD_PREFIX} ")
    end = text.rfind(" */")
    if start >= 0 and end > start:
        holder = LockHolder.from_json(text[start + len(RECORD_PREFIX) + 4 : end])
        if holder is not None:
            return holder
    parts = (application or "").split(" ", 3)
    if len(parts) < 4 or parts[0] != RECORD_PREFIX:
        return None
    try:
        return LockHolder(
            pid=int(parts[1]),
            host=parts[3],
            command="(not visible to this database role)",
            since=float(parts[2]),
        )
    except ValueError:
        return None


class PostgresWriterLocks:
    """WriterLocks across machines through one PostgreSQL database."""

    def __init__(self, url: str, *, command: str) -> None:
        """url: postgresql://... (the conversation store's); command: this process's command line."""
        self._url = url
        self._command = command

    async def _connect(self, record: str) -> asyncpg.Connection:
        try:
            return await asyncpg.connect(
                self._url, timeout=CONNECT_TIMEOUT, server_settings={"application_name": record}
            )
        except (*POSTGRES_ERRORS, ValueError) as exc:
            raise postgres_error(exc) from exc

    @asynccontextmanager
    async def hold(
        self, dataset: str, *, wait: bool = True, on_wait: OnWait | None = None
    ) -> AsyncIterator[None]:
        """Hold the dataset for writing (see WriterLocks.hold)."""
        key = lock_key(dataset)
        holder = LockHolder.current(self._command)
        statement = lock_statement(holder)
        connection = await self._connect(application_name(holder))
        try:

            async def try_take() -> bool:
                try:
                    return bool(await connection.fetchval(statement, key))
                except POSTGRES_ERRORS as exc:
                    raise postgres_error(exc) from exc

            async def read_holder() -> LockHolder | None:
                return await _holder_on(connection, key)

            await take_in_turn(dataset, try_take, read_holder, wait=wait, on_wait=on_wait)
            try:
                yield
            finally:
                # If this fails the connection is gone, and the lock with it.
                with contextlib.suppress(*POSTGRES_ERRORS):
                    await connection.execute("SELECT pg_advisory_unlock($1)", key)
        finally:
            with contextlib.suppress(*POSTGRES_ERRORS):
                await connection.close(timeout=CONNECT_TIMEOUT)

    async def holder(self, dataset: str) -> LockHolder | None:
        """Who holds the dataset's advisory lock now (None when nobody does)."""
        connection = await self._connect(f"{RECORD_PREFIX}-probe")
        try:
            return await _holder_on(connection, lock_key(dataset))
        finally:
            with contextlib.suppress(*POSTGRES_ERRORS):
                await connection.close(timeout=CONNECT_TIMEOUT)

    async def close(self) -> None:
        """Nothing to close: each hold opens and closes its own connection."""


async def _holder_on(connection: asyncpg.Connection, key: int) -> LockHolder | None:
    classid, objid = _key_halves(key)
    try:
        row = await connection.fetchrow(_HOLDER_SQL, classid, objid)
    except POSTGRES_ERRORS as exc:
        raise postgres_error(exc) from exc
    return None if row is None else parse_record(row["application_name"], row["query"])
