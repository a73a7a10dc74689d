"""Contract tests of who asked a record and a person's recent questions, on SQLite and PostgreSQL alike."""

from __future__ import annotations

from adapters.store.backends import SqlConversationStore
from adapters.store.schema import MIGRATIONS
from core.models import ConversationKey, RecordOpening, RecordStatus
from tests.adapters import test_sql_store
from tests.adapters.test_sql_store import Backend, add, new_conversation
from tests.fakes import InMemoryConversationStore

backend = test_sql_store.backend  # the same fixtures: a fresh SQLite file and PostgreSQL schema
store = test_sql_store.store


async def _ask(
    store: SqlConversationStore | InMemoryConversationStore, thread: str, question: str, who: str | None
) -> int:
    opening = RecordOpening(
        ConversationKey("slack", "T1", "C1", thread),
        question,
        event_key=f"slack:T1:C1:{question}",
        asked_by=who,
        reply_to="C1:" + thread,
    )
    record, _ = await store.open_record(opening)
    return record.id


async def test_the_asker_is_stored_and_read_back(store: SqlConversationStore) -> None:
    """open_record keeps asked_by; a record without one (the CLI) reads None."""
    conversation = new_conversation()
    mine, _ = await add(store, conversation, "mine?", asked_by="slack:T1:U1")
    cli, _ = await add(store, conversation, "cli?")
    assert (await store.get_record(mine.id)).asked_by == "slack:T1:U1"  # type: ignore[union-attr]
    assert mine.asked_by == "slack:T1:U1" and cli.asked_by is None


async def test_recent_questions_are_one_persons_latest_newest_first(store: SqlConversationStore) -> None:
    """Across threads and statuses, only that person's records, newest first, at most `limit`."""
    ids = [await _ask(store, f"1.{i}", f"q{i}", "slack:T1:U1") for i in range(7)]
    await _ask(store, "1.0", "someone else", "slack:T1:U2")
    await _ask(store, "1.0", "from the cli", None)
    await store.fail_record(ids[6], status=RecordStatus.FAILED, reason="x")
    recent = await store.recent_questions("slack:T1:U1")
    assert [r.id for r in recent] == list(reversed(ids))[:5]
    assert recent[0].status == RecordStatus.FAILED and recent[0].question == "q6"
    assert [r.id for r in await store.recent_questions("slack:T1:U1", limit=2)] == [ids[6], ids[5]]
    assert await store.recent_questions("slack:T1:U1", limit=0) == []
    assert await store.recent_questions("slack:T1:U9") == []
    assert [r.question for r in await store.recent_questions("slack:T1:U2")] == ["someone else"]


async def test_records_from_before_the_asker_column_have_none(backend: Backend) -> None:
    """A database at version 3 is upgraded in place: its records are kept, with no asker."""
    old = await backend.open(MIGRATIONS[:3])
    conversation = new_conversation()
    await old.close()
    await backend.query(
        f"INSERT INTO conversations (id, source, created_at) VALUES ('{conversation}', 'slack', 1)"
    )
    # Written as version 3's code wrote it (today's store writes a column that version lacks).
    await backend.query(
        "INSERT INTO records (conversation_id, question, status, created_at, updated_at, delivery)"
        f" VALUES ('{conversation}', 'old question', 'pending', 1, 1, 'pending')"
    )
    upgraded = await backend.open(MIGRATIONS)
    try:
        [kept] = await upgraded.list_records(conversation)
        assert kept.question == "old question" and kept.asked_by is None
        assert await upgraded.recent_questions("slack:T1:U1") == []
    finally:
        await upgraded.close()


async def test_the_in_memory_store_has_the_same_recent_questions() -> None:
    """The fake used by core and Slack tests answers recent_questions like the SQL stores."""
    fake = InMemoryConversationStore()
    ids = [await _ask(fake, "1.1", f"q{i}", "slack:T1:U1") for i in range(6)]
    await _ask(fake, "1.1", "other", "slack:T1:U2")
    assert [r.id for r in await fake.recent_questions("slack:T1:U1")] == list(reversed(ids))[:5]
    assert await fake.recent_questions("slack:T1:U1", limit=0) == []
