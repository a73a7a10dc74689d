"""Test helper: store a question the way the pipeline opens one, on any store implementing core's Records."""

from __future__ import annotations

from typing import Any

from core.models import ConversationKey, RecordOpening
from core.ports import Records
from core.record import Record


async def stored_question(
    store: Records, conversation: str | ConversationKey, question: str, **fields: Any
) -> Record:
    """A pending record in the conversation (created when new), as Pipeline.ask opens it."""
    key = conversation if isinstance(conversation, ConversationKey) else ConversationKey.from_id(conversation)
    record, _ = await store.open_record(RecordOpening(key, question, **fields))
    return record
