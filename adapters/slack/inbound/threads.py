"""What the bot knows about a Slack thread: whether it answered there, and its latest answer."""

from __future__ import annotations

from collections import OrderedDict

from core.models import ConversationKey, Record, RecordStatus
from core.ports import ConversationStore

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
    """Threads the bot answers in, read from the shared store; only positives are cached.

    Another instance may start answering in a thread at any moment, so "not engaged" is never
    remembered: every miss asks the store again (one indexed lookup). "Engaged" never stops being true,
    so it is safe to cache.
    """

    def __init__(self, store: ConversationStore) -> None:
        self.store = store
        self._known: OrderedDict[str, None] = OrderedDict()

    def remember(self, key: ConversationKey) -> None:
        """The bot is answering in this thread."""
        key_id = key.as_id()
        self._known[key_id] = None
        self._known.move_to_end(key_id)
        while len(self._known) > MAX_CACHED:
            self._known.popitem(last=False)

    async def is_engaged(self, key: ConversationKey) -> bool:
        """True when the thread has a record of this bot (in this instance's cache, else in the store)."""
        if key.as_id() in self._known:
            return True
        if not await thread_records(self.store, key):
            return False
        self.remember(key)
        return True
