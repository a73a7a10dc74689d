"""The orphan sweep: a pending record is interrupted only after its lock was seen free for the grace period."""

from __future__ import annotations

import asyncio

from core.conversation.locks import LocalConversationLock
from core.conversation.orphans import OrphanSweeper
from core.models import ConversationKey, RecordStatus
from core.record import NO_DETAILS, Record
from tests.fakes import InMemoryConversationStore
from tests.stored import stored_question


async def _pending(store: InMemoryConversationStore, thread: str) -> Record:
    conversation = ConversationKey("slack", "T1", "C1", thread).as_id()
    return await stored_question(store, conversation, f"question in {thread}")


def _sweeper(
    store: InMemoryConversationStore, lock: LocalConversationLock, now: list[float]
) -> OrphanSweeper:
    return OrphanSweeper(store, lock, grace=60.0, probe=0.05, clock=lambda: now[0])


async def test_a_record_whose_lock_stays_free_for_the_grace_period_is_interrupted() -> None:
    """Free at the first look starts the clock; still free 60 s later, the record is marked interrupted."""
    store, lock, now = InMemoryConversationStore(), LocalConversationLock(), [1000.0]
    record = await _pending(store, "1.1")
    sweeper = _sweeper(store, lock, now)
    assert await sweeper.sweep() == []
    now[0] += 59
    assert await sweeper.sweep() == []
    now[0] += 1
    [interrupted] = await sweeper.sweep()
    assert interrupted.id == record.id and interrupted.status == RecordStatus.INTERRUPTED
    assert store.records[record.id].status == RecordStatus.INTERRUPTED


async def test_a_record_being_answered_or_queued_is_never_interrupted() -> None:
    """While someone holds the conversation's lock, its pending records are left alone however old."""
    store, lock, now = InMemoryConversationStore(), LocalConversationLock(), [1000.0]
    answering = await _pending(store, "2.1")
    queued = await _pending(store, "2.1")
    sweeper = _sweeper(store, lock, now)
    held, release = asyncio.Event(), asyncio.Event()

    async def answer() -> None:
        async with lock.hold(answering.conversation_id):
            held.set()
            await release.wait()

    task = asyncio.create_task(answer())
    await held.wait()
    for _ in range(5):
        assert await sweeper.sweep() == []
        now[0] += 120
    release.set()
    await task
    assert {store.records[r.id].status for r in (answering, queued)} == {RecordStatus.PENDING}


async def test_a_lock_seen_held_between_two_looks_starts_the_clock_again() -> None:
    """Free, then held (a hand-over to a queued answer), then free again: the grace period restarts."""
    store, lock, now = InMemoryConversationStore(), LocalConversationLock(), [1000.0]
    record = await _pending(store, "3.1")
    sweeper = _sweeper(store, lock, now)
    await sweeper.sweep()  # free: clock starts
    now[0] += 30
    async with lock.hold(record.conversation_id):
        assert await sweeper.sweep() == []  # held: clock reset
    now[0] += 40
    assert await sweeper.sweep() == []  # free again, but only just
    now[0] += 60
    assert [r.id for r in await sweeper.sweep()] == [record.id]


async def test_a_record_that_moved_meanwhile_is_not_interrupted() -> None:
    """A record answered (or reset) between the look and the marking is left as it is."""
    store, lock, now = InMemoryConversationStore(), LocalConversationLock(), [1000.0]
    record = await _pending(store, "4.1")
    sweeper = _sweeper(store, lock, now)
    await sweeper.sweep()
    await store.complete_record(record.id, answer="done", rewritten=None, details=NO_DETAILS)
    now[0] += 61
    assert await sweeper.sweep() == []
    assert store.records[record.id].status == RecordStatus.ANSWERED
