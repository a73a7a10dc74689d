"""Contract tests of delivery state and event claims, on a real SQLite file and a real PostgreSQL schema."""

from __future__ import annotations

import asyncio
import time

import pytest

from adapters.store.backends import SqlConversationStore
from adapters.store.schema import MIGRATIONS
from core.errors import NotFound
from core.models import Delivery, DeliveryState, RecordStatus
from tests.adapters import test_sql_store
from tests.adapters.test_sql_store import Backend, new_conversation

backend = test_sql_store.backend  # the same fixtures: a fresh SQLite file and PostgreSQL schema
store = test_sql_store.store

PENDING = Delivery(DeliveryState.PENDING, due=0.0)


async def test_a_record_without_a_chat_delivery_has_none(store: SqlConversationStore) -> None:
    """CLI records carry no delivery; a chat record starts with the state it was stored with."""
    conversation = await new_conversation(store)
    cli, _ = await store.add_question(conversation, "cli question")
    chat, _ = await store.add_question(
        conversation, "chat question", event_key="slack:T1:C1:1.1", delivery=Delivery(due=123.5)
    )
    assert cli.delivery is None
    assert chat.delivery == Delivery(DeliveryState.PENDING, due=123.5)
    assert await store.get_record(chat.id) == chat


async def test_find_record_by_event_key(store: SqlConversationStore) -> None:
    """A record is found by the event key it was stored under, and nothing by an unknown key."""
    conversation = await new_conversation(store)
    record, _ = await store.add_question(conversation, "q", event_key="slack:T1:C1:2.2", delivery=PENDING)
    assert await store.find_record("slack:T1:C1:2.2") == record
    assert await store.find_record("slack:T1:C1:9.9") is None


async def test_save_delivery_writes_state_and_reply_ref_without_touching_the_record(
    store: SqlConversationStore,
) -> None:
    """save_delivery changes only delivery columns (and reply_ref when given; "" clears it)."""
    conversation = await new_conversation(store)
    record, _ = await store.add_question(conversation, "q", delivery=PENDING)
    placed = await store.save_delivery(
        record.id, Delivery(DeliveryState.PLACEHOLDER, attempts=1, due=50.0), reply_ref="C1:1.5"
    )
    assert placed.reply_ref == "C1:1.5" and placed.delivery == Delivery(
        DeliveryState.PLACEHOLDER, attempts=1, due=50.0
    )
    assert (placed.status, placed.updated_at, placed.question) == (
        RecordStatus.PENDING,
        record.updated_at,
        "q",
    )
    failed = await store.save_delivery(
        record.id, Delivery(DeliveryState.PLACEHOLDER, attempts=2, error="ratelimited", parts=1)
    )
    assert failed.reply_ref == "C1:1.5" and failed.delivery is not None
    assert (failed.delivery.error, failed.delivery.parts) == ("ratelimited", 1)
    cleared = await store.save_delivery(record.id, Delivery(DeliveryState.PENDING), reply_ref="")
    assert cleared.reply_ref is None
    assert await store.get_record(record.id) == cleared
    with pytest.raises(NotFound):
        await store.save_delivery(10**9, PENDING)


async def test_only_finished_due_and_settled_deliveries_are_taken(store: SqlConversationStore) -> None:
    """take_due_deliveries skips pending records, delivered ones, leases in the future and fresh changes."""
    conversation = await new_conversation(store)
    now = time.time()

    async def finished(question: str, delivery: Delivery | None) -> int:
        record, _ = await store.add_question(conversation, question, delivery=delivery)
        await store.fail_record(record.id, status=RecordStatus.FAILED, reason="x")
        return record.id

    still_answering, _ = await store.add_question(conversation, "answering", delivery=PENDING)
    due = await finished("due", Delivery(DeliveryState.PLACEHOLDER, due=now - 5))
    later = await finished("later", Delivery(DeliveryState.PENDING, due=now + 60))
    delivered = await finished("delivered", Delivery(DeliveryState.DELIVERED, due=now - 5))
    cli = await finished("cli", None)
    assert await store.take_due_deliveries(now, lease=30, settle=60) == []  # all changed just now
    taken = await store.take_due_deliveries(now + 120, lease=30, settle=60)
    assert [r.id for r in taken] == [due, later]
    assert all(r.delivery is not None and r.delivery.due == now + 150 for r in taken)
    assert await store.take_due_deliveries(now + 121, lease=30, settle=60) == []  # leased
    assert still_answering.id not in {r.id for r in taken} and not {delivered, cli} & {r.id for r in taken}


