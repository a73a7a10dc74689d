"""The Slack adapter's delivery ledger (adapters.slack.delivery.ledger) over the same SQL database as the records.

A record's delivery lives in columns of its row (so a finished record and what it still has to show are read
in one statement), and event claims in their own table. Every write is one statement; taking due deliveries
leases the rows in the same statement (SKIP LOCKED on PostgreSQL), so two instances never take one record.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from adapters.slack.delivery.ledger import Delivery, DeliveryState, EventClaim, Tracked
from adapters.store.database import Database
from adapters.store.errors import record_not_found
from adapters.store.rows import RECORD_COLUMNS, checked_text, record_from_row, storable_text

DELIVERY_COLUMNS = (
    "reply_ref, delivery, delivery_attempts, delivery_error, delivery_due, delivery_parts,"
    " delivery_starting_at, delivery_resumes"
)
_TRACKED_COLUMNS = f"{RECORD_COLUMNS}, {DELIVERY_COLUMNS}"
_UNDELIVERED_DUE = (
    "delivery IN ('pending', 'placeholder') AND status <> 'pending' AND delivery_due <= ? AND updated_at <= ?"
)


class SqlDeliveryLedger:
    """DeliveryLedger over a Database shared with SqlConversationStore."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def read_delivery(self, record_id: int) -> Delivery | None:
        row = await self._db.fetchrow(f"SELECT {DELIVERY_COLUMNS} FROM records WHERE id = ?", (record_id,))
        if row is None:
            raise record_not_found(record_id)
        return delivery_from_row(row)

    async def save_delivery(self, record_id: int, delivery: Delivery) -> Delivery:
        """Every delivery column in one statement (reply_ref None clears it)."""
        row = await self._db.fetchrow(
            "UPDATE records SET delivery = ?, delivery_attempts = ?, delivery_error = ?, delivery_due = ?,"
            " delivery_parts = ?, reply_ref = ?, delivery_starting_at = ?, delivery_resumes = ?"
            f" WHERE id = ? RETURNING {DELIVERY_COLUMNS}",
            (
                delivery.state.value,
                delivery.attempts,
                storable_text(delivery.error),
                delivery.due,
                delivery.parts,
                None if not delivery.reply_ref else checked_text(delivery.reply_ref),
                delivery.starting_at,
                delivery.resumes,
                record_id,
            ),
        )
        if row is None:
            raise record_not_found(record_id)
        saved = delivery_from_row(row)
        assert saved is not None
        return saved

    async def take_due_deliveries(
        self, now: float, *, lease: float, settle: float, limit: int = 20, record_id: int | None = None
    ) -> list[Tracked]:
        """Due, finished, undelivered records, leased to the caller by moving their due time (one statement;
        concurrent takers skip rows another one is leasing, and the outer condition is re-checked)."""
        if limit <= 0:
            return []
        where = _UNDELIVERED_DUE if record_id is None else f"{_UNDELIVERED_DUE} AND id = ?"
        condition = (now, now - settle) if record_id is None else (now, now - settle, record_id)
        rows = await self._db.fetch(
            "UPDATE records SET delivery_due = ? WHERE id IN"
            f" (SELECT id FROM records WHERE {where} ORDER BY delivery_due, id LIMIT ?"
            f"{self._db.dialect.skip_locked})"
            f" AND {where} RETURNING {_TRACKED_COLUMNS}",
            (now + lease, *condition, limit, *condition),
        )
        taken = [_tracked(row) for row in rows]
        return sorted(taken, key=lambda item: item.record.id)

    async def claim_event(self, key: str, *, record_id: int | None = None) -> bool:
        row = await self._db.fetchrow(
            "INSERT INTO event_claims (key, record_id, created_at) VALUES (?, ?, ?)"
            " ON CONFLICT (key) DO NOTHING RETURNING key",
            (checked_text(key), record_id, time.time()),
        )
        return row is not None

    async def find_event(self, key: str) -> EventClaim | None:
        row = await self._db.fetchrow(
            "SELECT key, record_id, created_at FROM event_claims WHERE key = ?", (key,)
        )
        if row is None:
            return None
        record_id = row["record_id"]
        return EventClaim(
            key=row["key"],
            record_id=None if record_id is None else int(record_id),
            created_at=float(row["created_at"]),
        )

    async def prune_events(self, before: float) -> int:
        rows = await self._db.fetch("DELETE FROM event_claims WHERE created_at < ? RETURNING key", (before,))
        return len(rows)


def delivery_from_row(row: Mapping[str, Any]) -> Delivery | None:
    """The delivery columns of a records row; None for a record no chat delivers."""
    if row.get("delivery") is None:
        return None
    return Delivery(
        state=DeliveryState(row["delivery"]),
        attempts=int(row["delivery_attempts"]),
        error=str(row["delivery_error"] or ""),
        due=float(row["delivery_due"]),
        parts=int(row["delivery_parts"]),
        reply_ref=row["reply_ref"] or None,
        starting_at=float(row["delivery_starting_at"]),
        resumes=int(row["delivery_resumes"]),
    )


def _tracked(row: Mapping[str, Any]) -> Tracked:
    delivery = delivery_from_row(row)
    assert delivery is not None  # the query takes undelivered rows only
    return Tracked(record_from_row(row), delivery)
