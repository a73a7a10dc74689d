"""The delivery ledger port: what each Slack question's reply shows, and the events already taken.

Slack's bookkeeping, owned by the Slack adapter (core knows nothing of it): a record's delivery state
(pending → placeholder → delivered, or failed), its attempts, last error, the due time of its next attempt
(a lease while an instance delivers it), how many final parts are posted, the visible reply's "channel:ts",
when a first message was sent whose ts is not known yet (adapters.slack.delivery.lost_replies), and how
often the question was answered again after an interruption; plus claims of event ids and message keys so that one Slack event becomes one thing across
every instance. The SQL store implements it beside core's roles (adapters.store.delivery_ledger).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from core.record import Record


class DeliveryState(StrEnum):
    """Where a record's reply stands: nothing shown yet, a placeholder shown, the final message
    acknowledged by Slack, or given up on."""

    PENDING = "pending"
    PLACEHOLDER = "placeholder"
    DELIVERED = "delivered"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class Delivery:
    """A record's delivery: its state, how many attempts were made, the last error, when the next attempt
    is due (a lease while an instance is delivering it), how many final messages are already posted, the
    visible reply ("channel:ts" of the placeholder or first final part; None before one is shown), when
    the reply's first message was last sent while its ts is unknown (epoch seconds; 0 when none is
    outstanding: written before the call, cleared once the reply is known or surely not posted), and how
    many times an interrupted question was answered again."""

    state: DeliveryState = DeliveryState.PENDING
    attempts: int = 0
    error: str = ""
    due: float = 0.0
    parts: int = 0
    reply_ref: str | None = None
    starting_at: float = 0.0
    resumes: int = 0

    @property
    def reply_ts(self) -> str | None:
        """The ts of the visible reply, from reply_ref "channel:ts"."""
        _, _, ts = (self.reply_ref or "").partition(":")
        return ts or None

    @property
    def reply_unknown(self) -> bool:
        """A first message was sent and may be in the thread, but its ts never came back (a crash, a lost
        response): look for it before showing anything new."""
        return self.starting_at > 0 and self.reply_ref is None


@dataclass(frozen=True, slots=True)
class Tracked:
    """A record as the Slack adapter delivers it: the record (read only) and its delivery."""

    record: Record
    delivery: Delivery


@dataclass(frozen=True, slots=True)
class EventClaim:
    """An incoming event (a Slack event id, a message handled without a record) already taken by some
    instance, and the record it became, if any."""

    key: str
    record_id: int | None = None
    created_at: float = 0.0


class DeliveryLedger(Protocol):
    """Delivery states of records and claims of events, shared by every instance."""

    async def read_delivery(self, record_id: int) -> Delivery | None:
        """The record's delivery; None for a record no chat delivers (asked from the terminal)."""
        ...

    async def save_delivery(self, record_id: int, delivery: Delivery) -> Delivery:
        """Write the whole delivery in one statement (never the record's status, answer or updated_at).
        NotFound for an unknown record."""
        ...

    async def take_due_deliveries(
        self, now: float, *, lease: float, settle: float, limit: int = 20, record_id: int | None = None
    ) -> list[Tracked]:
        """Finished records (not pending) whose delivery is pending or placeholder, due at `now`, and
        unchanged for `settle` seconds (only record_id when given); their due time moves to now + lease in
        the same statement, so two instances never take the same record."""
        ...

    async def claim_event(self, key: str, *, record_id: int | None = None) -> bool:
        """Remember an event key; False when some instance already claimed it."""
        ...

    async def find_event(self, key: str) -> EventClaim | None:
        """The claim of an event key, if any."""
        ...

    async def prune_events(self, before: float) -> int:
        """Forget event claims made before `before` (epoch seconds); returns how many."""
        ...
