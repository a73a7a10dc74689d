"""What the Slack face needs from core: the pipeline's commands, and read-only access to records.

The Slack adapter never writes a record: questions, answering again and feedback go to the pipeline as
commands (core.commands); it reads records and conversations through SlackReads, and keeps its own
bookkeeping (deliveries, event claims) in its ledger (adapters.slack.delivery.ledger).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

from core.commands import GiveFeedback, Question
from core.events import Progress
from core.models import CompactionReport, ConversationKey
from core.ports import RecordReader
from core.record import Record


class SlackReads(RecordReader, Protocol):
    """The reads the Slack surfaces make: records, and whether a thread has a conversation."""

    async def find_conversation(self, key: ConversationKey) -> str | None:
        """The conversation's id if it exists, without creating it."""
        ...


class AnswerPipeline(Protocol):
    """Answers questions as a stream of progress events; keeps feedback; compacts; recovers leftovers."""

    def ask(self, command: Question) -> AsyncIterator[Progress]:
        """Accepted (the stored record), Queued?, ContextLoading, Compacting?, Retrieving/Assessed*,
        Generating, AnswerDelta*, Notice?, then exactly one Done or Failed (code "duplicate" with the
        record already stored under the event key; no record for bad input)."""
        ...

    async def feedback(self, command: GiveFeedback) -> Record | None: ...

    async def compact(self, conversation_id: str) -> CompactionReport: ...

    async def interrupt_pending(self) -> list[Record]:
        """Mark records left pending (by a crash) as interrupted and return them."""
        ...

    async def sweep_orphans(self) -> list[Record]:
        """Interrupt questions another, stopped instance left pending; return them."""
        ...
