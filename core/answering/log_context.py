"""The question a log line belongs to: record and conversation ids bound while the pipeline works on it.

Context variables, so every log line emitted while answering (in this task, or a worker thread started
from it) can name them; the JSON log format reads them (bot/logs.py). Ids only, never text.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

_RECORD: ContextVar[int | None] = ContextVar("kb_record_id", default=None)
_CONVERSATION: ContextVar[str | None] = ContextVar("kb_conversation_id", default=None)


@contextlib.contextmanager
def bound(*, record_id: int, conversation_id: str) -> Iterator[None]:
    """Name this record and conversation in the log lines emitted inside the block."""
    record, conversation = _RECORD.set(record_id), _CONVERSATION.set(conversation_id)
    try:
        yield
    finally:
        _RECORD.reset(record)
        _CONVERSATION.reset(conversation)


def current() -> dict[str, object]:
    """The bound ids ({} outside a question)."""
    found: dict[str, object] = {}
    if (record := _RECORD.get()) is not None:
        found["record_id"] = record
    if (conversation := _CONVERSATION.get()) is not None:
        found["conversation_id"] = conversation
    return found
