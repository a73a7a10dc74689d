"""What the bot knows about a Slack thread: its records and its latest answer."""

from __future__ import annotations

from adapters.slack.pipeline_port import SlackReads
from core.models import ConversationKey, RecordStatus
from core.record import Record


async def conversation_id(store: SlackReads, key: ConversationKey) -> str | None:
    """The stored conversation for key, without creating one."""
    return await store.find_conversation(key)


async def thread_records(store: SlackReads, key: ConversationKey) -> list[Record]:
    """The thread's records, oldest first (bounded by the store's page size)."""
    found = await conversation_id(store, key)
    if found is None:
        return []
    return sorted(await store.list_records(found, limit=100), key=lambda record: record.id)


async def latest_answer(store: SlackReads, key: ConversationKey) -> Record | None:
    """The most recent answered record of the thread."""
    answered = [r for r in await thread_records(store, key) if r.status == RecordStatus.ANSWERED]
    return answered[-1] if answered else None
