"""The narrow interface the Slack face needs from core's pipeline (core/pipeline.py implements it)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

from core.events import Progress
from core.models import CompactionReport, Question, Record
from core.ports import ConversationLock, ConversationStore


class AnswerPipeline(Protocol):
    """Answers questions as a stream of progress events; compacts; recovers records left pending."""

    @property
    def store(self) -> ConversationStore: ...

    @property
    def lock(self) -> ConversationLock:
        """The per-conversation lock answers hold (the orphan sweep probes it)."""
        ...

    def ask(self, question: Question) -> AsyncIterator[Progress]:
        """Queued?, ContextLoading, Compacting?, Retrieving/Assessed*, Generating, AnswerDelta*, Notice?,
        then exactly one Done or Failed (code "duplicate" for an event_key already used, or for a
        question.record_id that is no longer pending)."""
        ...

    async def compact(self, conversation_id: str) -> CompactionReport: ...

    async def interrupt_pending(self) -> list[Record]:
        """Mark records left pending as interrupted and return them (reply_ref = "channel:ts")."""
        ...
