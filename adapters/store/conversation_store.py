"""Core's store roles (conversations, records, context snapshots) over one Database, SQLite or PostgreSQL.

Every write that changes a record's state is a single statement, so nothing half-written is ever visible:
open_record stores conversation, scope and record in one transaction; complete_record sets answer,
rewritten question, details and status together, and only on a pending
record; fail_record never touches an answered record; save_context is one optimistic upsert guarded by
the revision. History reads are LIMITed, id-bounded queries served by the partial index on answered
records. Backend differences (placeholders, JSON functions, DDL types) live in adapters.store.dialect.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import replace
from types import TracebackType
from typing import Any, Self

from adapters.store.database import Database
from adapters.store.errors import record_not_found, record_not_pending, record_to_answer_not_found
from adapters.store.rows import (
    CONTEXT_COLUMNS,
    DELIVERY_PENDING,
    RECORD_COLUMNS,
    checked_text,
    context_from_row,
    details_patch,
    dump_json,
    record_from_row,
    storable_text,
)
from core.answering.answer import most_cited_first
from core.errors import InvalidInput
from core.messages import phrase
from core.models import (
    ContextSnapshot,
    ConversationKey,
    ConversationScope,
    RecordOpening,
    RecordStatus,
    Turn,
)
from core.record import DETAILS_VERSION, NO_DETAILS, Record, RecordDetails

_SELECT_RECORD = f"SELECT {RECORD_COLUMNS} FROM records WHERE id = ?"
# History turns carry the documents their answers cited (the topic a follow-up continues), read as JSON.
_ANSWERED_BETWEEN = (
    "SELECT id, question, answer, {cited} AS cited FROM records"
    " WHERE conversation_id = ? AND id > ? AND id < ? AND answer IS NOT NULL"
)
_CONTEXT_VALUES = (
    "INSERT INTO conversation_context"
    " (conversation_id, summary, through_record_id, compacted_rounds, revision, updated_at)"
    " VALUES (?, ?, ?, ?, ?, ?)"
)
_FINISHED = (RecordStatus.FAILED, RecordStatus.INTERRUPTED)


class SqlConversationStore:
    """The ConversationStore port over a Database (see the module docstring for the guarantees)."""

    def __init__(self, database: Database) -> None:
        self._db = database
        self._answered_between = _ANSWERED_BETWEEN.format(
            cited=database.dialect.json_member("details", "citations")
        )

    @property
    def database(self) -> Database:
        """The database it runs on (the Slack delivery ledger shares it)."""
        return self._db

    async def close(self) -> None:
        await self._db.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

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

    async def open_record(self, opening: RecordOpening) -> tuple[Record, bool]:
        """One transaction: the conversation (when new), its scope (only where none is stored: the first
        question's wins) and a pending record, or (the record already stored under event_key, False).

        A record with a reply address starts its delivery as pending (due at once: the front end leases
        it before showing anything), so a crash right after opening still leaves it to be delivered.
        Raises InvalidInput for unstorable text.
        """
        key = opening.conversation
        conversation_id = checked_text(key.as_id())
        now = time.time()
        param = self._db.dialect.json_param
        delivery = None if opening.reply_to is None else DELIVERY_PENDING
        async with self._db.transaction() as transaction:
            await transaction.fetch(
                "INSERT INTO conversations (id, source, team_id, channel_id, thread_ts, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                (conversation_id, key.source, key.team_id, key.channel_id, key.thread_ts, now),
            )
            await transaction.fetch(
                f"UPDATE conversations SET scope = COALESCE(scope, {param}) WHERE id = ?",
                (dump_json(opening.scope.to_dict()), conversation_id),
            )
            row = await transaction.fetchrow(
                "INSERT INTO records"
                " (conversation_id, question, status, event_key, created_at, updated_at, asked_by, reply_to,"
                " delivery, delivery_due)"
                " VALUES (?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?)"
                f" ON CONFLICT (event_key) DO NOTHING RETURNING {RECORD_COLUMNS}",
                (
                    conversation_id,
                    checked_text(opening.question),
                    _checked_optional(opening.event_key),
                    now,
                    now,
                    _checked_optional(opening.asked_by),
                    _checked_optional(opening.reply_to),
                    delivery,
                    now,
                ),
            )
            if row is not None:
                return record_from_row(row), True
            existing = await transaction.fetchrow(
                f"SELECT {RECORD_COLUMNS} FROM records WHERE event_key = ?", (opening.event_key,)
            )
        if existing is None:  # pragma: no cover - records are never deleted
            raise RuntimeError(f"event key {opening.event_key!r} conflicted but no record holds it")
        return record_from_row(existing), False

    async def get_record(self, record_id: int) -> Record | None:
        row = await self._db.fetchrow(_SELECT_RECORD, (record_id,))
        return record_from_row(row) if row else None

    async def find_record(self, event_key: str) -> Record | None:
        row = await self._db.fetchrow(
            f"SELECT {RECORD_COLUMNS} FROM records WHERE event_key = ?", (event_key,)
        )
        return record_from_row(row) if row else None

    async def recent_turns(
        self, conversation_id: str, *, before_id: int, after_id: int, limit: int
    ) -> list[Turn]:
        """The latest `limit` answered turns with after_id < id < before_id, oldest first."""
        if limit <= 0:
            return []
        rows = await self._db.fetch(
            f"{self._answered_between} ORDER BY id DESC LIMIT ?",
            (conversation_id, after_id, before_id, limit),
        )
        return [_turn(row) for row in reversed(rows)]

    async def turns_after(
        self, conversation_id: str, *, after_id: int, before_id: int, limit: int = 20
    ) -> list[Turn]:
        """The first `limit` answered turns with after_id < id < before_id, oldest first (one page)."""
        if limit <= 0:
            return []
        rows = await self._db.fetch(
            f"{self._answered_between} ORDER BY id LIMIT ?", (conversation_id, after_id, before_id, limit)
        )
        return [_turn(row) for row in rows]

    async def complete_record(
        self, record_id: int, *, answer: str, rewritten: str | None, details: RecordDetails
    ) -> Record:
        """Answer, rewritten question, details (their JSON's top-level keys merged into the stored ones)
        and status in one statement.

        Only a pending record can be completed: an answered one is never overwritten (re_chat calls
        reset_record first) and a failed or interrupted one stays as its user was told. Raises NotAllowed
        for those, NotFound for an unknown id.
        """
        merge, merge_params = self._db.dialect.merge_json("details", details_patch(details.to_json()))
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
        self, record_id: int, *, status: RecordStatus, reason: str, details: RecordDetails = NO_DETAILS
    ) -> Record:
        """Mark failed or interrupted, merging the details with the reason as their failure (as
        complete_record merges); an answered record is returned unchanged. Raises InvalidInput for another
        status, NotFound for an unknown id."""
        if status not in _FINISHED:
            raise InvalidInput(phrase("error.bad_failure_status", status=status))
        patch = details_patch(replace(details, failure=reason).to_json())
        merge, merge_params = self._db.dialect.merge_json("details", patch)
        row = await self._db.fetchrow(
            f"UPDATE records SET status = ?, details = {merge}, updated_at = ?"
            f" WHERE id = ? AND status <> 'answered' RETURNING {RECORD_COLUMNS}",
            (status.value, *merge_params, time.time(), record_id),
        )
        return record_from_row(row) if row else await self._require(record_id)

    async def reopen_record(self, record_id: int, conversation_id: str) -> Record:
        """Back to pending to answer again. The finished attempt (status, answer, rewritten, updated_at and
        its details) is appended to details["previous_answers"]; the new details hold only that list (and
        the version).
        A pending record is returned unchanged. Raises NotFound for an unknown id or one of another
        conversation."""
        archive = self._db.dialect.archive_attempt("details", version=DETAILS_VERSION)
        row = await self._db.fetchrow(
            f"UPDATE records SET details = {archive}, status = 'pending', answer = NULL, rewritten = NULL,"
            " updated_at = ? WHERE id = ? AND conversation_id = ? AND status <> 'pending'"
            f" RETURNING {RECORD_COLUMNS}",
            (time.time(), record_id, conversation_id),
        )
        if row is not None:
            return record_from_row(row)
        current = await self.get_record(record_id)
        if current is None or current.conversation_id != conversation_id:
            raise record_to_answer_not_found(record_id)
        return current

    async def add_feedback(self, record_id: int, *, person: str, value: str, at: float) -> Record | None:
        """details["feedback"][person] = {"value", "at"} in one statement (other people's kept)."""
        if not person or '"' in person:
            raise InvalidInput(phrase("error.bad_feedback_person", person=person))
        expression, params = self._db.dialect.set_json_child(
            "details", "feedback", checked_text(person), dump_json({"value": value, "at": at})
        )
        row = await self._db.fetchrow(
            f"UPDATE records SET details = {expression} WHERE id = ? RETURNING {RECORD_COLUMNS}",
            (*params, record_id),
        )
        return record_from_row(row) if row else None

    async def list_records(self, conversation_id: str, *, limit: int = 100) -> list[Record]:
        """The latest `limit` records of the conversation (any status), oldest first."""
        if limit <= 0:
            return []
        rows = await self._db.fetch(
            f"SELECT {RECORD_COLUMNS} FROM records WHERE conversation_id = ? ORDER BY id DESC LIMIT ?",
            (conversation_id, limit),
        )
        return [record_from_row(row) for row in reversed(rows)]

    async def answered_since(self, since: float, *, limit: int = 10000) -> list[Record]:
        """Answered records of every conversation created at or after `since` (epoch seconds), newest first."""
        rows = await self._db.fetch(
            f"SELECT {RECORD_COLUMNS} FROM records WHERE status = 'answered' AND created_at >= ?"
            " ORDER BY id DESC LIMIT ?",
            (since, limit),
        )
        return [record_from_row(row) for row in rows]

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
    return Turn(
        record_id=int(row["id"]),
        question=row["question"],
        answer=row["answer"],
        cited=cited_documents(row["cited"], row["answer"] or ""),
    )


def cited_documents(value: Any, answer: str = "") -> tuple[str, ...]:
    """The document names of a stored citations list (JSON text), without repeats, the one the answer
    cites most first (core.answering.answer.most_cited_first)."""
    data = json.loads(value) if isinstance(value, str) else value
    if not isinstance(data, list):
        return ()
    numbered = [
        (int(item["n"]) if isinstance(item.get("n"), int) else -1 - index, str(item.get("document")))
        for index, item in enumerate(data)
        if isinstance(item, dict) and item.get("document")
    ]
    return most_cited_first(answer, numbered)


def _checked_optional(value: str | None) -> str | None:
    return None if value is None else checked_text(value)
