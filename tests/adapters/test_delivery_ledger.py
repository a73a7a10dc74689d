"""Contract tests of the Slack delivery ledger and event claims, on a real SQLite file and a real PostgreSQL schema."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from adapters.slack.delivery.ledger import Delivery, DeliveryState
from adapters.store.backends import SqlConversationStore
from adapters.store.delivery_ledger import SqlDeliveryLedger
from adapters.store.schema import MIGRATIONS
from core.errors import NotFound
from core.models import RecordStatus
from tests.adapters import test_sql_store
from tests.adapters.test_sql_store import Backend, add, new_conversation

backend = test_sql_store.backend  # the same fixtures: a fresh SQLite file and PostgreSQL schema
store = test_sql_store.store
REPLY_TO = "C1:1700000000.000100"


@pytest.fixture
async def ledger(store: SqlConversationStore) -> AsyncIterator[SqlDeliveryLedger]:
    """The ledger on the store's database."""
    yield SqlDeliveryLedger(store.database)


async def _finished(
    store: SqlConversationStore, ledger: SqlDeliveryLedger, question: str, delivery: Delivery | None
) -> int:
    record, _ = await add(
        store, new_conversation(), question, reply_to=None if delivery is None else REPLY_TO
    )
    if delivery is not None:
        await ledger.save_delivery(record.id, delivery)
    await store.fail_record(record.id, status=RecordStatus.FAILED, reason="x")
    return record.id


async def test_a_record_with_a_reply_address_starts_pending_and_one_without_has_none(
    store: SqlConversationStore, ledger: SqlDeliveryLedger
) -> None:
    """A terminal record has no delivery; a chat record's delivery starts pending, due at once."""
    cli, _ = await add(store, new_conversation(), "cli question")
    chat, _ = await add(
        store, new_conversation(), "chat question", event_key="slack:T1:C1:1.1", reply_to=REPLY_TO
    )
    assert await ledger.read_delivery(cli.id) is None
    delivery = await ledger.read_delivery(chat.id)
    assert delivery is not None and delivery.state == DeliveryState.PENDING
    assert delivery.due == pytest.approx(chat.created_at) and delivery.reply_ref is None
    with pytest.raises(NotFound):
        await ledger.read_delivery(10**9)


async def test_find_record_by_event_key(store: SqlConversationStore) -> None:
    """A record is found by the event key it was stored under, and nothing by an unknown key."""
    record, _ = await add(store, new_conversation(), "q", event_key="slack:T1:C1:2.2", reply_to=REPLY_TO)
    assert await store.find_record("slack:T1:C1:2.2") == record
    assert await store.find_record("slack:T1:C1:9.9") is None


async def test_save_delivery_writes_the_delivery_without_touching_the_record(
    store: SqlConversationStore, ledger: SqlDeliveryLedger
) -> None:
    """save_delivery changes only delivery columns, reply_ref included (None clears it)."""
    record, _ = await add(store, new_conversation(), "q", reply_to=REPLY_TO)
    placed = Delivery(DeliveryState.PLACEHOLDER, attempts=1, due=50.0, reply_ref="C1:1.5")
    assert await ledger.save_delivery(record.id, placed) == placed
    assert placed.reply_ts == "1.5"
    assert await store.get_record(record.id) == record  # status, answer, updated_at untouched
    failed = Delivery(DeliveryState.PLACEHOLDER, attempts=2, error="ratelimited", parts=1, reply_ref="C1:1.5")
    assert await ledger.save_delivery(record.id, failed) == failed
    cleared = await ledger.save_delivery(record.id, Delivery(DeliveryState.PENDING))
    assert cleared.reply_ref is None and await ledger.read_delivery(record.id) == cleared
    with pytest.raises(NotFound):
        await ledger.save_delivery(10**9, Delivery())


async def test_only_finished_due_and_settled_deliveries_are_taken(
    store: SqlConversationStore, ledger: SqlDeliveryLedger
) -> None:
    """take_due_deliveries skips pending records, delivered ones, leases in the future and fresh changes."""
    now = time.time()
    still_answering, _ = await add(store, new_conversation(), "answering", reply_to=REPLY_TO)
    due = await _finished(
        store, ledger, "due", Delivery(DeliveryState.PLACEHOLDER, due=now - 5, reply_ref="C1:2")
    )
    later = await _finished(store, ledger, "later", Delivery(DeliveryState.PENDING, due=now + 60))
    delivered = await _finished(store, ledger, "delivered", Delivery(DeliveryState.DELIVERED, due=now - 5))
    cli = await _finished(store, ledger, "cli", None)
    assert await ledger.take_due_deliveries(now, lease=30, settle=60) == []  # all changed just now
    taken = await ledger.take_due_deliveries(now + 120, lease=30, settle=60)
    assert [item.record.id for item in taken] == [due, later]
    assert all(item.delivery.due == now + 150 for item in taken)
    assert taken[0].delivery.reply_ref == "C1:2" and taken[0].record.status == RecordStatus.FAILED
    assert await ledger.take_due_deliveries(now + 121, lease=30, settle=60) == []  # leased
    ids = {item.record.id for item in taken}
    assert still_answering.id not in ids and not {delivered, cli} & ids


async def test_two_takers_never_take_the_same_delivery(backend: Backend) -> None:
    """Two instances taking due deliveries at once split them: each record is leased to exactly one."""
    first, second = await backend.open(MIGRATIONS), await backend.open(MIGRATIONS)
    try:
        for index in range(30):
            record, _ = await add(first, new_conversation(), f"q{index}", reply_to=REPLY_TO)
            await first.fail_record(record.id, status=RecordStatus.FAILED, reason="x")
        now = time.time() + 120
        takers = (SqlDeliveryLedger(first.database), SqlDeliveryLedger(second.database))
        batches = await asyncio.gather(
            *(taker.take_due_deliveries(now, lease=30, settle=60, limit=10) for taker in (*takers, *takers))
        )
        ids = [item.record.id for batch in batches for item in batch]
        assert len(ids) == len(set(ids)) == 30
    finally:
        await first.close()
        await second.close()


