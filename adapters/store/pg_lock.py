"""ConversationLock across bot instances: a PostgreSQL advisory lock per conversation.

Within one process, holders of a conversation queue on an asyncio lock first (first come first served),
so each process sends at most one pg_advisory_lock per conversation and keeps its own order. The
advisory lock is taken and released on one pooled connection held for the whole critical section; asyncpg
runs pg_advisory_unlock_all() whenever a connection goes back to the pool, so a cancelled or failed
holder never leaves the lock behind. If that connection dies, PostgreSQL releases the lock at once.

Use a pool dedicated to locks (PostgresConversationLock.connect makes one): holders keep a connection
each for the duration of a generation, which must not starve the store's own pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import asyncpg

from adapters.store.database import POSTGRES_ERRORS, close_pool, create_pool, postgres_error

DEFAULT_NAMESPACE = "kb-conversation"


@dataclass
class _Queue:
    """The in-process FIFO in front of one conversation's advisory lock, and how many use it."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


class PostgresConversationLock:
    """One generation or compaction at a time per conversation, across every instance sharing a database."""

    def __init__(
        self, pool: asyncpg.Pool, *, namespace: str = DEFAULT_NAMESPACE, owns_pool: bool = False
    ) -> None:
        self._pool = pool
        self._namespace = namespace
        self._owns_pool = owns_pool
        self._queues: dict[str, _Queue] = {}

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        max_size: int = 20,
        namespace: str = DEFAULT_NAMESPACE,
        server_settings: Mapping[str, str] | None = None,
    ) -> PostgresConversationLock:
        """A lock with its own pool of at most max_size connections (= conversations held at once)."""
        pool = await create_pool(url, min_size=1, max_size=max_size, server_settings=server_settings)
        return cls(pool, namespace=namespace, owns_pool=True)

    async def close(self) -> None:
        """Close the pool it made; a holder still inside after a grace period loses its connection."""
        if self._owns_pool:
            await close_pool(self._pool)

    def lock_key(self, conversation_id: str) -> int:
        """The signed 64-bit advisory lock key of a conversation (stable across processes)."""
        digest = hashlib.blake2b(f"{self._namespace}\0{conversation_id}".encode(), digest_size=8).digest()
        return int.from_bytes(digest, "big", signed=True)

    def waiting(self, conversation_id: str) -> int:
        """Holders plus waiters of this conversation in this process (0 = free here)."""
        queue = self._queues.get(conversation_id)
        return queue.users if queue else 0

    @asynccontextmanager
    async def hold(self, conversation_id: str) -> AsyncIterator[None]:
        """Hold the conversation; raises StoreUnavailable if PostgreSQL cannot be reached."""
        queue = self._queues.setdefault(conversation_id, _Queue())
        queue.users += 1
        try:
            async with queue.lock, self._advisory_lock(self.lock_key(conversation_id)):
                yield
        finally:
            queue.users -= 1
            if queue.users == 0:
                self._queues.pop(conversation_id, None)

    @asynccontextmanager
    async def _advisory_lock(self, key: int) -> AsyncIterator[None]:
        try:
            connection = await self._pool.acquire()
        except POSTGRES_ERRORS as exc:
            raise postgres_error(exc) from exc
        try:
            try:
                await connection.execute("SELECT pg_advisory_lock($1)", key)
            except POSTGRES_ERRORS as exc:
                raise postgres_error(exc) from exc
            try:
                yield
            finally:
                # If this fails the connection is gone, and the lock with it (or the pool's reset drops it).
                with contextlib.suppress(*POSTGRES_ERRORS):
                    await connection.execute("SELECT pg_advisory_unlock($1)", key)
        finally:
            await self._pool.release(connection)
