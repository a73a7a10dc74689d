"""The ConversationStore port implemented once over a Database, for SQLite and PostgreSQL alike.

Every write that changes a record's state is a single statement, so nothing half-written is ever visible:
complete_record sets answer, rewritten question, details and status together, and only on a pending
record; fail_record never touches an answered record; save_context is one optimistic upsert guarded by
the revision. History reads are LIMITed, id-bounded queries served by the partial index on answered
records. Backend differences (placeholders, JSON functions, DDL types) live in adapters.store.dialect.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Self

from adapters.store.database import Database
from adapters.store.errors import conversation_not_found, record_not_found, record_not_pending
from adapters.store.rows import (
    CONTEXT_COLUMNS,
    RECORD_COLUMNS,
    checked_text,
    context_from_row,
    details_patch,
    dump_json,
    record_from_row,
    storable_text,
)
from core.errors import InvalidInput
from core.models import (
    ContextSnapshot,
    ConversationKey,
    ConversationScope,
    Delivery,
    EventClaim,
    Record,
    RecordStatus,
    Turn,
)

_SELECT_RECORD = f"SELECT {RECORD_COLUMNS} FROM records WHERE id = ?"
_ANSWERED_BETWEEN = (
    "SELECT id, question, answer FROM records"
    " WHERE conversation_id = ? AND id > ? AND id < ? AND answer IS NOT NULL"
)
_CONTEXT_VALUES = (
    "INSERT INTO conversation_context"
    " (conversation_id, summary, through_record_id, compacted_rounds, revision, updated_at)"
    " VALUES (?, ?, ?, ?, ?, ?)"
)
_FINISHED = (RecordStatus.FAILED, RecordStatus.INTERRUPTED)
_UNDELIVERED_DUE = (
    "delivery IN ('pending', 'placeholder') AND status <> 'pending' AND delivery_due <= ? AND updated_at <= ?"
)


class SqlConversationStore:
    """The ConversationStore port over a Database (see the module docstring for the guarantees)."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def close(self) -> None:
        await self._db.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def ensure_conversation(self, key: ConversationKey) -> str:
        conversation_id = checked_text(key.as_id())
        await self._db.fetch(
            "INSERT INTO conversations (id, source, team_id, channel_id, thread_ts, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
            (conversation_id, key.source, key.team_id, key.channel_id, key.thread_ts, time.time()),
        )
        return conversation_id

    async def find_conversation(self, key: ConversationKey) -> str | None:
        row = await self._db.fetchrow("SELECT id FROM conversations WHERE id = ?", (key.as_id(),))
        return None if row is None else str(row["id"])

    async def match_conversations(self, reference: str, *, limit: int = 10) -> list[str]:
        """Ids starting with reference, channels starting with it (a `kb ask` name), threads equal to it.

        Newest first. A full scan of the conversations table: only the command line calls this.
        """
        reference = checked_text(reference)
        if not reference or limit <= 0:
            return []
        size = len(reference)
        rows = await self._db.fetch(
            "SELECT id FROM conversations WHERE substr(id, 1, ?) = ? OR substr(channel_id, 1, ?) = ?"
            " OR thread_ts = ? ORDER BY created_at DESC, id LIMIT ?",
            (size, reference, size, reference, reference, limit),
        )
        return [str(row["id"]) for row in rows]

    async def read_scope(self, conversation_id: str) -> ConversationScope | None:
        row = await self._db.fetchrow("SELECT scope FROM conversations WHERE id = ?", (conversation_id,))
        return None if row is None else _scope(row["scope"])

    async def save_scope(self, conversation_id: str, scope: ConversationScope) -> ConversationScope:
        """One statement: the scope is written only where none is stored; returns the stored scope."""
        param = self._db.dialect.json_param
        row = await self._db.fetchrow(
            f"UPDATE conversations SET scope = COALESCE(scope, {param}) WHERE id = ? RETURNING scope",
            (dump_json(scope.to_dict()), conversation_id),
        )
        stored = None if row is None else _scope(row["scope"])
        if stored is None:
            raise conversation_not_found(conversation_id)
        return stored

    async def add_question(
        self,
        conversation_id: str,
        question: str,
        *,
        event_key: str | None = None,
        reply_ref: str | None = None,
        delivery: Delivery | None = None,
        asked_by: str | None = None,
    ) -> tuple[Record, bool]:
        """A new pending record, or (the record already stored under event_key, False).

        Raises NotFound when the conversation was never created, InvalidInput for unstorable text.
        """
        now = time.time()
        row = await self._db.fetchrow(
            "INSERT INTO records"
            " (conversation_id, question, status, event_key, reply_ref, created_at, updated_at,"
            " delivery, delivery_attempts, delivery_error, delivery_due, delivery_parts, asked_by)"
            " VALUES (?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            f" ON CONFLICT (event_key) DO NOTHING RETURNING {RECORD_COLUMNS}",
            (
                conversation_id,
                checked_text(question),
                _checked_optional(event_key),
                _checked_optional(reply_ref),
                now,
                now,
                *_delivery_values(delivery),
                _checked_optional(asked_by),
            ),
        )
        if row is not None:
            return record_from_row(row), True
        existing = await self._db.fetchrow(
            f"SELECT {RECORD_COLUMNS} FROM records WHERE event_key = ?", (event_key,)
        )
        if existing is None:  # pragma: no cover - records are never deleted
            raise RuntimeError(f"event key {event_key!r} conflicted but no record holds it")
        return record_from_row(existing), False

    async def get_record(self, record_id: int) -> Record | None:
        row = await self._db.fetchrow(_SELECT_RECORD, (record_id,))
        return record_from_row(row) if row else None

    async def find_record(self, event_key: str) -> Record | None:
        row = await self._db.fetchrow(
            f"SELECT {RECORD_COLUMNS} FROM records WHERE event_key = ?", (event_key,)
        )
        return record_from_row(row) if row else None

    async def save_delivery(
        self, record_id: int, delivery: Delivery, *, reply_ref: str | None = None
    ) -> Record:
        """The delivery columns (and reply_ref unless None; "" clears it) in one statement."""
        ref_sql, ref_params = ("", []) if reply_ref is None else (", reply_ref = ?", [reply_ref or None])
        row = await self._db.fetchrow(
            "UPDATE records SET delivery = ?, delivery_attempts = ?, delivery_error = ?, delivery_due = ?,"
            f" delivery_parts = ?{ref_sql} WHERE id = ? RETURNING {RECORD_COLUMNS}",
            (*_delivery_values(delivery), *ref_params, record_id),
        )
        if row is None:
            raise record_not_found(record_id)
        return record_from_row(row)

    async def take_due_deliveries(
        self, now: float, *, lease: float, settle: float, limit: int = 20, record_id: int | None = None
    ) -> list[Record]:
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
            f" AND {where} RETURNING {RECORD_COLUMNS}",
            (now + lease, *condition, limit, *condition),
        )
        return sorted((record_from_row(row) for row in rows), key=lambda record: record.id)

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

    async def recent_turns(
        self, conversation_id: str, *, before_id: int, after_id: int, limit: int
    ) -> list[Turn]:
        """The latest `limit` answered turns with after_id < id < before_id, oldest first."""
        if limit <= 0:
            return []
        rows = await self._db.fetch(
            f"{_ANSWERED_BETWEEN} ORDER BY id DESC LIMIT ?", (conversation_id, after_id, before_id, limit)
        )
        return [_turn(row) for row in reversed(rows)]

    async def turns_after(
        self, conversation_id: str, *, after_id: int, before_id: int, limit: int = 20
    ) -> list[Turn]:
        """The first `limit` answered turns with after_id < id < before_id, oldest first (one page)."""
        if limit <= 0:
            return []
        rows = await self._db.fetch(
            f"{_ANSWERED_BETWEEN} ORDER BY id LIMIT ?", (conversation_id, after_id, before_id, limit)
        )
        return [_turn(row) for row in rows]

    async def complete_record(
        self, record_id: int, *, answer: str, rewritten: str | None, details: dict[str, Any]
    ) -> Record:
        """Answer, rewritten question, details (merged into the existing keys) and status in one statement.

        Only a pending record can be completed: an answered one is never overwritten (re_chat calls
        reset_record first) and a failed or interrupted one stays as its user was told. Raises NotAllowed
        for those, NotFound for an unknown id.
        """
        merge, merge_params = self._db.dialect.merge_json("details", details_patch(details))
        row = await self._db.fetchrow(
            f"UPDATE records SET answer = ?, rewritten = ?, details = {merge}, status = 'answered',"
            f" updated_at = ? WHERE id = ? AND status = 'pending' RETURNING {RECORD_COLUMNS}",
            (
                storable_text(answer),
                None if rewritten is None else storable_text(rewritten),
                *merge_params,
                time.time(),
                record_id,
            ),
        )
        if row is not None:
            return record_from_row(row)
        current = await self._require(record_id)
        raise record_not_pending(record_id, current.status.value)

    async def fail_record(
        self, record_id: int, *, status: RecordStatus, reason: str, details: dict[str, Any] | None = None
    ) -> Record:
        """Mark failed or interrupted, merging details plus {"failure": reason}; an answered record is
        returned unchanged. Raises InvalidInput for another status, NotFound for an unknown id."""
        if status not in _FINISHED:
            raise InvalidInput("记录状态无效。", f"fail_record takes failed or interrupted, not {status!r}.")
        patch = details_patch({**(details or {}), "failure": reason})
        merge, merge_params = self._db.dialect.merge_json("details", patch)
        row = await self._db.fetchrow(
            f"UPDATE records SET status = ?, details = {merge}, updated_at = ?"
            f" WHERE id = ? AND status <> 'answered' RETURNING {RECORD_COLUMNS}",
            (status.value, *merge_params, time.time(), record_id),
        )
        return record_from_row(row) if row else await self._require(record_id)

    async def reset_record(self, record_id: int) -> Record:
        """Back to pending for re_chat. The finished attempt (status, answer, rewritten, updated_at and
        its details) is appended to details["previous_answers"]; the new details hold only that list.
        A pending record is returned unchanged. Raises NotFound for an unknown id."""
        archive = self._db.dialect.archive_attempt("details")
        row = await self._db.fetchrow(
            f"UPDATE records SET details = {archive}, status = 'pending', answer = NULL, rewritten = NULL,"
            f" updated_at = ? WHERE id = ? AND status <> 'pending' RETURNING {RECORD_COLUMNS}",
            (time.time(), record_id),
        )
        return record_from_row(row) if row else await self._require(record_id)

    async def set_reply_ref(self, record_id: int, reply_ref: str) -> None:
        row = await self._db.fetchrow(
            "UPDATE records SET reply_ref = ?, updated_at = ? WHERE id = ? RETURNING id",
            (checked_text(reply_ref), time.time(), record_id),
        )
        if row is None:
            raise record_not_found(record_id)

    async def update_details(self, record_id: int, patch: dict[str, Any]) -> None:
        """Set these top-level keys of the record's details (other keys kept). NotFound for an unknown id."""
        merge, merge_params = self._db.dialect.merge_json("details", details_patch(patch))
        row = await self._db.fetchrow(
            f"UPDATE records SET details = {merge}, updated_at = ? WHERE id = ? RETURNING id",
            (*merge_params, time.time(), record_id),
        )
        if row is None:
            raise record_not_found(record_id)

    async def list_records(self, conversation_id: str, *, limit: int = 100) -> list[Record]:
        """The latest `limit` records of the conversation (any status), oldest first."""
        if limit <= 0:
            return []
        rows = await self._db.fetch(
            f"SELECT {RECORD_COLUMNS} FROM records WHERE conversation_id = ? ORDER BY id DESC LIMIT ?",
            (conversation_id, limit),
        )
        return [record_from_row(row) for row in reversed(rows)]

    async def recent_questions(self, asked_by: str, *, limit: int = 5) -> list[Record]:
        """The person's latest `limit` records, newest first (served by the asked_by index)."""
        if limit <= 0 or not asked_by:
            return []
        rows = await self._db.fetch(
            f"SELECT {RECORD_COLUMNS} FROM records WHERE asked_by = ? ORDER BY id DESC LIMIT ?",
            (asked_by, limit),
        )
        return [record_from_row(row) for row in rows]

    async def pending_records(self) -> list[Record]:
        """Every record still pending, oldest first (at start-up: those a crash left behind)."""
        rows = await self._db.fetch(
            f"SELECT {RECORD_COLUMNS} FROM records WHERE status = 'pending' ORDER BY id"
        )
        return [record_from_row(row) for row in rows]

    async def read_context(self, conversation_id: str) -> ContextSnapshot:
        """The stored summary and watermark, or a zero snapshot (revision 0) when there is none."""
        row = await self._db.fetchrow(
            f"SELECT {CONTEXT_COLUMNS} FROM conversation_context WHERE conversation_id = ?",
            (conversation_id,),
        )
        return context_from_row(row)

    async def save_context(
        self, conversation_id: str, *, expected_revision: int, snapshot: ContextSnapshot
    ) -> bool:
        """One statement that writes only if the stored revision equals expected_revision (an absent row
        counts as revision 0). The stored revision becomes expected_revision + 1 and updated_at now,
        whatever the snapshot says. False on a conflict; NotFound for an unknown conversation."""
        values = (
            conversation_id,
            storable_text(snapshot.summary),
            snapshot.through_record_id,
            snapshot.compacted_rounds,
            expected_revision + 1,
            time.time(),
        )
        if expected_revision == 0:
            statement = (
                f"{_CONTEXT_VALUES} ON CONFLICT (conversation_id) DO UPDATE SET"
                " summary = excluded.summary, through_record_id = excluded.through_record_id,"
                " compacted_rounds = excluded.compacted_rounds, revision = excluded.revision,"
                " updated_at = excluded.updated_at"
                " WHERE conversation_context.revision = 0 RETURNING revision"
            )
            row = await self._db.fetchrow(statement, values)
        else:
            row = await self._db.fetchrow(
                "UPDATE conversation_context SET summary = ?, through_record_id = ?, compacted_rounds = ?,"
                " revision = ?, updated_at = ? WHERE conversation_id = ? AND revision = ? RETURNING revision",
                (*values[1:], conversation_id, expected_revision),
            )
        return row is not None

    async def _require(self, record_id: int) -> Record:
        record = await self.get_record(record_id)
        if record is None:
            raise record_not_found(record_id)
        return record


def _scope(value: Any) -> ConversationScope | None:
    data = json.loads(value) if isinstance(value, str) else value
    return ConversationScope.from_dict(data) if isinstance(data, dict) else None


def _turn(row: Mapping[str, Any]) -> Turn:
    return Turn(record_id=int(row["id"]), question=row["question"], answer=row["answer"])


def _delivery_values(delivery: Delivery | None) -> tuple[Any, ...]:
    if delivery is None:
        return (None, 0, "", 0.0, 0)
    return (
        delivery.state.value,
        delivery.attempts,
        storable_text(delivery.error),
        delivery.due,
        delivery.parts,
    )


def _checked_optional(value: str | None) -> str | None:
    return None if value is None else checked_text(value)