async def test_event_claims_are_taken_once_found_and_pruned(
    store: SqlConversationStore, ledger: SqlDeliveryLedger
) -> None:
    """An event key is claimed once (with its record), found by key, and forgotten when pruned."""
    record, _ = await add(store, new_conversation(), "q", reply_to=REPLY_TO)
    assert await ledger.claim_event("event:Ev1", record_id=record.id)
    assert not await ledger.claim_event("event:Ev1")
    assert await ledger.claim_event("message:slack:T1:C1:3.3")
    claim = await ledger.find_event("event:Ev1")
    assert claim is not None and (claim.key, claim.record_id) == ("event:Ev1", record.id)
    assert (await ledger.find_event("message:slack:T1:C1:3.3") or claim).record_id is None
    assert await ledger.find_event("event:unknown") is None
    assert await ledger.prune_events(time.time() - 3600) == 0
    assert await ledger.prune_events(time.time() + 1) == 2
    assert await ledger.find_event("event:Ev1") is None


async def test_a_version_one_database_gets_delivery_columns_with_its_records_kept(backend: Backend) -> None:
    """Upgrading a database made by the first schema keeps its records, which have no delivery."""
    old = await backend.open(MIGRATIONS[:1])
    conversation = new_conversation()
    await old.close()
    await backend.query(  # what the first program wrote: the first schema's columns only
        f"INSERT INTO conversations (id, source, created_at) VALUES ('{conversation}', 'slack', 1)"
    )
    await backend.query(
        "INSERT INTO records (conversation_id, question, status, created_at, updated_at)"
        f" VALUES ('{conversation}', 'before the upgrade', 'pending', 1, 1) RETURNING id"
    )
    upgraded = await backend.open(MIGRATIONS)
    try:
        [kept] = await upgraded.list_records(conversation)
        assert kept.question == "before the upgrade" and kept.reply_to is None
        assert await SqlDeliveryLedger(upgraded.database).read_delivery(kept.id) is None
    finally:
        await upgraded.close()


async def test_one_record_can_be_taken_by_id(store: SqlConversationStore, ledger: SqlDeliveryLedger) -> None:
    """take_due_deliveries(record_id=...) leases only that record, and only when it is due."""
    ids = []
    for question in ("a", "b"):
        record, _ = await add(store, new_conversation(), question, reply_to=REPLY_TO)
        await store.fail_record(record.id, status=RecordStatus.INTERRUPTED, reason="x")
        ids.append(record.id)
    now = time.time()
    [taken] = await ledger.take_due_deliveries(now, lease=30, settle=0, record_id=ids[1])
    assert taken.record.id == ids[1]
    assert await ledger.take_due_deliveries(now, lease=30, settle=0, record_id=ids[1]) == []
    assert [item.record.id for item in await ledger.take_due_deliveries(now, lease=30, settle=0)] == [ids[0]]


async def test_the_start_note_and_the_resume_count_are_kept(
    store: SqlConversationStore, ledger: SqlDeliveryLedger
) -> None:
    """A noted start (its time, no reply yet) and the resume count are saved, read and taken back whole."""
    record, _ = await add(store, new_conversation(), "q", reply_to=REPLY_TO)
    noted = Delivery(DeliveryState.PENDING, attempts=1, due=10.0, starting_at=1_700_000_123.25, resumes=1)
    assert await ledger.save_delivery(record.id, noted) == noted
    read = await ledger.read_delivery(record.id)
    assert read == noted and read.reply_unknown
    await store.fail_record(record.id, status=RecordStatus.INTERRUPTED, reason="x")
    [taken] = await ledger.take_due_deliveries(time.time() + 120, lease=30, settle=60)
    assert (taken.delivery.starting_at, taken.delivery.resumes) == (1_700_000_123.25, 1)
    shown = await ledger.save_delivery(
        record.id, Delivery(DeliveryState.PLACEHOLDER, reply_ref="C1:9.9", resumes=1)
    )
    assert not shown.reply_unknown and shown.starting_at == 0.0


async def test_deliveries_from_before_the_start_note_have_none(backend: Backend) -> None:
    """A database at version 5 is upgraded in place: its deliveries are kept, with no start noted and no
    resume counted."""
    old = await backend.open(MIGRATIONS[:5])
    conversation = new_conversation()
    await old.close()
    await backend.query(
        f"INSERT INTO conversations (id, source, created_at) VALUES ('{conversation}', 'slack', 1)"
    )
    # Written as version 5's code wrote it (today's ledger writes columns that version lacks).
    await backend.query(
        "INSERT INTO records (conversation_id, question, status, created_at, updated_at, delivery,"
        f" delivery_attempts, reply_ref) VALUES ('{conversation}', 'old', 'interrupted', 1, 1, 'placeholder', 2,"
        " 'C1:5.5')"
    )
    upgraded = await backend.open(MIGRATIONS)
    try:
        [kept] = await upgraded.list_records(conversation)
        delivery = await SqlDeliveryLedger(upgraded.database).read_delivery(kept.id)
        assert delivery == Delivery(DeliveryState.PLACEHOLDER, attempts=2, reply_ref="C1:5.5")
        assert delivery.starting_at == 0.0 and delivery.resumes == 0
    finally:
        await upgraded.close()
