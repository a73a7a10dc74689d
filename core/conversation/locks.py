"""In-process per-conversation lock: one generation or compaction at a time, first come first served."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class LocalConversationLock:
    """asyncio locks keyed by conversation id; waiters are served in arrival order (asyncio.Lock is FIFO)."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: dict[str, int] = {}

    def waiting(self, conversation_id: str) -> int:
        """Holders plus waiters of this conversation right now (0 = free)."""
        return self._users.get(conversation_id, 0)

    @asynccontextmanager
    async def hold(self, conversation_id: str) -> AsyncIterator[None]:
        lock = self._locks.setdefault(conversation_id, asyncio.Lock())
        self._users[conversation_id] = self._users.get(conversation_id, 0) + 1
        try:
            async with lock:
                yield
        finally:
            self._users[conversation_id] -= 1
            if self._users[conversation_id] == 0:
                del self._users[conversation_id]
                self._locks.pop(conversation_id, None)
