"""Bounded history: the latest KB_DIALOGUE_NUMBER answered turns before the current record.

See docs/design.md#bounded-history.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from core.budget import count_tokens
from core.models import ContextStats, LoadedContext, Message, Turn
from core.ports import Conversations
from core.prompt_markup import turn_messages


def turns_to_messages(turns: list[Turn] | tuple[Turn, ...]) -> tuple[Message, ...]:
    """User/assistant pairs in order, escaped as data (stored answers show their escapes read back)."""
    return tuple(message for turn in turns for message in turn_messages(turn.question, turn.answer))


class BoundedHistoryLoader:
    """ContextLoader without compaction: a LIMITed read of the latest turns; 0 disables history."""

    def __init__(self, store: Conversations, *, dialogue_number: int) -> None:
        self._store = store
        self._keep = max(0, min(20, dialogue_number))

    async def load(
        self, conversation_id: str, *, before_id: int, on_compacting: Callable[[], Awaitable[None]]
    ) -> LoadedContext:
        if self._keep == 0:
            return LoadedContext(metadata=ContextStats(enabled=False, recent_rounds=0))
        turns = await self._store.recent_turns(
            conversation_id, before_id=before_id, after_id=0, limit=self._keep
        )
        messages = turns_to_messages(turns)
        return LoadedContext(
            messages=messages,
            turns=tuple(turns),
            metadata=ContextStats(
                enabled=True,
                compacted=False,
                recent_rounds=len(turns),
                estimated_tokens=sum(count_tokens(m.content) for m in messages),
            ),
        )