async def test_two_takers_never_take_the_same_delivery(backend: Backend) -> None:
    """Two instances taking due deliveries at once split them: each record is leased to exactly one."""
    first, second = await backend.open(MIGRATIONS), await backend.open(MIGRATIONS)
    try:
        conversation = await new_conversation(first)
        for index in range(30):
            record, _ = await first.add_question(conversation, f"q{index}", delivery=PENDING)
            await first.fail_record(record.id, status=RecordStatus.FAILED, reason="x")
        now = time.time() + 120
        batches = await asyncio.gather(
            *(
                taker.take_due_deliveries(now, lease=30, settle=60, limit=10)
                for taker in (first, second, first, second)
            )
        )
        ids = [record.id for batch in batches for record in batch]
        assert len(ids) == len(set(ids)) == 30
    finally:
        await first.close()
        await second.close()


async def test_event_claims_are_taken_once_found_and_pruned(store: SqlConversationStore) -> None:
    """An event key is claimed once (with its record), found by key, and forgotten when pruned."""
    conversation = await new_conversation(store)
    record, _ = await store.add_question(conversation, "q", delivery=PENDING)
    assert await store.claim_event("event:Ev1", record_id=record.id)
    assert not await store.claim_event("event:Ev1")
    assert await store.claim_event("message:slack:T1:C1:3.3")
    claim = await store.find_event("event:Ev1")
    assert claim is not None and (claim.key, claim.record_id) == ("event:Ev1", record.id)
    assert (await store.find_event("message:slack:T1:C1:3.3") or claim).record_id is None
    assert await store.find_event("event:unknown") is None
    assert await store.prune_events(time.time() - 3600) == 0
    assert await store.prune_events(time.time() + 1) == 2
    assert await store.find_event("event:Ev1") is None


async def test_a_version_one_database_gets_delivery_columns_with_its_records_kept(backend: Backend) -> None:
    """Upgrading a database made by the first schema keeps its records, which have no delivery."""
    old = await backend.open(MIGRATIONS[:1])
    conversation = await new_conversation(old)
    await old.close()
    await backend.query(  # what the first program wrote: the first schema's columns only
        "INSERT INTO records (conversation_id, question, status, created_at, updated_at)"
        f" VALUES ('{conversation}', 'before the upgrade', 'pending', 1, 1) RETURNING id"
    )
    upgraded = await backend.open(MIGRATIONS)
    try:
        [kept] = await upgraded.list_records(conversation)
        assert kept.question == "before the upgrade" and kept.delivery is None
    finally:
        await upgraded.close()


async def test_one_record_can_be_taken_by_id(store: SqlConversationStore) -> None:
    """take_due_deliveries(record_id=...) leases only that record, and only when it is due."""
    conversation = await new_conversation(store)
    ids = []
    for question in ("a", "b"):
        record, _ = await store.add_question(conversation, question, delivery=PENDING)
        await store.fail_record(record.id, status=RecordStatus.INTERRUPTED, reason="x")
        ids.append(record.id)
    now = time.time()
    [taken] = await store.take_due_deliveries(now, lease=30, settle=0, record_id=ids[1])
    assert taken.id == ids[1]
    assert await store.take_due_deliveries(now, lease=30, settle=0, record_id=ids[1]) == []
    assert [r.id for r in await store.take_due_deliveries(now, lease=30, settle=0)] == [ids[0]]
