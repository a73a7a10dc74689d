"""The Slack front end's two ports, measured: every finished question and every saved delivery state.

Decorators, so neither the pipeline nor the ledger knows about metrics: MeasuredPipeline passes every
event through and records Done and Failed (observe_answered / observe_failed); MeasuredLedger counts the
state of each delivery it saves. Everything else is the wrapped object's own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from adapters.observability.metrics import DELIVERIES, observe_answered, observe_failed
from adapters.slack.delivery.ledger import Delivery, DeliveryLedger, EventClaim, Tracked
from adapters.slack.pipeline_port import AnswerPipeline
from core.commands import GiveFeedback, Question
from core.events import Done, Failed, Progress
from core.models import CompactionReport
from core.record import Record


class MeasuredPipeline:
    """AnswerPipeline whose finished questions are measured."""

    def __init__(self, inner: AnswerPipeline) -> None:
        self._inner = inner

    async def ask(self, command: Question) -> AsyncIterator[Progress]:
        async for event in self._inner.ask(command):
            if isinstance(event, Done):
                observe_answered(event.record)
            elif isinstance(event, Failed) and event.code != "duplicate":
                observe_failed(event.code, event.record)
            yield event

    async def feedback(self, command: GiveFeedback) -> Record | None:
        return await self._inner.feedback(command)

    async def compact(self, conversation_id: str) -> CompactionReport:
        return await self._inner.compact(conversation_id)

    async def interrupt_pending(self) -> list[Record]:
        return await self._inner.interrupt_pending()

    async def sweep_orphans(self) -> list[Record]:
        return await self._inner.sweep_orphans()


class MeasuredLedger:
    """DeliveryLedger whose saved delivery states are counted."""

    def __init__(self, inner: DeliveryLedger) -> None:
        self._inner = inner

    async def read_delivery(self, record_id: int) -> Delivery | None:
        return await self._inner.read_delivery(record_id)

    async def save_delivery(self, record_id: int, delivery: Delivery) -> Delivery:
        saved = await self._inner.save_delivery(record_id, delivery)
        DELIVERIES.labels(state=str(delivery.state.value)).inc()
        return saved

    async def take_due_deliveries(
        self, now: float, *, lease: float, settle: float, limit: int = 20, record_id: int | None = None
    ) -> list[Tracked]:
        return await self._inner.take_due_deliveries(
            now, lease=lease, settle=settle, limit=limit, record_id=record_id
        )

    async def claim_event(self, key: str, *, record_id: int | None = None) -> bool:
        return await self._inner.claim_event(key, record_id=record_id)

    async def find_event(self, key: str) -> EventClaim | None:
        return await self._inner.find_event(key)

    async def prune_events(self, before: float) -> int:
        return await self._inner.prune_events(before)
