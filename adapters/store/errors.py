"""Store errors: vendor database errors mapped to core.errors types with user-safe messages."""

from __future__ import annotations

from core.errors import InvalidInput, NotAllowed, NotFound, StoreUnavailable
from core.messages import phrase

__all__ = [
    "StoreUnavailable",
    "conversation_not_found",
    "record_not_found",
    "record_not_pending",
    "record_to_answer_not_found",
    "unstorable_text",
]


def conversation_not_found(detail: str = "") -> NotFound:
    """A record or context was written for a conversation that was never created."""
    return NotFound(phrase("error.conversation_missing"), detail=detail or None)


def record_not_found(record_id: int) -> NotFound:
    return NotFound(phrase("error.record_not_found", record_id=record_id))


def record_to_answer_not_found(record_id: int) -> NotFound:
    """Answering again a record that does not exist, or not in the conversation asking."""
    return NotFound(phrase("error.record_to_answer_not_found", record_id=record_id))


def record_not_pending(record_id: int, status: str) -> NotAllowed:
    """complete_record on a record that is no longer being generated (answered, failed, interrupted)."""
    return NotAllowed(phrase("error.record_not_pending", record_id=record_id, status=status))


def unstorable_text(detail: str = "") -> InvalidInput:
    """Input the database cannot hold: NUL characters, unpaired surrogates, out-of-range numbers."""
    return InvalidInput(phrase("error.unstorable_text"), detail=detail or None)
