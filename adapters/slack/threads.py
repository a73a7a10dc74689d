"""What the bot knows about a Slack thread: whether it answered there, and its latest answer."""

from __future__ import annotations

import time
from collections import OrderedDict

from core.models import ConversationKey, Record, RecordStatus
from core.ports import ConversationStore

NEGATIVE_TTL = 300.0
MAX_CACHED = 10000


async def conversation_id(store: ConversationStore, key: ConversationKey) -> str | None:
    """The stored conversation for key, without creating one."""
    return await store.find_conversation(key)


async def thread_records(store: ConversationStore, key: ConversationKey) -> list[Record]:
    """The thread's records, oldest first (bounded by the store's page size)."""
    found = await conversation_id(store, key)
    if found is None:
        return []
    return sorted(await store.list_records(found, limit=100), key=lambda record: record.id)


async def latest_answer(store: ConversationStore, key: ConversationKey) -> Record | None:
    """The most recent answered record of the thread."""
    answered = [r for r in await thread_records(store, key) if r.status == RecordStatus.ANSWERED]
    return answered[-1] if answered else None


class EngagedThreads:
    """Threads the bot answered in: remembered when it answers, looked up in the store otherwise."""

    def __init__(self, store: ConversationStore) -> None:
        self.store = store
        self._known: OrderedDict[str, bool] = OrderedDict()
        self._checked_at: dict[str, float] = {}

    def remember(self, key: ConversationKey) -> None:
        """The bot is answering in this thread."""
        self._set(key.as_id(), True)

    def _set(self, key_id: str, value: bool) -> None:
        self._known[key_id] = value
        self._known.move_to_end(key_id)
        self._checked_at[key_id] = time.monotonic()
        while len(self._known) > MAX_CACHED:
            old, _ = self._known.popitem(last=False)
            self._checked_at.pop(old, None)

    async def is_engaged(self, key: ConversationKey) -> bool:
        """True when the thread has a record of this bot (cached; misses are re-checked after a while)."""
        key_id = key.as_id()
        known = self._known.get(key_id)
        if known or (known is False and time.monotonic() - self._checked_at[key_id] < NEGATIVE_TTL):
            return bool(known)
        engaged = bool(await thread_records(self.store, key))
        self._set(key_id, engaged)
        return engaged
