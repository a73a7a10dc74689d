"""The Slack front end's two ports, measured: every finished question and every delivery's state changes.

Decorators, so neither the pipeline nor the ledger knows about metrics: MeasuredPipeline passes every
event through, times the first answer text (phase first_token) and records Done and Failed
(observe_answered / observe_failed); MeasuredLedger counts each delivery entering a state (a save that
keeps the state, such as another attempt, is not counted) and times it from its first state to delivered
(phase delivery). Everything else is the wrapped object's own.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable

from adapters.observability.metrics import DELIVERIES, PHASE_SECONDS, observe_answered, observe_failed
from adapters.slack.delivery.ledger import Delivery, DeliveryLedger, DeliveryState, EventClaim, Tracked
from adapters.slack.pipeline_port import AnswerPipeline
from core.commands import GiveFeedback, Question
from core.events import AnswerDelta, Done, Failed, Progress
from core.models import CompactionReport
from core.record import Record


class MeasuredPipeline:
    """AnswerPipeline whose finished questions are measured."""

    def __init__(self, inner: AnswerPipeline) -> None:
        self._inner = inner

    async def ask(self, command: Question) -> AsyncIterator[Progress]:
        started, timed = time.monotonic(), False
        async for event in self._inner.ask(command):
            if isinstance(event, AnswerDelta) and event.text and not timed:
                PHASE_SECONDS.labels(phase="first_token").observe(time.monotonic() - started)
                timed = True
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


_ENDED = (DeliveryState.DELIVERED, DeliveryState.FAILED)


class MeasuredLedger:
    """DeliveryLedger whose deliveries' state changes are counted and whose time to delivered is observed.

    What it remembers is this process's: the state last saved and when each delivery was first seen, per
    record, forgotten once the delivery has ended (a delivery another instance began is timed from here).
    """

    def __init__(self, inner: DeliveryLedger, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._inner = inner
        self._clock = clock
        self._last: dict[int, tuple[DeliveryState, float]] = {}

    async def read_delivery(self, record_id: int) -> Delivery | None:
        return await self._inner.read_delivery(record_id)

    async def save_delivery(self, record_id: int, delivery: Delivery) -> Delivery:
        saved = await self._inner.save_delivery(record_id, delivery)
        state, now = delivery.state, self._clock()
        previous, since = self._last.get(record_id, (None, now))
        if state != previous:
            DELIVERIES.labels(state=str(state.value)).inc()
            if state == DeliveryState.DELIVERED:
                PHASE_SECONDS.labels(phase="delivery").observe(now - since)
        if state in _ENDED:
            self._last.pop(record_id, None)
        else:
            self._last[record_id] = (state, since)
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
